// PyTorch Execution Trace JSON. One collective is three nested nodes (c10d::<op> ->
// record_param_comms -> nccl:<coll>); record_param_comms alone says everything replay needs
// (collective, tensor, seq, group, root/peer, split sizes), so the reader takes those and skips
// the other two (reading both would count each collective twice). Waits are skipped: a replayed
// op is complete when its call returns.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/Error.h"
#include "replay/ReaderSupport.h"
#include "replay/Readers.h"

namespace cb::replay {
namespace {

using nlohmann::json;

struct EtNode {
  int64_t id = 0;
  const json* values = nullptr;  // inputs' values
  const json* types = nullptr;
  const json* outValues = nullptr;
  const json* attrs = nullptr;  // 1.0.2+: [{name, type, value}]
};

const json* attrOf(const EtNode& n, std::string_view name) {
  if (!n.attrs || !n.attrs->is_array()) return nullptr;
  for (const auto& a : *n.attrs) {
    if (a.is_object() && a.contains("name") && a["name"] == name && a.contains("value")) {
      return &a["value"];
    }
  }
  return nullptr;
}

EtNode nodeOf(const json& n, bool flat) {
  EtNode e;
  if (n.contains("id") && n["id"].is_number_integer()) e.id = n["id"].get<int64_t>();
  if (flat) {
    // 1.0.1: inputs, input_types, outputs are top-level keys.
    if (n.contains("inputs")) e.values = &n["inputs"];
    if (n.contains("input_types")) e.types = &n["input_types"];
    if (n.contains("outputs")) e.outValues = &n["outputs"];
  } else {
    if (n.contains("inputs") && n["inputs"].is_object()) {
      const auto& in = n["inputs"];
      if (in.contains("values")) e.values = &in["values"];
      if (in.contains("types")) e.types = &in["types"];
    }
    if (n.contains("outputs") && n["outputs"].is_object() && n["outputs"].contains("values")) {
      e.outValues = &n["outputs"]["values"];
    }
    if (n.contains("attrs")) e.attrs = &n["attrs"];
  }
  return e;
}

std::string str(const json* v) { return v && v->is_string() ? v->get<std::string>() : ""; }

// The op's group: 1.1.x names it ([pg_name, pg_desc] or the pg_name attr), 1.0.2 gives the
// backend id of its init entry, 1.0.1 a per-process pointer (world).
std::string groupOf(const EtNode& e, const json& pg, bool flat, const RankTrace& out) {
  std::string group;
  if (const json* a = attrOf(e, "pg_name"); a && a->is_string()) {
    group = a->get<std::string>();
  } else if (pg.is_array() && !pg.empty() && pg[0].is_string()) {
    group = pg[0].get<std::string>();
  } else if (!flat && pg.is_number_integer()) {
    const std::string id = pg.dump();
    for (const auto& [gname, g] : out.groups) {
      if (g.desc == id) group = gname;
    }
  }
  return group;
}

// dtype: the 1.1 attr, else the tensor's type string, else the tensor's element size; it must
// agree with that size.
DataType dataTypeOf(const std::string& name, const std::string& where, const EtNode& e,
                    bool hasTensor, uint64_t elemBytes) {
  std::optional<DataType> dt;
  if (const json* a = attrOf(e, "dtype"); a && a->is_string())
    dt = dataTypeFromTorch(a->get<std::string>());
  if (!dt && e.types && e.types->is_array() && !e.types->empty() && (*e.types)[0].is_string()) {
    dt = dataTypeFromTorch((*e.types)[0].get<std::string>());
  }
  if (!dt && hasTensor) {
    dt = elemBytes == 8   ? DataType::kInt64
         : elemBytes == 4 ? DataType::kFloat
         : elemBytes == 2 ? DataType::kBFloat16
                          : DataType::kUint8;
  }
  const DataType t = dt.value_or(DataType::kUint8);
  if (hasTensor && elemBytes != dataTypeSize(t)) {
    traceError(name, where,
               fmt::format("{}-byte elements but type {}", elemBytes, dataTypeName(t)));
  }
  return t;
}

// all_to_all(v): split sizes (the attrs, else inputs i+4 and i+5) make it an all_to_allv.
void setSplits(const std::string& name, const std::string& where, const EtNode& e, const json& v,
               size_t i, uint64_t numel, CommOp& op) {
  const json* ia = attrOf(e, "in_split_size");
  const json* oa = attrOf(e, "out_split_size");
  auto in = splitList(name, where, ia ? *ia : v[i + 4]);
  auto outS = splitList(name, where, oa ? *oa : v[i + 5]);
  if (!in.empty() || !outS.empty()) {
    // Splits count dim-0 rows; a row is numel / rows elements.
    uint64_t rows = 0;
    for (auto s : in) rows += s;
    if (in.empty() || rows == 0 || numel % rows != 0) {
      traceError(name, where, "split sizes do not divide the tensor");
    }
    const uint64_t row = numel / rows;
    for (auto& s : in) s *= row;
    for (auto& s : outS) s *= row;
    if (outS.empty()) traceError(name, where, "input splits without output splits");
    op.kind = OpKind::kAllToAllV;
    op.inSplits = std::move(in);
    op.outSplits = std::move(outS);
  } else {
    op.kind = OpKind::kAllToAll;
  }
}

// The op of record_param_comms node `id`; nullopt for what replay skips (waits, inits).
// previousP2p: whether the op before was a send or receive (consecutive ones post together).
std::optional<CommOp> commOp(const std::string& name, int64_t id, const json& node, bool flat,
                             const RankTrace& out, bool& previousP2p) {
  const EtNode e = nodeOf(node, flat);
  const std::string where = fmt::format("node {}", id);
  if (!e.values || !e.values->is_array()) traceError(name, where, "no inputs");
  const json& v = *e.values;
  // An optional tensor first; then seq, group, rank, collective name, in/out splits, ...
  size_t i = 0;
  uint64_t numel = 0, elemBytes = 0;
  const bool hasTensor = !v.empty() && v[0].is_array() && tensorElements(v[0], numel, elemBytes);
  if (!v.empty() && v[0].is_array() && !hasTensor) {
    // param's newer form: [seq, isP2P] in the tensor's slot.
    i = 0;
  } else if (hasTensor) {
    i = 1;
  }
  if (v.size() < i + 6) traceError(name, where, "record_param_comms with too few inputs");
  std::string coll = str(attrOf(e, "collective_name"));
  if (coll.empty()) coll = str(&v[i + 3]);
  if (coll.empty()) traceError(name, where, "no collective name");
  if (coll == "wait" || coll == "init" || coll == "coalesced" || coll == "barrier_wait") {
    return std::nullopt;
  }
  OpKind kind;
  if (!parseOpKind(coll, kind)) {
    traceError(name, where, fmt::format("collective '{}' is not replayed", printable(coll)));
  }
  CommOp op;
  op.kind = kind;
  op.node = where;
  const json& seq = v[i];
  if (seq.is_number_integer())
    op.seq = seq.get<int64_t>();
  else if (seq.is_array() && !seq.empty() && seq[0].is_number_integer())
    op.seq = seq[0];
  op.group = groupOf(e, v[i + 1], flat, out);
  if (op.group == "0") op.group.clear();  // the default group: every rank
  if (!op.group.empty() && !out.groups.count(op.group)) {
    traceError(name, where, fmt::format("group '{}' was never declared", printable(op.group)));
  }
  const json& rank = v[i + 2];
  if (kind != OpKind::kBarrier && !hasTensor) traceError(name, where, "no tensor");
  if (kind == OpKind::kBroadcast || kind == OpKind::kReduce) {
    op.root = rank.is_number_integer() ? rank.get<int>() : 0;
    if (op.root < 0) traceError(name, where, "negative root");
  }
  if (isPointToPoint(kind)) {
    if (!rank.is_number_integer() || rank.get<int>() < 0) traceError(name, where, "no peer");
    op.peer = rank.get<int>();
    op.withPrevious = previousP2p;
  }
  previousP2p = isPointToPoint(kind);
  op.dtype = dataTypeOf(name, where, e, hasTensor, elemBytes);
  op.count = numel;
  if (kind == OpKind::kAllToAll || kind == OpKind::kAllToAllV) {
    setSplits(name, where, e, v, i, numel, op);
  }
  return op;
}

// The process groups (into out) and the record_param_comms nodes, by id.
std::vector<std::pair<int64_t, const json*>> readNodes(const std::string& name, const json& doc,
                                                       bool flat, RankTrace& out) {
  std::vector<std::pair<int64_t, const json*>> comms;
  for (const auto& n : doc["nodes"]) {
    if (!n.is_object() || !n.contains("name") || !n["name"].is_string()) {
      traceError(name, "", "a node without a name");
    }
    const std::string& nm = n["name"].get_ref<const std::string&>();
    if (!n.contains("id") || !n["id"].is_number_integer()) {
      traceError(name, fmt::format("node '{}'", printable(nm.substr(0, 60))), "no integer id");
    }
    if (nm == "## process_group:init ##") {
      EtNode e = nodeOf(n, flat);
      if (!e.values || !e.values->is_array() || e.values->empty() || !(*e.values)[0].is_string()) {
        traceError(name, fmt::format("node {}", e.id), "process_group:init without its list");
      }
      parseProcessGroups(name, fmt::format("node {}", e.id), (*e.values)[0].get<std::string>(),
                         out);
    } else if (nm == "record_param_comms") {
      comms.emplace_back(n["id"].get<int64_t>(), &n);
    }
  }
  return comms;
}

}  // namespace

RankTrace readPytorchEt(const std::string& name, std::string_view text) {
  json doc = parseTraceJson(name, text, "nodes", "PyTorch execution trace");
  const std::string schema = doc.contains("schema") ? str(&doc["schema"]) : "";
  const bool flat = startsWith(schema, "1.0.1");
  if (!flat && !startsWith(schema, "1.0.2") && !startsWith(schema, "1.1.")) {
    traceError(name, "",
               fmt::format("schema '{}' is not 1.0.1, 1.0.2 or 1.1.x", printable(schema)));
  }
  RankTrace out;
  out.file = name;
  out.format = "pytorch-et " + schema;
  auto comms = readNodes(name, doc, flat, out);
  // Ids follow execution order; the nodes list does not (children may come first).
  std::stable_sort(comms.begin(), comms.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  bool previousP2p = false;
  for (const auto& [id, node] : comms) {
    if (auto op = commOp(name, id, *node, flat, out, previousP2p))
      out.ops.push_back(std::move(*op));
  }
  if (auto g = out.groups.find("0"); g != out.groups.end()) out.recordedWorldSize = g->second.size;
  return out;
}

}  // namespace cb::replay
