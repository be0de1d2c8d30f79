// Which parts of two runs' environment fingerprints differ, named, so a refused comparison says
// why ("gpu_model: Tesla V100-SXM3-32GB-H vs NVIDIA A100-SXM4-80GB").
#pragma once

#include <string>

namespace cb {

// The comparable entries (RunRecord::environmentJson, {"comparable": {...}}) that differ, as
// "key: A vs B" joined by "; " (a missing entry shows as "-"); "" when none can be named (equal,
// or a side without a fingerprint JSON). Long values are cut to keep the line readable.
std::string fingerprintDifference(const std::string& environmentJsonA,
                                  const std::string& environmentJsonB);

}  // namespace cb
