// Imported logs judged against the peak model (core/PeakModel.h): the machine a log ran on, from
// its own device lines, and the bound and verdict set on its results and in its environment.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/PeakModel.h"
#include "core/Reference.h"
#include "results/import/Import.h"

namespace cb {

// What a log's device lines ("#  Rank  0 ... on host device 0 [0x18] NVIDIA H100 80GB HBM3") say.
struct LogMachine {
  std::string gpuModel;                // "" when the ranks name different models
  std::vector<std::string> hosts;      // in the order the ranks name them
  std::vector<std::string> rankHosts;  // per rank (device line order): its host
  std::vector<int> localRanks;         // per rank: its index on its host
  int ranks = 0;
  bool named = false;  // some device line names a GPU model
  // The publisher kept only some device lines (not ranks 0..k-1, or fewer than the world): the
  // lines say the GPU model and the node, not the ranks' layout.
  bool cut = false;
};
// nullopt when the run has no device lines (OSU, IMB, a truncated list).
std::optional<LogMachine> logMachine(const ImportedRun& run);

// The node type a log's device lines name (core/Reference.h): the GPU model, GPUs per node
// (ranks per host; from a cut list, the highest device index + 1) and node count (hosts; from a
// cut list, the world size / GPUs per node). `how` says why a part is unknown.
NodeKind logNodeKind(const ImportedRun& run);

// Sets every ok result's peak from `boundOf(collective)` and records, in the run's environment
// ("peak": per collective the bound and the verdict) and notes, the verdict of each collective,
// with the verdict for its kind (the published figures of the node type of logNodeKind).
// `kind`: the node type when known otherwise (a recorded topology); null: logNodeKind(run).
void judgeImportedRun(ImportedRun& run, const std::function<Bound(const std::string&)>& boundOf,
                      const std::string& boundSource, const NodeKind* kind = nullptr);

}  // namespace cb
