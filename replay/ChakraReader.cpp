// Chakra .et reader. A hand-written decoder of the few published field numbers
// (schema/protobuf/et_def.proto, package ChakraProtoMsg) instead of libprotobuf with a schema:
// the stream is a varint length + one message per record, and we read five fields of Node and
// six kinds of attribute; a generated parser would add protoc to the build and a library whose
// version must match the generated code, for ~200 lines of wire decoding that also lets every
// malformed byte become a one-line error naming the record (a fuzz test feeds it mutated files).
#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/Error.h"
#include "replay/PyLiteral.h"
#include "replay/ReaderSupport.h"
#include "replay/Readers.h"

namespace cb::replay {
namespace {

enum NodeType : int { kMetadata = 1, kComp = 4, kSend = 5, kRecv = 6, kColl = 7 };

// Chakra's CollectiveCommType.
std::optional<OpKind> collectiveOf(int64_t t) {
  switch (t) {
    case 0: return OpKind::kAllReduce;
    case 1: return OpKind::kReduce;
    case 2: return OpKind::kAllGather;
    case 5: return OpKind::kBroadcast;
    case 6: return OpKind::kAllToAll;
    case 7:
    case 8: return OpKind::kReduceScatter;
    case 9: return OpKind::kBarrier;
    default: return std::nullopt;  // 3 GATHER, 4 SCATTER: no variant replays them
  }
}

struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  bool done() const { return p >= end; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      const uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;  // more than 10 bytes
    return 0;
  }
  // A length-delimited field's bytes.
  std::string_view bytes() {
    const uint64_t n = varint();
    if (!ok || n > uint64_t(end - p)) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
  // Skips a field of wire type `w`.
  void skip(int w) {
    switch (w) {
      case 0: varint(); break;
      case 1: advance(8); break;
      case 2: bytes(); break;
      case 5: advance(4); break;
      default: ok = false;  // groups (3, 4) are not in proto3; anything else is corruption
    }
  }
  void advance(size_t n) {
    if (n > size_t(end - p)) {
      ok = false;
      return;
    }
    p += n;
  }
};

Cursor cursorOf(std::string_view s) {
  const auto* b = reinterpret_cast<const uint8_t*>(s.data());
  return Cursor{b, b + s.size()};
}

struct Attr {
  std::string name;
  std::optional<int64_t> integer;  // int32/int64/uint32/uint64/sint (zigzag) / bool
  std::optional<std::string> text;
};

int64_t zigzag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

// Calls take(field, wire, cursor) for every field of a message; a field it does not take (false)
// is skipped. False when the message is malformed or take failed.
template <class Take>
bool forEachField(std::string_view msg, Take take) {
  Cursor c = cursorOf(msg);
  while (c.ok && !c.done()) {
    const uint64_t key = c.varint();
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    if (!c.ok) break;
    if (!take(field, wire, c)) c.skip(wire);
  }
  return c.ok;
}

bool decodeAttr(std::string_view msg, Attr& a) {
  return forEachField(msg, [&](int field, int wire, Cursor& c) {
    if (field == 1 && wire == 2) {
      a.name = std::string(c.bytes());
    } else if ((field == 7 || field == 9 || field == 11 || field == 13 || field == 27) &&
               wire == 0) {
      a.integer = static_cast<int64_t>(c.varint());  // negatives: 10-byte two's complement
      if (field == 7) a.integer = static_cast<int32_t>(*a.integer);
    } else if ((field == 15 || field == 17) && wire == 0) {
      a.integer = zigzag(c.varint());
    } else if (field == 29 && wire == 2) {
      a.text = std::string(c.bytes());
    } else {
      return false;
    }
    return true;
  });
}

struct Node {
  uint64_t id = 0;  // proto3 leaves id 0 out
  std::string name;
  int type = 0;
  uint64_t durationUs = 0;
  std::string inValues, inTypes;
  std::vector<Attr> attrs;

