// Kineto (Chrome trace) JSON. Two styles:
//  - new (2024+): each NCCL kernel carries its collective's arguments (Collective name, In msg
//    nelems, dtype, split sizes, Process Group Name/Ranks): one op per such kernel;
//  - old (2023): kernels carry nothing but a correlation id. The op is the `nccl:<coll>`
//    user_annotation that encloses, on the same thread, the cudaLaunchKernel with the kernel's
//    correlation; its Input Dims/Input type give the size. all_to_all runs as SendRecv kernels
//    and the annotation has no split sizes: an all_to_allv reads as an even all_to_all here.
// Durations are the kernels' (summed when one op launches several); the gap before an op is the
// idle time on the GPU since the previous op's kernels ended.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/Error.h"
#include "replay/ReaderSupport.h"
#include "replay/Readers.h"

namespace cb::replay {
namespace {

using nlohmann::json;

double num(const json& e, const char* key) {
  if (!e.contains(key)) return -1;
  const json& v = e[key];
  if (v.is_number()) return v.get<double>();
  return -1;
}

bool isNcclKernel(const json& e) {
  if (!e.contains("cat") || e["cat"] != "kernel" || !e.contains("name") || !e["name"].is_string()) {
    return false;
  }
  const std::string& n = e["name"].get_ref<const std::string&>();
  return startsWith(n, "ncclKernel") || startsWith(n, "ncclDevKernel");
}

const json* arg(const json& e, const char* key) {
  if (!e.contains("args") || !e["args"].is_object() || !e["args"].contains(key)) return nullptr;
  return &e["args"][key];
}

struct Span {
  double ts = 0, end = 0;
  double kernelUs = 0;
  double kernelStart = -1, kernelEnd = -1;
  CommOp op;
};

// The event named in errors: its name, and its External id when it has one.
std::string where(const json& e) {
  const json* ext = arg(e, "External id");
  return fmt::format("event '{}'{}", printable(e.value("name", std::string("?")).substr(0, 50)),
                     ext ? " external id " + ext->dump() : "");
}

// distributedInfo: the recorded rank, world size and process groups.
void readDistributedInfo(const std::string& name, const json& doc, RankTrace& out) {
  if (!doc.contains("distributedInfo") || !doc["distributedInfo"].is_object()) return;
  const json& d = doc["distributedInfo"];
  if (d.contains("rank") && d["rank"].is_number_integer()) out.recordedRank = d["rank"];
  if (d.contains("world_size") && d["world_size"].is_number_integer()) {
    out.recordedWorldSize = d["world_size"];
  }
  if (d.contains("pg_config") && d["pg_config"].is_array()) {
    parseProcessGroups(name, "distributedInfo.pg_config", d["pg_config"].dump(), out);
    for (auto& [gname, g] : out.groups) {
      (void)gname;
      if (g.size <= 0) g.size = static_cast<int>(g.ranks.size());
    }
  }
}

// New style: the op of an NCCL kernel that names its collective (coll), timed by the kernel;
// a group it names that distributedInfo did not declare is added to out.groups.
Span kernelSpan(const std::string& name, const json& k, const json& coll, RankTrace& out) {
  Span s;
  s.ts = num(k, "ts");
  s.end = s.ts + num(k, "dur");
  s.kernelUs = num(k, "dur");
  s.kernelStart = s.ts;
  s.kernelEnd = s.end;
  const std::string w = where(k);
  OpKind kind;
  if (!coll.is_string() || !parseOpKind(coll.get<std::string>(), kind)) {
    traceError(name, w, fmt::format("collective {} is not replayed", coll.dump()));
  }
  s.op.kind = kind;
  s.op.node = w;
  const json* dt = arg(k, "dtype");
  auto t = dt && dt->is_string() ? dataTypeFromTorch(dt->get<std::string>()) : std::nullopt;
  if (!t) traceError(name, w, "no dtype we can hold");
  s.op.dtype = *t;
  const json* n = arg(k, "In msg nelems");
  if (!n || !n->is_number_integer() || n->get<int64_t>() < 0) {
    traceError(name, w, "no In msg nelems");
  }
  s.op.count = n->get<uint64_t>();
  if (const json* g = arg(k, "Process Group Name"); g && g->is_string() && *g != "0") {
    s.op.group = g->get<std::string>();
    if (!out.groups.count(s.op.group)) {
      ProcessGroup pg;
      pg.name = s.op.group;
      if (const json* r = arg(k, "Process Group Ranks"); r && r->is_string()) {
        for (auto x : splitList(name, w, *r)) pg.ranks.push_back(static_cast<int>(x));
      }
      pg.size = static_cast<int>(pg.ranks.size());
      out.groups[pg.name] = pg;
    }
  }
  if (kind == OpKind::kAllToAll || kind == OpKind::kAllToAllV) {
    const json* in = arg(k, "In split size");
    const json* os = arg(k, "Out split size");
    auto a = in ? splitList(name, w, *in) : std::vector<uint64_t>{};
    auto b = os ? splitList(name, w, *os) : std::vector<uint64_t>{};
    if (!a.empty()) {
      uint64_t rows = 0;
      for (auto x : a) rows += x;
      if (rows == 0 || s.op.count % rows != 0 || b.empty()) {
        traceError(name, w, "split sizes do not divide the message");
      }
      for (auto& x : a) x *= s.op.count / rows;
      for (auto& x : b) x *= s.op.count / rows;
      s.op.kind = OpKind::kAllToAllV;
      s.op.inSplits = std::move(a);
      s.op.outSplits = std::move(b);
    } else {
      s.op.kind = OpKind::kAllToAll;
    }
  }
  if (kind == OpKind::kBroadcast || kind == OpKind::kReduce) s.op.root = 0;
  return s;
}

// Old style: the op of an nccl:<coll> annotation (a), its size from Input Dims/Input type; no
// kernel time yet (addKernelTimes).
Span annotationSpan(const std::string& name, const json& a) {
  Span s;
  s.ts = num(a, "ts");
  s.end = s.ts + std::max(0.0, num(a, "dur"));
  const std::string w = where(a);
  if (s.ts < 0) traceError(name, w, "no timestamp");
  OpKind kind;
  const std::string coll = a.at("name").get<std::string>().substr(5);
  if (!parseOpKind(coll, kind)) {
    traceError(name, w, fmt::format("collective '{}' is not replayed", printable(coll)));
  }
  s.op.kind = kind;
  s.op.node = w;
  const json* dims = arg(a, "Input Dims");
  const json* types = arg(a, "Input type");
  if (kind != OpKind::kBarrier) {
    if (!dims || !dims->is_array() || dims->empty() || !(*dims)[0].is_array()) {
      traceError(name, w, "no Input Dims");
    }
    uint64_t count = 1;
    for (const auto& d : (*dims)[0]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) traceError(name, w, "bad Input Dims");
      count *= d.get<uint64_t>();
    }
    s.op.count = count;
    std::optional<DataType> t;
    if (types && types->is_array() && !types->empty() && (*types)[0].is_string()) {
      t = dataTypeFromTorch((*types)[0].get<std::string>());
    }
    if (!t) traceError(name, w, "no Input type we can hold");
    s.op.dtype = *t;
  }
  if (kind == OpKind::kBroadcast || kind == OpKind::kReduce) s.op.root = 0;
  return s;
}

// Old style: each kernel's time goes to the span (spans[i] of notes[i]) whose annotation
// encloses, on the same thread, the launch of the kernel's correlation.
void addKernelTimes(const std::vector<const json*>& kernels,
                    const std::map<int64_t, const json*>& launches,
                    const std::vector<const json*>& notes, std::vector<Span>& spans) {
  for (const json* k : kernels) {
    const json* c = arg(*k, "correlation");
    if (!c || !c->is_number_integer()) continue;
    auto l = launches.find(c->get<int64_t>());
    if (l == launches.end()) continue;  // sampled traces drop some launches
    const double at = num(*l->second, "ts");
    const json& tid = (*l->second).contains("tid") ? (*l->second)["tid"] : json();
    for (size_t i = 0; i < spans.size(); ++i) {
      const json& a = *notes[i];
      if (a.contains("tid") && a["tid"] == tid && at >= spans[i].ts && at <= spans[i].end) {
        const double ks = num(*k, "ts"), kd = std::max(0.0, num(*k, "dur"));
        spans[i].kernelUs = std::max(0.0, spans[i].kernelUs) + kd;
        if (spans[i].kernelStart < 0 || ks < spans[i].kernelStart) spans[i].kernelStart = ks;
        spans[i].kernelEnd = std::max(spans[i].kernelEnd, ks + kd);
        break;
      }
    }
  }
}

// Old style: annotation <- launch (same thread, inside the annotation) <- kernel correlation.
std::vector<Span> annotatedSpans(const std::string& name, const json& events,
                                 const std::vector<const json*>& kernels) {
  std::map<int64_t, const json*> launches;  // correlation -> cuda_runtime event
  for (const auto& e : events) {
    if (!e.is_object() || !e.contains("cat") || e["cat"] != "cuda_runtime") continue;
    const json* c = arg(e, "correlation");
    if (c && c->is_number_integer()) launches[c->get<int64_t>()] = &e;
  }
  std::vector<const json*> notes;
  for (const auto& e : events) {
    if (!e.is_object() || !e.contains("cat") || e["cat"] != "user_annotation") continue;
    if (!e.contains("name") || !e["name"].is_string()) continue;
    const std::string& n = e["name"].get_ref<const std::string&>();
    if (startsWith(n, "nccl:")) notes.push_back(&e);
  }
  std::vector<Span> spans;
  for (const json* a : notes) spans.push_back(annotationSpan(name, *a));
  addKernelTimes(kernels, launches, notes, spans);
  return spans;
}

}  // namespace

