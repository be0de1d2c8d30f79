// `replay --predict-ranks M` and `proxy ... --predict-ranks M` (docs/PREDICT.md): a recorded step
// predicted at M ranks from the scale model fitted to the logs of --fit: each collective at its new
// group size (groups of the whole world grow to M, smaller groups, such as TP or PP, stay) and the
// message the trace records per rank, the compute between ops as the trace recorded it.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "predict/ScaleModel.h"
#include "replay/TraceSet.h"

namespace cb::cli {

struct ScalePredictFlags {
  int ranks = 0;
  std::vector<std::string> fits;  // COLL=NODESxGPUS:FILE
  int gpusPerNode = 0, domainNodes = 1;
  bool nvls = false;
  double netBusbw = 0;
  void add(CLI::App* sub);
};

// The models of --fit, one per collective, and the scale of a group of k ranks on the target's
// nodes. Built (every log read) before anything is measured.
struct ScaleModels {
  std::map<predict::Coll, predict::ScaleFit> fits;
  int gpusPerNode = 0, domainNodes = 1;
  predict::Scale scaleOf(int k) const;
  // The model's time of one call of `coll` (collbench's name) on k ranks with nccl-tests' size
  // S; nullopt for a call the model has not (send, recv, broadcast...); UsageError when the
  // collective has no --fit or the fit cannot reach k ranks. `where` prefixes the error.
  std::optional<double> callUs(std::string_view coll, int k, uint64_t bytes,
                               std::string_view where) const;
};
ScaleModels loadScaleModels(const ScalePredictFlags& flags, std::string_view where);

// Prints the predicted step of `set` (fitted to `world` ranks) at flags.ranks; UsageError (one
// line) on a bad --fit, a collective without a fit, or a scale the fit cannot reach.
int predictReplayStep(const replay::TraceSet& set, int world, const ScalePredictFlags& flags);

}  // namespace cb::cli
