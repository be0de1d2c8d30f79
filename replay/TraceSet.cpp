#include "replay/TraceSet.h"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/Error.h"
#include "replay/Readers.h"

namespace cb::replay {
namespace {

constexpr std::string_view kRank = "{rank}";
constexpr int kMaxTraceRanks = 4096;

std::string expand(const std::string& pattern, int rank) {
  std::string out = pattern;
  for (size_t at = out.find(kRank); at != std::string::npos; at = out.find(kRank, at)) {
    out.replace(at, kRank.size(), std::to_string(rank));
  }
  return out;
}

// The files a pattern names for `rank`: {rank} expanded, then shell wildcards (Kineto's file
// names carry a timestamp: worker{rank}_step_12.*.pt.trace.json).
std::vector<std::string> filesFor(const std::string& pattern, int rank) {
  const std::string p = expand(pattern, rank);
  glob_t g{};
  std::vector<std::string> found;
  if (::glob(p.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) found.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return found;
}

std::string oneFileFor(const std::string& flag, const std::string& pattern, int rank) {
  auto found = filesFor(pattern, rank);
  if (found.size() != 1) {
    throw UsageError(fmt::format("{} {}: {} files for rank {} (need exactly one)", flag,
                                 expand(pattern, rank), found.size(), rank));
  }
  return found[0];
}

RankTrace readHashed(const std::string& path, uint64_t& hash) {
  std::string bytes = readTraceBytes(path);
  hash = fnv1a64(bytes, hash);
  return parseTrace(path, bytes);
}

void keepKinds(RankTrace& t, const std::vector<OpKind>& kinds) {
  if (kinds.empty()) return;
  std::vector<CommOp> kept;
  for (auto& op : t.ops) {
    if (std::find(kinds.begin(), kinds.end(), op.kind) == kinds.end()) continue;
    // A batch of sends and receives stays a batch only with its previous member kept.
    if (op.withPrevious && (kept.empty() || !isPointToPoint(kept.back().kind))) {
      op.withPrevious = false;
    }
    kept.push_back(std::move(op));
  }
  t.ops = std::move(kept);
}

std::string describe(const CommOp& op) {
  std::string s = fmt::format("{} of {} {}", opKindName(op.kind), op.count, dataTypeName(op.dtype));
  if (op.root >= 0) s += fmt::format(" root {}", op.root);
  if (op.peer >= 0) s += fmt::format(" peer {}", op.peer);
  return s;
}

uint64_t scaled(uint64_t v, double x) {
  return v == 0 ? 0 : std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(v * x)));
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

TraceSet loadTraceSet(const TraceSetOptions& o) {
  if (o.traces.empty()) throw UsageError("replay needs a trace (a file, or a {rank} pattern)");
  TraceSet s;
  s.name = o.traces[0];
  s.oneTrace = o.useOneTrace;
  uint64_t hash = 1469598103934665603ull;
  std::vector<std::string> files;
  if (o.useOneTrace) {
    if (o.traces.size() != 1) throw UsageError("--use-one-trace takes one trace file");
    if (o.traces[0].find(kRank) != std::string::npos) {
      throw UsageError("--use-one-trace takes one file, not a {rank} pattern");
    }
    files.push_back(o.traces[0]);
  } else if (o.traces.size() == 1 && o.traces[0].find(kRank) != std::string::npos) {
    for (int r = 0; r < kMaxTraceRanks; ++r) {
      if (filesFor(o.traces[0], r).empty()) break;
      files.push_back(oneFileFor("trace", o.traces[0], r));
    }
    if (files.empty()) {
      throw UsageError(
          fmt::format("trace {}: no file for rank 0 ({})", o.traces[0], expand(o.traces[0], 0)));
    }
  } else {
    files = o.traces;
  }
  for (const auto& f : files) {
    RankTrace t = readHashed(f, hash);
    s.ranks.push_back(std::move(t));
  }
  if (!o.kineto.empty()) {
    if (o.kineto.find(kRank) == std::string::npos && s.ranks.size() > 1) {
      throw UsageError("--kineto needs a {rank} pattern for a trace of several ranks");
    }
    for (size_t r = 0; r < s.ranks.size(); ++r) {
      const std::string f = oneFileFor("--kineto", o.kineto, static_cast<int>(r));
      RankTrace k = readHashed(f, hash);
      attachDurations(s.ranks[r], k);
    }
  }
  for (auto& t : s.ranks) {
    keepKinds(t, o.ops);
    s.recordedWorldSize = std::max(s.recordedWorldSize, t.recordedWorldSize);
  }
  s.recordedRanks = static_cast<int>(s.ranks.size());
  s.hash = fmt::format("fnv1a64:{:016x}", hash);
  if (!o.ops.empty()) {
    std::string names;
    for (auto k : o.ops) {
      if (!names.empty()) names += ',';
      names += opKindName(k);
    }
    s.notes.push_back("--ops " + names + ": the other ops are left out");
  }
  return s;
}

int naturalWorldSize(const TraceSet& s) {
  return s.oneTrace ? s.recordedWorldSize : s.recordedRanks;
}

const GroupInfo& groupOf(const TraceSet& s, const CommOp& op) { return s.groups.at(op.group); }

uint64_t largestBuffers(const TraceSet& s) {
  uint64_t most = 0;
  for (const auto& t : s.ranks) {
    uint64_t batch = 0;  // consecutive sends/receives share the buffers' regions
    for (const auto& op : t.ops) {
      const uint64_t n = isPointToPoint(op.kind) ? 1 : s.groups.at(op.group).members.size();
      uint64_t out = op.bytes();
      if (op.kind == OpKind::kAllGather) out *= n;
      if (op.kind == OpKind::kAllToAllV) {
        out = 0;
        for (auto x : op.outSplits) out += x * dataTypeSize(op.dtype);
      }
      batch = op.withPrevious ? batch + op.bytes() : op.bytes();
      most = std::max({most, op.bytes() + out, batch});
    }
  }
  return most;
}

namespace {

// fitToWorld's stages, in the order it runs them.

// Refuses a world the traces do not fit; one trace (--use-one-trace) is copied to every rank.
void checkWorld(TraceSet& s, int world, int shrinkTo) {
  if (world < 1) throw UsageError("replay needs at least one rank");
  if (s.oneTrace) {
    if (shrinkTo > 0 && shrinkTo != world) {
      throw UsageError(fmt::format("--ranks {} on a world of {} ranks", shrinkTo, world));
    }
    RankTrace one = s.ranks.at(0);
    s.ranks.assign(world, one);
    if (s.recordedWorldSize > 0 && s.recordedWorldSize != world) {
      s.notes.push_back(fmt::format("one trace recorded on {} ranks, replayed on {}",
                                    s.recordedWorldSize, world));
    }
  } else if (shrinkTo > 0) {
    if (shrinkTo != world) {
      throw UsageError(fmt::format("--ranks {} but the world has {} ranks (run on {})", shrinkTo,
                                   world, shrinkTo));
    }
    if (shrinkTo > s.recordedRanks) {
      throw UsageError(
          fmt::format("--ranks {}: the trace has only {} ranks", shrinkTo, s.recordedRanks));
    }
  } else if (s.recordedRanks != world) {
    throw UsageError(fmt::format(
        "trace {} has {} rank traces for a world of {} ranks: run on {} ranks, shrink with "
        "--ranks {}, or replay one file everywhere with --use-one-trace",
        s.name, s.recordedRanks, world, s.recordedRanks, world));
  }
}

// Groups: the union of what every kept rank declared (the same name must mean the same ranks).
std::map<std::string, ProcessGroup> declaredGroups(const TraceSet& s, int world) {
  std::map<std::string, ProcessGroup> declared;
  for (int r = 0; r < world; ++r) {
    for (const auto& [name, g] : s.ranks[r].groups) {
      auto [it, fresh] = declared.emplace(name, g);
      if (!fresh && it->second.ranks != g.ranks) {
        traceError(s.ranks[r].file, "process_group:init",
                   fmt::format("group '{}' has other ranks than in {}", name, s.ranks[0].file));
      }
    }
  }
  return declared;
}

// s.groups: the world ("", every recorded rank) and each declared group (no ranks: the world).
void setGroups(TraceSet& s, const std::map<std::string, ProcessGroup>& declared, int recorded) {
  s.groups.clear();
  GroupInfo all;
  for (int r = 0; r < recorded; ++r) all.members.push_back(r);
  s.groups[""] = all;
  for (const auto& [name, g] : declared) {
    GroupInfo gi;
    gi.name = name;
    gi.members = g.ranks.empty() ? all.members : g.ranks;
    s.groups[name] = gi;
  }
}

// What fitting the ops to the world needs, and what it dropped.
struct OpFit {
  int world = 0;
  int recorded = 0;  // the ranks the world group had as recorded
  bool shrinking = false;
  const std::map<std::string, ProcessGroup>& declared;
  std::map<std::string, std::vector<size_t>> keptIndex;  // group -> old group ranks kept
  uint64_t droppedBytes = 0, keptBytes = 0;
  int droppedOps = 0;
};

// Shrink: drop ranks >= world from every group (keptIndex says which group ranks stay).
void shrinkGroups(TraceSet& s, OpFit& f) {
  for (auto& [name, g] : s.groups) {
    std::vector<int> m;
    for (size_t j = 0; j < g.members.size(); ++j) {
      if (g.members[j] < f.world) {
        m.push_back(g.members[j]);
        f.keptIndex[name].push_back(j);
      } else if (!f.shrinking) {
        throw UsageError(fmt::format("trace {}: group '{}' names rank {} of a {}-rank world",
                                     s.name, name, g.members[j], f.world));
      }
    }
    g.members = std::move(m);
  }
}

// One op of rank r fitted to the (shrunk) groups: true when it loses its peer or group and is
// dropped; all_to_allv keeps the kept ranks' splits, reduce_scatter and all_to_all their
// per-peer part.
bool fitOp(const TraceSet& s, OpFit& f, const RankTrace& t, int r, CommOp& op) {
  auto gi = s.groups.find(op.group);
  if (gi == s.groups.end()) {
    traceError(t.file, op.node, fmt::format("group '{}' was never declared", op.group));
  }
  const auto& members = gi->second.members;
  const int world = f.world;
  const bool shrinking = f.shrinking;
  bool drop = false;
  if (isPointToPoint(op.kind)) {
    if (op.peer >= world) drop = shrinking;
    if (op.peer >= world && !shrinking) {
      traceError(t.file, op.node, fmt::format("peer {} of a {}-rank world", op.peer, world));
    }
  } else if (std::find(members.begin(), members.end(), r) == members.end()) {
    drop = true;  // this rank left the group: only possible when shrinking
    if (!shrinking) traceError(t.file, op.node, "an op on a group this rank is not in");
  } else if (op.kind == OpKind::kAllToAllV && shrinking) {
    const auto& idx = f.keptIndex[op.group];
    std::vector<uint64_t> in, out;
    for (size_t j : idx) {
      if (j >= op.inSplits.size() || j >= op.outSplits.size()) {
        traceError(t.file, op.node, "fewer split sizes than group members");
      }
      in.push_back(op.inSplits[j]);
      out.push_back(op.outSplits[j]);
    }
    op.inSplits = std::move(in);
    op.outSplits = std::move(out);
    op.count = 0;
    for (auto x : op.inSplits) op.count += x;
  } else if ((op.kind == OpKind::kReduceScatter || op.kind == OpKind::kAllToAll) && shrinking) {
    // Keep what each rank exchanges with each peer: the buffer scales with the group.
    const uint64_t kept = f.keptIndex[op.group].size();
    const auto d = f.declared.find(op.group);
    const uint64_t was = op.group.empty() || d == f.declared.end() || d->second.ranks.empty()
                             ? static_cast<uint64_t>(f.recorded)
                             : d->second.ranks.size();
    if (was > 0 && op.count % was == 0) op.count = op.count / was * kept;
  }
  return drop;
}

// Rank r's ops fitted (fitOp), the dropped ones counted and left out.
void fitRankOps(TraceSet& s, OpFit& f, int r) {
  RankTrace& t = s.ranks[r];
  std::vector<CommOp> kept;
  for (auto& op : t.ops) {
    const uint64_t before = op.bytes();
    if (fitOp(s, f, t, r, op)) {
      f.droppedBytes += before;
      ++f.droppedOps;
      continue;
    }
    f.keptBytes += op.bytes();
    f.droppedBytes += before > op.bytes() ? before - op.bytes() : 0;
    if (op.withPrevious && (kept.empty() || !isPointToPoint(kept.back().kind))) {
      op.withPrevious = false;
    }
    kept.push_back(std::move(op));
  }
  t.ops = std::move(kept);
}

// --scale-size: every message scaled; the recorded durations no longer apply.
void scaleSizes(TraceSet& s, double scaleSize) {
  if (!(scaleSize > 0)) throw UsageError("--scale-size must be positive");
  for (auto& t : s.ranks) {
    for (auto& op : t.ops) {
      const uint64_t n = s.groups[op.group].members.size();
      if (op.kind == OpKind::kAllToAllV) {
        op.count = 0;
        for (auto& x : op.inSplits) op.count += (x = scaled(x, scaleSize));
        for (auto& x : op.outSplits) x = scaled(x, scaleSize);
      } else if (op.kind == OpKind::kReduceScatter || op.kind == OpKind::kAllToAll) {
        op.count = scaled(op.count / n, scaleSize) * n;  // stays a multiple of the group
      } else {
        op.count = scaled(op.count, scaleSize);
      }
      op.recordedUs = -1;  // a duration of the recorded size says nothing about another
    }
  }
  s.notes.push_back(fmt::format(
      "--scale-size {:g}: every message {:g} x its recorded size (recorded durations not shown)",
      scaleSize, scaleSize));
}

// Op k of group member j (b) against member 0's (a): the same op, a root inside the group, a
// size that splits, all_to_allv splits that match what each peer sends.
void checkMemberOp(const TraceSet& s, const GroupInfo& g, const std::string& gname,
                   const std::vector<std::vector<const CommOp*>>& seqs, size_t j, size_t k) {
  const size_t n = g.members.size();
  const int r0 = g.members[0];
  const CommOp& a = *seqs[0][k];
  const CommOp& b = *seqs[j][k];
  const int r = g.members[j];
  const bool same = a.kind == b.kind && a.dtype == b.dtype &&
                    (a.kind == OpKind::kAllToAllV || a.count == b.count) && a.root == b.root;
  if (!same) {
    traceError(s.ranks[r].file, b.node,
               fmt::format("rank {}'s op {} on {} is {}, rank {}'s is {}", r, k, gname, describe(b),
                           r0, describe(a)));
  }
  if (b.root >= static_cast<int>(n)) {
    traceError(s.ranks[r].file, b.node,
               fmt::format("root {} outside {} of {} ranks", b.root, gname, n));
  }
  if ((b.kind == OpKind::kReduceScatter || b.kind == OpKind::kAllToAll) && b.count % n) {
    traceError(s.ranks[r].file, b.node,
               fmt::format("{} of {} elements does not split over {} ranks", opKindName(b.kind),
                           b.count, n));
  }
  if (b.kind == OpKind::kAllToAllV) {
    if (b.inSplits.size() != n || b.outSplits.size() != n) {
      traceError(s.ranks[r].file, b.node,
                 fmt::format("{} split sizes for {} of {} ranks", b.inSplits.size(), gname, n));
    }
    for (size_t p = 0; p < n; ++p) {
      const CommOp& q = *seqs[p][k];
      if (q.inSplits.size() == n && b.outSplits[p] != q.inSplits[j]) {
        traceError(s.ranks[r].file, b.node,
                   fmt::format("all_to_allv: rank {} expects {} elements from rank {}, "
                               "which sends it {}",
                               r, b.outSplits[p], g.members[p], q.inSplits[j]));
      }
    }
  }
}

// Every group's members must agree, op by op.
void checkGroupAgrees(const TraceSet& s, const std::string& name, const GroupInfo& g) {
  if (g.members.empty()) return;
  std::vector<std::vector<const CommOp*>> seqs(g.members.size());
  for (size_t j = 0; j < g.members.size(); ++j) {
    for (const auto& op : s.ranks[g.members[j]].ops) {
      if (!isPointToPoint(op.kind) && op.group == name) seqs[j].push_back(&op);
    }
  }
  const int r0 = g.members[0];
  const std::string gname = name.empty() ? "the world" : "group '" + name + "'";
  for (size_t j = 0; j < seqs.size(); ++j) {
    const int r = g.members[j];
    if (seqs[j].size() != seqs[0].size()) {
      traceError(s.ranks[r].file, "",
                 fmt::format("rank {} has {} ops on {}, rank {} has {}", r, seqs[j].size(), gname,
                             r0, seqs[0].size()));
    }
  }
  const size_t n = g.members.size();
  for (size_t k = 0; k < seqs[0].size(); ++k) {
    for (size_t j = 0; j < n; ++j) checkMemberOp(s, g, gname, seqs, j, k);
  }
}

// Every send meets a receive of the same size, in order, per ordered pair of ranks.
void checkPointToPoint(const TraceSet& s, int world) {
  std::map<std::pair<int, int>, std::vector<const CommOp*>> sends, recvs;
  for (int r = 0; r < world; ++r) {
    for (const auto& op : s.ranks[r].ops) {
      if (op.kind == OpKind::kSend) sends[{r, op.peer}].push_back(&op);
      if (op.kind == OpKind::kRecv) recvs[{op.peer, r}].push_back(&op);
      if (isPointToPoint(op.kind) && op.peer == r) {
        traceError(s.ranks[r].file, op.node, "a send or receive to itself");
      }
    }
  }
  for (auto& [pair, list] : sends) {
    auto& other = recvs[pair];
    if (other.size() != list.size()) {
      traceError(s.ranks[pair.first].file, list.empty() ? "" : list[0]->node,
                 fmt::format("rank {} sends {} messages to rank {}, which receives {}", pair.first,
                             list.size(), pair.second, other.size()));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i]->bytes() != other[i]->bytes()) {
        traceError(s.ranks[pair.first].file, list[i]->node,
                   fmt::format("sends {} B to rank {}, which receives {} B", list[i]->bytes(),
                               pair.second, other[i]->bytes()));
      }
    }
  }
  for (auto& [pair, list] : recvs) {
    if (!list.empty() && sends[pair].size() != list.size()) {
      traceError(s.ranks[pair.second].file, list[0]->node,
                 fmt::format("rank {} receives {} messages from rank {}, which sends {}",
                             pair.second, list.size(), pair.first, sends[pair].size()));
    }
  }
}

}  // namespace

