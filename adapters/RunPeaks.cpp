#include "adapters/RunPeaks.h"

#include <fmt/format.h>

#include "bench/Peak.h"
#include "bench/TimingLoops.h"
#include "core/Size.h"
#include "core/Text.h"
#include "topology/LinkBounds.h"
#include "topology/NodeKind.h"

namespace cb {

std::vector<std::string> sweepDescription(const SweepOptions& sweep) {
  std::vector<std::string> lines{fmt::format(
      "# sizes {}..{} B, -n {} -w {} -c {} -N {}; time = {} over iterations of the {} over ranks "
      "(-a {})",
      sweep.minBytes, sweep.maxBytes, sweep.iterations, sweep.warmup, sweep.checkRounds,
      sweep.cycles, statisticName(sweep.statistic), rankCombineName(sweep.combine),
      static_cast<int>(sweep.combine))};
  lines.push_back(fmt::format("# timing {}", timingModeDescription(sweep.timing)));
  if (sweep.timeBudgetSeconds > 0) {
    lines.push_back(
        fmt::format("# adaptive: {:g} s per point picks the iteration count (-n ignored)",
                    sweep.timeBudgetSeconds));
  }
  return lines;
}

std::map<std::string, std::string> headerFields(const RunRecord& r) {
  return {{"collbench_version", r.collbenchVersion},
          {"started_at", r.startedAt},
          {"label", r.label},
          {"command_line", r.commandLine},
          {"mpi_version", r.mpiVersion},
          {"ucx_version", r.ucxVersion},
          {"cuda_version", r.cudaVersion},
          {"nccl_version", r.ncclVersion},
          {"hosts", r.hosts},
          {"world_size", std::to_string(r.worldSize)},
          {"world_kind", r.worldKind},
          {"fingerprint", r.fingerprint}};
}

void RunPeaks::apply(ResultRecord& p) const {
  // GPU ranks bound the device variants; host variants beside them move through host memory,
  // which the link bound does not describe.
  bool device = startsWith(p.variant, "nccl") || p.variant.find("/cuda") != std::string::npos;
  if (p.variant == "memcpy" || device != deviceRanks) return;
  auto it = bounds.find(parseCollective(p.collective));
  if (it == bounds.end() || !it->second.known()) return;
  // One rank in place moves nothing (core/PeakModel.h, judgedFigure); buffers that fit the cache
  // never reach the memory the bound is of.
  if (!judgedPoint(p.nranks.value_or(0), p.placement == "in")) return;
  if (it->second.cacheResident(p.sizeBytes)) return;
  p.peakGBps = it->second.busbw;
  p.peakLimit = it->second.limit;
}

RunPeaks runPeaks(RunSession& s, const SweepOptions& sweep) {
  RunPeaks peaks;
  const RunTopology& topo = s.topology();
  for (const auto& p : topo.placements) {
    peaks.deviceRanks = peaks.deviceRanks || !p.gpuBusId.empty();
  }
  peaks.kind = runNodeKind(topo);
  const int n = s.team().size();
  std::vector<double> byRank;
  const uint64_t cache = peaks.deviceRanks ? 0 : ranksCacheBytes(topo.hosts, topo.placements);
  const double copy = hostCopyGBps(s.team(), topo.placements, sweep.timeoutSeconds, &byRank, cache);
  if (copy > 0) {
    peaks.header += fmt::format("# peak: host memory copy {:.2f} GB/s per rank ({} copying {}{})\n",
                                copy, n == 1 ? "one rank" : fmt::format("{} ranks", n),
                                formatSize(copyProbeBytes(n, cache)), n == 1 ? "" : " at once");
    peaks.header += copyByNumaLine(byRank, topo.placements);
  }
  for (Collective c : sweep.collectives) {
    Bound b = collectiveLinkBound(topo.hosts, topo.placements, c, copy);
    peaks.header += b.known() ? fmt::format("# peak: {} bound {:.2f} GB/s {}: {}\n",
                                            collectiveName(c), b.busbw, b.figure(), b.basis)
                              : fmt::format("# peak: {}: no bound known for this hardware ({})\n",
                                            collectiveName(c), b.unknownWhy);
    if (b.known() && b.cacheBytes > 0 && b.workingSetPerByte > 0) {
      // The size whose buffers first pass the cache: below it the memory bound does not apply.
      const auto fits =
          static_cast<uint64_t>(static_cast<double>(b.cacheBytes) / b.workingSetPerByte);
      peaks.header += fmt::format(
          "# peak: {}: sizes up to {} are cache-resident (their buffers, {:g} x S over the ranks, "
          "fit the {}): no memory bound applies to them\n",
          collectiveName(c), formatSize(fits), b.workingSetPerByte, b.cacheName);
    }
    peaks.bounds[c] = std::move(b);
  }
  return peaks;
}

RunVerdicts runVerdicts(const std::vector<ResultRecord>& all, const RunPeaks& peaks,
                        double expectFraction) {
  auto verdicts = judgeRun(all, peaks.bounds, expectFraction);
  // For its kind: a GPU variant's busbw against the published figures of the node type; host
  // ranks have none (the table holds GPU nodes only).
  for (auto& v : verdicts) {
    const bool device =
        startsWith(v.variant, "nccl") || v.variant.find("/cuda") != std::string::npos;
    if (!device) continue;
    std::vector<std::pair<uint64_t, double>> busbws;
    for (const auto& p : all) {
      if (p.collective == collectiveName(v.coll) && p.variant == v.variant && p.measured() &&
          p.wrong.value_or(0) <= 0 && p.busbw) {
        busbws.emplace_back(p.sizeBytes, *p.busbw);
      }
    }
    v.kind = judgeForKind(peaks.kind, collectiveName(v.coll), algoClassOf(v.variant), busbws);
  }
  RunVerdicts out;
  out.detailJson = verdictsJson(verdicts, peaks.bounds, "run topology");
  out.text = peakView(all) + verdictLines(verdicts);
  for (const auto& v : verdicts) {
    if (v.verdict.kind == Verdict::Kind::kLow) {
      out.low.push_back(
          fmt::format("{} {} is {}", collectiveName(v.coll), v.variant, v.verdict.line));
    }
    if (v.kind && v.kind->kind == KindVerdict::Kind::kLow) {
      out.low.push_back(
          fmt::format("{} {} is low {}", collectiveName(v.coll), v.variant, v.kind->line));
    }
  }
  return out;
}

}  // namespace cb
