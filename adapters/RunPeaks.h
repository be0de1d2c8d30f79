// What `run` adds to its measurement beyond the tables: the header lines of the sweep and the run
// record's fields for --json, the bounds of the run's collectives on its topology (the header's
// "# peak:" lines, each point's peak), and after the tables the % of peak view and one verdict
// per collective and variant (bench/Peak, core/PeakModel; docs/PEAK.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/Sweep.h"
#include "core/PeakModel.h"
#include "core/Reference.h"
#include "results/Records.h"
#include "session/RunSession.h"

namespace cb {

// The header lines that describe the sweep (between the libraries and the fingerprint).
std::vector<std::string> sweepDescription(const SweepOptions& sweep);
// The run record's fields as `run --json` writes them in its header object.
std::map<std::string, std::string> headerFields(const RunRecord& r);

// The bounds of the run's collectives from its topology (host ranks on one host: the copy
// bandwidth measured here, on every rank at once), and the header line that gives them.
struct RunPeaks {
  std::map<Collective, Bound> bounds;
  bool deviceRanks = false;
  NodeKind kind;  // the GPU ranks' node type (core/Reference.h), for the verdicts for its kind
  std::string header;
  // Sets the point's peak where its variant runs on the bounded ranks (GPU variants on GPU
  // ranks, host variants on host ranks) and the point is judged.
  void apply(ResultRecord& p) const;
};
// Collective: every rank measures the copy bandwidth (rank 0 keeps the result).
RunPeaks runPeaks(RunSession& s, const SweepOptions& sweep);

// Rank 0, after the tables: the verdicts' JSON (the run detail "peak"), the % of peak view with
// the verdict lines, and one line per low verdict ("allreduce ring/local is low: ...", or low
// for its kind: below every published figure of the node type and its health minimum).
struct RunVerdicts {
  std::string detailJson, text;
  std::vector<std::string> low;
};
RunVerdicts runVerdicts(const std::vector<ResultRecord>& all, const RunPeaks& peaks,
                        double expectFraction);

}  // namespace cb
