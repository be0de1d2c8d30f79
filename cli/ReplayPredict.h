// `replay --predict-ranks M` (docs/PREDICT.md): a recorded step predicted at M ranks from the
// scale model fitted to the logs of --fit: each collective at its new group size (groups of the
// whole world grow to M, smaller groups, such as TP or PP, stay) and the message the trace
// records per rank, the compute between ops as the trace recorded it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "replay/TraceSet.h"

namespace cb::cli {

struct ReplayPredictFlags {
  int ranks = 0;
  std::vector<std::string> fits;  // COLL=NODESxGPUS:FILE
  int gpusPerNode = 0, domainNodes = 1;
  bool nvls = false;
  double netBusbw = 0;
  void add(CLI::App* sub);
};

// Prints the predicted step of `set` (fitted to `world` ranks) at flags.ranks; UsageError (one
// line) on a bad --fit, a collective without a fit, or a scale the fit cannot reach.
int predictReplayStep(const replay::TraceSet& set, int world, const ReplayPredictFlags& flags);

}  // namespace cb::cli
