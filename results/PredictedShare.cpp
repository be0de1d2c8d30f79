#include "results/PredictedShare.h"

#include <fmt/format.h>

#include <map>

#include "core/Stats.h"

namespace cb {

std::vector<PredictedShare> predictedShares(const Store& store, int worldSize,
                                            const std::vector<ResultRecord>& results,
                                            int64_t excludeRun) {
  std::vector<PredictedShare> out;
  if (worldSize <= 0) return out;
  // Measured busbw per collective and size.
  std::map<std::string, std::map<uint64_t, double>> measured;
  for (const ResultRecord& r : results) {
    if (!r.ok() || r.placement == "in" || !r.busbw || *r.busbw <= 0) continue;
    measured[r.collective][r.sizeBytes] = *r.busbw;
  }
  if (measured.empty()) return out;
  std::map<std::string, bool> done;
  for (const RunRecord& run : store.listRuns()) {  // newest first
    if (run.source != kPredictionSource || run.worldSize != worldSize || run.id == excludeRun) {
      continue;
    }
    std::map<std::string, std::vector<double>> ratios;
    for (const ResultRecord& p : store.results(run.id)) {
      auto m = measured.find(p.collective);
      if (m == measured.end() || done[p.collective] || !p.busbw || *p.busbw <= 0) continue;
      auto at = m->second.find(p.sizeBytes);
      if (at != m->second.end()) ratios[p.collective].push_back(at->second / *p.busbw);
    }
    for (auto& [coll, r] : ratios) {
      out.push_back({coll, run.id, medianOf(r), r.size()});
      done[coll] = true;
    }
  }
  return out;
}

std::string predictedShareLine(const PredictedShare& share) {
  return fmt::format(
      "{}: {:.0f}% of predicted for this scale (prediction run {}, median over {} "
      "size{})",
      share.collective, share.ratio * 100, share.predictionRun, share.sizes,
      share.sizes == 1 ? "" : "s");
}

}  // namespace cb
