#include "replay/ReplayReport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/Collective.h"

namespace cb::replay {
namespace {

// nccl-tests' bus factor of the op's collective; alltoallv as alltoall, point-to-point 1.
double busFactor(OpKind k, int n) {
  if (k == OpKind::kAllToAllV) return busBwFactor(Collective::kAllToAll, n);
  const std::optional<Collective> c = collectiveOf(k);
  return c ? busBwFactor(*c, n) : 1;
}

// S of the op as nccl-tests counts it: the whole buffer (allgather: the gathered output).
double algBytesOf(const CommOp& op, int n) {
  const double b = static_cast<double>(op.bytes());
  return op.kind == OpKind::kAllGather ? b * n : b;
}

std::string groupName(const std::string& g) { return g.empty() ? "world" : g; }

}  // namespace

ReplaySummary summarizeReplay(const TraceSet& s, const ReplayTimes& t, Statistic stat) {
  ReplaySummary out;
  using Key = std::tuple<int, std::string, int, uint64_t>;
  std::map<Key, ReplayRow> rows;
  std::map<Key, std::vector<double>> recorded;
  const int world = static_cast<int>(s.ranks.size());
  const size_t iters = t.comm.empty() ? 0 : t.comm[0].size();
  // Per rank: the index of each op among its group's ops, to find the same op on the members.
  std::vector<std::map<std::string, std::vector<size_t>>> byGroup(world);
  for (int r = 0; r < world; ++r) {
    for (size_t i = 0; i < s.ranks[r].ops.size(); ++i) {
      const CommOp& op = s.ranks[r].ops[i];
      if (!isPointToPoint(op.kind)) byGroup[r][op.group].push_back(i);
      out.bytesPerReplay += op.bytes();
    }
  }
  for (int r = 0; r < world; ++r) {
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < s.ranks[r].ops.size(); ++i) {
      const CommOp& op = s.ranks[r].ops[i];
      const bool p2p = isPointToPoint(op.kind);
      const auto& members = s.groups.at(p2p ? "" : op.group).members;
      size_t k = p2p ? 0 : seen[op.group]++;
      if (!p2p && members.at(0) != r) continue;  // a group's op is counted on its first member
      Key key{int(op.kind), op.group, int(op.dtype), op.bytes()};
      ReplayRow& row = rows[key];
      row.kind = op.kind;
      row.group = op.group;
      row.dtype = op.dtype;
      row.bytes = op.bytes();
      row.count = op.count;
      row.nranks = p2p ? 2 : static_cast<int>(members.size());
      ++row.instances;
      for (size_t it = 0; it < iters; ++it) {
        double v = t.op[r][i][it];
        if (!p2p) {
          for (int m : members) v = std::max(v, t.op[m][byGroup[m][op.group][k]][it]);
        }
        row.samples.push_back(v);
      }
      if (!p2p) {
        for (int m : members) {
          const double rec = s.ranks[m].ops[byGroup[m][op.group][k]].recordedUs;
          if (rec >= 0) recorded[key].push_back(rec);
        }
      } else if (op.recordedUs >= 0) {
        recorded[key].push_back(op.recordedUs);
      }
    }
  }
  for (auto& [key, row] : rows) {
    row.summary = summarize(row.samples);
    row.timeSeconds = pick(row.summary, stat);
    if (row.timeSeconds > 0) {
      CommOp probe;
      probe.kind = row.kind;
      probe.dtype = row.dtype;
      probe.count = row.count;
      row.algbw = algBytesOf(probe, row.nranks) / row.timeSeconds / 1e9;
      row.busbw = row.algbw * busFactor(row.kind, row.nranks);
    }
    if (auto r = recorded.find(key); r != recorded.end() && !r->second.empty()) {
      row.recordedUs = summarize(r->second).median;
    }
    out.rows.push_back(row);
  }
  for (size_t it = 0; it < iters; ++it) {
    double m = 0;
    for (int r = 0; r < world; ++r) m = std::max(m, t.comm[r][it]);
    out.commSamples.push_back(m);
  }
  out.comm = summarize(out.commSamples);
  out.wallSamples = t.wall;
  for (const auto& op : s.ranks.at(0).ops) {
    if (op.recordedUs >= 0) out.recordedCommUs = std::max(0.0, out.recordedCommUs) + op.recordedUs;
  }
  return out;
}

void printOpTable(std::FILE* out, const TraceSet& s, bool allRanks) {
  const int world = static_cast<int>(s.ranks.size());
  for (int r = 0; r < (allRanks ? world : std::min(world, 1)); ++r) {
    const RankTrace& t = s.ranks[r];
    fmt::print(out, "# rank {}: {} ({}), {} ops\n", r, t.file, t.format, t.ops.size());
    fmt::print(out, "{:>5} {:<14} {:<8} {:<9} {:>12} {:>12} {:>6} {:>12} {:>10}  {}\n", "#", "op",
               "group", "dtype", "count", "bytes", "peer", "recorded_us", "gap_us", "node");
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const CommOp& op = t.ops[i];
      const std::string peer = op.peer >= 0   ? fmt::format("{}", op.peer)
                               : op.root >= 0 ? fmt::format("r{}", op.root)
                                              : std::string("-");
      std::string node = op.node;
      if (op.kind == OpKind::kAllToAllV) {
        node +=
            fmt::format(" in {} out {}", fmt::join(op.inSplits, " "), fmt::join(op.outSplits, " "));
      }
      fmt::print(out, "{:>5} {:<14} {:<8} {:<9} {:>12} {:>12} {:>6} {:>12} {:>10}  {}{}\n", i,
                 opKindName(op.kind), groupName(op.group), dataTypeName(op.dtype), op.count,
                 op.bytes(), peer, op.recordedUs >= 0 ? fmt::format("{:.1f}", op.recordedUs) : "-",
                 fmt::format("{:.1f}", op.gapUs), op.withPrevious ? "+ " : "", node);
    }
  }
  struct Total {
    uint64_t ops0 = 0, bytes0 = 0, ops = 0, bytes = 0;
  };
  std::map<std::pair<std::string, std::string>, Total> totals;
  for (int r = 0; r < world; ++r) {
    for (const auto& op : s.ranks[r].ops) {
      Total& t = totals[{std::string(opKindName(op.kind)), groupName(op.group)}];
      if (r == 0) {
        ++t.ops0;
        t.bytes0 += op.bytes();
      }
      ++t.ops;
      t.bytes += op.bytes();
    }
  }
  fmt::print(out, "# totals per op kind and group ({} ranks)\n", world);
  fmt::print(out, "{:<14} {:<8} {:>10} {:>16} {:>10} {:>16}\n", "op", "group", "ops_rank0",
             "bytes_rank0", "ops_all", "bytes_all");
  Total sum;
  for (const auto& [k, t] : totals) {
    fmt::print(out, "{:<14} {:<8} {:>10} {:>16} {:>10} {:>16}\n", k.first, k.second, t.ops0,
               t.bytes0, t.ops, t.bytes);
    sum.ops0 += t.ops0;
    sum.bytes0 += t.bytes0;
    sum.ops += t.ops;
    sum.bytes += t.bytes;
  }
  fmt::print(out, "{:<14} {:<8} {:>10} {:>16} {:>10} {:>16}\n", "total", "", sum.ops0, sum.bytes0,
             sum.ops, sum.bytes);
}

}  // namespace cb::replay