void fitToWorld(TraceSet& s, int world, int shrinkTo, double scaleSize) {
  checkWorld(s, world, shrinkTo);
  const int recorded = s.oneTrace ? world : s.recordedRanks;
  const std::map<std::string, ProcessGroup> declared = declaredGroups(s, world);
  setGroups(s, declared, recorded);
  OpFit f{world, recorded, !s.oneTrace && world < s.recordedRanks, declared, {}};
  if (f.shrinking) s.ranks.resize(world);
  shrinkGroups(s, f);
  for (int r = 0; r < world; ++r) fitRankOps(s, f, r);
  if (f.shrinking) {
    s.notes.push_back(fmt::format(
        "--ranks {}: the traces of ranks 0..{} of {}; traffic with ranks {}..{} left out ({} ops "
        "and {} B of {} B on the kept ranks); groups keep their members below {}; all_to_allv "
        "keeps the splits among the kept ranks",
        world, world - 1, s.recordedRanks, world, s.recordedRanks - 1, f.droppedOps, f.droppedBytes,
        f.droppedBytes + f.keptBytes, world));
  }
  if (scaleSize != 1) scaleSizes(s, scaleSize);
  for (const auto& [name, g] : s.groups) checkGroupAgrees(s, name, g);
  checkPointToPoint(s, world);
}

}  // namespace cb::replay