  const Attr* attr(std::string_view n) const {
    for (const auto& a : attrs) {
      if (a.name == n) return &a;
    }
    return nullptr;
  }
};

bool decodeIo(std::string_view msg, Node& n) {
  return forEachField(msg, [&](int field, int wire, Cursor& c) {
    if (wire != 2 || (field != 1 && field != 3)) return false;
    (field == 1 ? n.inValues : n.inTypes) = std::string(c.bytes());
    return true;
  });
}

bool decodeNode(std::string_view msg, Node& n) {
  // Deps (packed or not), timestamps, outputs and unknown fields are skipped.
  return forEachField(msg, [&](int field, int wire, Cursor& c) {
    if (wire == 0 && (field == 1 || field == 3 || field == 7)) {
      const uint64_t v = c.varint();
      if (field == 1) n.id = v;
      if (field == 3) n.type = static_cast<int>(v);
      if (field == 7) n.durationUs = v;
    } else if (field == 2 && wire == 2) {
      n.name = std::string(c.bytes());
    } else if (field == 8 && wire == 2) {
      if (!decodeIo(c.bytes(), n)) c.ok = false;
    } else if (field == 10 && wire == 2) {
      Attr a;
      std::string_view b = c.bytes();
      if (!c.ok || !decodeAttr(b, a)) c.ok = false;
      n.attrs.push_back(std::move(a));
    } else {
      return false;
    }
    return true;
  });
}

// The element type of a comm node: from its input types (a Python literal such as
// "['Tensor(float)']"), else the NCCL kernel name's suffix, else unknown.
std::optional<DataType> nodeType(const Node& n) {
  if (!n.inTypes.empty()) {
    try {
      auto t = parsePythonLiteral(n.inTypes);
      if (t.is_array() && !t.empty() && t[0].is_string()) {
        if (auto d = dataTypeFromTorch(t[0].get<std::string>())) return d;
      }
    } catch (const std::invalid_argument&) {
      // Not a literal we read: fall back on the kernel name.
    }
  }
  const auto paren = n.name.find('(');
  const std::string base = n.name.substr(0, paren);
  const auto us = base.rfind('_');
  if (startsWith(base, "ncclKernel_") && us != std::string::npos) {
    // ncclKernel_AllReduce_RING_LL_Sum_float; int8_t kernels move bytes (broadcast), not a type.
    std::string t = base.substr(us + 1);
    if (t != "t") return dataTypeFromTorch(t);
  }
  return std::nullopt;
}

void groupsFromMetadata(const std::string& file, const Node& n, RankTrace& out) {
  // ASTRA-sim reads `## process_group:init ##` from a METADATA_NODE's inputs.values.
  if (n.inValues.empty()) return;
  std::string payload = n.inValues;
  try {
    auto lit = parsePythonLiteral(n.inValues);
    if (lit.is_array() && !lit.empty() && lit[0].is_string()) payload = lit[0].get<std::string>();
  } catch (const std::invalid_argument&) {
    if (payload.size() > 4) payload = payload.substr(2, payload.size() - 4);  // ASTRA-sim's cut
  }
  parseProcessGroups(file, fmt::format("node {}", n.id), payload, out);
}

// Record 0, GlobalMetadata: 1 version, 2 attrs (schema); nothing replay needs beyond a sane
// record.
void checkGlobalMetadata(const std::string& name, std::string_view msg) {
  const bool ok = forEachField(msg, [](int field, int wire, Cursor& m) {
    if (field != 2 || wire != 2) return false;
    Attr unused;
    if (!decodeAttr(m.bytes(), unused)) m.ok = false;
    return true;
  });
  if (!ok) traceError(name, "record 0 (GlobalMetadata)", "not a Chakra metadata record");
}

// op's kind (and a send's or receive's peer) from a COMM_COLL, SEND or RECV node; false for a
// collective node without comm_type, which is not replayed.
bool setKind(const std::string& name, const std::string& where, const Node& n, bool previousP2p,
             CommOp& op) {
  if (n.type == kColl) {
    const Attr* t = n.attr("comm_type");
    // The host-side c10d:: twins of a collective carry no comm attributes: the GPU node is
    // the one op to replay.
    if (!t) return false;
    if (!t->integer) traceError(name, where, "comm_type is not an integer");
    auto k = collectiveOf(*t->integer);
    if (!k) {
      traceError(name, where,
                 fmt::format("collective type {} (gather/scatter or unknown) is not replayed",
                             *t->integer));
    }
    op.kind = *k;
  } else {
    // comm_type on SEND/RECV nodes holds the node type (5/6) in ASTRA-sim's files: ignored.
    op.kind = n.type == kSend ? OpKind::kSend : OpKind::kRecv;
    const Attr* peer = n.attr(n.type == kSend ? "comm_dst" : "comm_src");
    if (!peer || !peer->integer || *peer->integer < 0) {
      traceError(name, where, n.type == kSend ? "send without comm_dst" : "recv without comm_src");
    }
    op.peer = static_cast<int>(*peer->integer);
    op.withPrevious = previousP2p;
  }
  return true;
}

// op's size (comm_size bytes), group and element type.
void setSize(const std::string& name, const std::string& where, const Node& n, CommOp& op) {
  int64_t size = 0;
  if (op.kind != OpKind::kBarrier) {
    const Attr* s = n.attr("comm_size");
    if (!s || !s->integer || *s->integer <= 0) {
      traceError(name, where, "comm_size missing or not a positive byte count");
    }
    size = *s->integer;
  }
  if (const Attr* pg = n.attr("pg_name"); pg && pg->text && *pg->text != "0") op.group = *pg->text;
  // No dtype in the schema: the node's input types or kernel name, else float when the bytes
  // allow it (ASTRA-sim's sizes do), else bytes.
  auto dt = nodeType(n);
  if (!dt || size % static_cast<int64_t>(dataTypeSize(*dt)) != 0) {
    dt = size % 4 == 0 ? DataType::kFloat : DataType::kUint8;
  }
  op.dtype = *dt;
  op.count = static_cast<uint64_t>(size) / dataTypeSize(op.dtype);
}

}  // namespace

RankTrace readChakra(const std::string& name, std::string_view bytes) {
  RankTrace out;
  out.file = name;
  out.format = "chakra";
  Cursor c = cursorOf(bytes);
  size_t record = 0;
  double gap = 0;
  bool previousP2p = false;
  while (!c.done()) {
    std::string_view msg = c.bytes();
    if (!c.ok) {
      traceError(name, fmt::format("record {}", record),
                 "truncated protobuf stream (a record's length runs past the end)");
    }
    if (record == 0) {
      checkGlobalMetadata(name, msg);
      out.format = "chakra";
      ++record;
      continue;
    }
    Node n;
    if (!decodeNode(msg, n)) {
      traceError(name, fmt::format("record {}", record), "malformed protobuf Node");
    }
    const std::string where = fmt::format("node {} ({})", n.id, printable(n.name.substr(0, 60)));
    ++record;
    if (n.type == kMetadata) {
      groupsFromMetadata(name, n, out);
      continue;
    }
    if (n.type == kComp) {
      const Attr* cpu = n.attr("is_cpu_op");
      // Host-side ops nest and overlap the device work; only device compute separates comms.
      if (!(cpu && cpu->integer && *cpu->integer != 0)) gap += static_cast<double>(n.durationUs);
      previousP2p = false;
      continue;
    }
    if (n.type != kSend && n.type != kRecv && n.type != kColl) {
      if (n.type < 0 || n.type > kColl)
        traceError(name, where, fmt::format("node type {}", n.type));
      continue;
    }
    CommOp op;
    op.node = where;
    if (!setKind(name, where, n, previousP2p, op)) continue;
    previousP2p = isPointToPoint(op.kind);
    setSize(name, where, n, op);
    if (n.durationUs > 0) op.recordedUs = static_cast<double>(n.durationUs);
    op.gapUs = gap;
    gap = 0;
    out.ops.push_back(std::move(op));
  }
  if (record == 0) traceError(name, "", "empty file (no Chakra metadata record)");
  return out;
}

}  // namespace cb::replay
