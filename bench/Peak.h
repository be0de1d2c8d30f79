// The engine's side of the peak model (core/PeakModel.h): the copy bandwidth host collectives are
// judged by, measured once per run, the "% of peak" view of a run's points and the verdict per
// collective and variant that `run` prints at its end (and `--expect` acts on).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/Sweep.h"
#include "core/LinkClass.h"
#include "core/PeakModel.h"
#include "core/Reference.h"

namespace cb {

// Bytes per rank the copy bandwidth is measured with: past the last-level cache of most hosts
// (each rank copies between two buffers of this size, all ranks at once).
inline constexpr uint64_t kCopyProbeBytes = 64ull << 20;
// The size each of n ranks copies: past the caches and within memory (512 MiB over all ranks,
// 8 to 64 MiB each), and at least so much that the ranks' buffers (2 x n x size) are twice the
// last-level cache they share (`cacheBytes`; up to 1 GiB each): a probe that fits the cache
// measures the cache, and every bound from it would be the cache's.
uint64_t copyProbeBytes(int nranks, uint64_t cacheBytes = 0);

// Collective: every rank memcpy's `bytes` at the same time, `iterations` times after a warm-up
// (a barrier before each); returns the bytes one rank copied per second (GB/s) in the fastest
// iteration (timed by its slowest rank), the same on every rank.
// `byRank` (when given): each rank's own rate in its fastest iteration, by rank.
double measureCopyGBps(Team& team, uint64_t bytes, int iterations, double timeoutSeconds,
                       std::vector<double>* byRank = nullptr);
// Collective: the copy rate host ranks sharing one host are judged by (measureCopyGBps with
// copyProbeBytes), or 0 without measuring when a rank drives a GPU or the ranks span hosts (one
// rank is measured too: its collectives are copies). `placements`: by rank, the same on every rank.
double hostCopyGBps(Team& team, const std::vector<RankPlacement>& placements, double timeoutSeconds,
                    std::vector<double>* byRank = nullptr, uint64_t cacheBytes = 0);

// "# peak: host memory copy per NUMA node: node 0 4.70 GB/s (2 ranks), node 1 3.12 GB/s (2
// ranks)\n": the slowest rank's own rate on each NUMA node the ranks' cores sit on, when they
// sit on two or more (the bound takes the slowest rank of all: a ring passes every node); ""
// otherwise, or when a rank's node is not known.
std::string copyByNumaLine(const std::vector<double>& byRank,
                           const std::vector<RankPlacement>& placements);

// Sizes down, variants across: busbw and its share of the point's bound, per collective (the
// out-of-place points, else the in-place ones); "" when no point has a bound.
std::string peakView(const std::vector<ResultRecord>& points);

struct RunVerdict {
  Collective coll;
  std::string variant;
  Verdict verdict;
  std::optional<KindVerdict> kind;  // for its kind (core/Reference.h), where judged
};
// Per collective and variant (memcpy excluded) over its ok, verified points of both placements.
std::vector<RunVerdict> judgeRun(const std::vector<ResultRecord>& points,
                                 const std::map<Collective, Bound>& bounds,
                                 double expectedOverride = 0);
// "# verdict allreduce ring/shm: best 7.21 GB/s busbw: normal: 74% of ..." one line each.
std::string verdictLines(const std::vector<RunVerdict>& verdicts);
// The run detail "peak" (`show` prints its lines): {"from": ..., "verdicts": [{collective,
// variant, verdict, line, peak_gbps, limit, basis}]}; imports keep the same under
// environment.peak.
std::string verdictsJson(const std::vector<RunVerdict>& verdicts,
                         const std::map<Collective, Bound>& bounds, const std::string& from);

}  // namespace cb