RankTrace readKineto(const std::string& name, std::string_view text) {
  json doc = parseTraceJson(name, text, "traceEvents", "Kineto trace");
  RankTrace out;
  out.file = name;
  out.format = "kineto";
  readDistributedInfo(name, doc, out);
  const json& events = doc["traceEvents"];
  std::vector<const json*> kernels;
  bool newStyle = false;
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    if (isNcclKernel(e)) {
      kernels.push_back(&e);
      if (arg(e, "Collective name")) newStyle = true;
    }
  }
  std::vector<Span> spans;
  if (newStyle) {
    for (const json* k : kernels) {
      if (const json* coll = arg(*k, "Collective name")) {
        spans.push_back(kernelSpan(name, *k, *coll, out));
      }
    }
  } else {
    spans = annotatedSpans(name, events, kernels);
  }
  // In time order; the gap before an op is the GPU's idle time since the previous op's kernels.
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span& a, const Span& b) { return a.ts < b.ts; });
  double lastEnd = -1;
  for (auto& s : spans) {
    if (s.kernelStart >= 0) {
      s.op.recordedUs = s.kernelUs;
      if (lastEnd >= 0) s.op.gapUs = std::max(0.0, s.kernelStart - lastEnd);
      lastEnd = s.kernelEnd;
    }
    out.ops.push_back(std::move(s.op));
  }
  return out;
}

void attachDurations(RankTrace& et, const RankTrace& kineto) {
  if (et.ops.size() != kineto.ops.size()) {
    traceError(kineto.file, "",
               fmt::format("{} collectives, but {} has {}: not the same job and rank",
                           kineto.ops.size(), et.file, et.ops.size()));
  }
  for (size_t i = 0; i < et.ops.size(); ++i) {
    CommOp& a = et.ops[i];
    const CommOp& b = kineto.ops[i];
    auto family = [](OpKind k) { return k == OpKind::kAllToAllV ? OpKind::kAllToAll : k; };
    if (family(a.kind) != family(b.kind) || a.count != b.count) {
      traceError(
          kineto.file, b.node,
          fmt::format("op {} is {} of {} elements, but {} {} is {} of {}", i, opKindName(b.kind),
                      b.count, et.file, a.node, opKindName(a.kind), a.count));
    }
    a.recordedUs = b.recordedUs;
    a.gapUs = b.gapUs;
  }
  if (kineto.recordedWorldSize > 0) et.recordedWorldSize = kineto.recordedWorldSize;
  if (kineto.recordedRank >= 0) et.recordedRank = kineto.recordedRank;
}

}  // namespace cb::replay
