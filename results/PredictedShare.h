// "N% of predicted for this scale": a run's busbw against the newest stored prediction
// (`collbench predict`, runs of source "predict") of the same collective and world size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/Store.h"

namespace cb {

// The source of the runs `collbench predict` stores.
inline constexpr const char* kPredictionSource = "predict";

struct PredictedShare {
  std::string collective;
  int64_t predictionRun = 0;
  double ratio = 0;  // median over the shared sizes of measured / predicted busbw
  size_t sizes = 0;
};

// One entry per collective of `results` (out-of-place, ok, busbw known) that a prediction for
// `worldSize` ranks covers at one size at least; `excludeRun` is the run itself.
std::vector<PredictedShare> predictedShares(const Store& store, int worldSize,
                                            const std::vector<ResultRecord>& results,
                                            int64_t excludeRun = 0);

// "allreduce: 97% of predicted for this scale (prediction run 3, median over 5 sizes)".
std::string predictedShareLine(const PredictedShare& share);

}  // namespace cb
