// What `diag nodes` judges (diagnosis/Fleet.h), from what collbench already holds: an imported
// per-node log, or the newest ok run of each host in the store. Each node gets its kind (node
// type) from what its source says: an imported log's device lines ("8x A100-SXM4-40GB"), a stored
// run's recorded topology (its GPUs, else its CPU model and CPUs).
#pragma once

#include <string>
#include <vector>

#include "diagnosis/Fleet.h"
#include "results/Store.h"
#include "results/import/Import.h"

namespace cb {

// The node of one imported log: named by the log's one host when it names one, else by `file`'s
// name without its folder and extension; its ok, verified points.
FleetNode nodeFromImport(const ImportedRun& run, const std::string& file);
// Nodes with the same name (logs whose device lines all say "localhost") are renamed by their file.
void nameNodesApart(std::vector<FleetNode>& nodes);

// The newest ok run of each host (runs of one host; `label` filters when not empty). `notes` gets
// a line for the runs left out (several hosts).
std::vector<FleetNode> storedNodes(const Store& store, const std::string& label,
                                   std::vector<std::string>& notes);

// The fleet's own medians beside what published nodes of each kind measure (core/Reference:
// one-node figures of the same GPU and GPUs per node, collective and size): a line per baseline
// point the table holds, "N% of the published", and "below the published health minimum" where a
// validated minimum (at or below every published measurement there) is passed under. A fleet
// slow as a whole has no outlier; this is where it shows. Notes only: the fleet's verdict is its
// own (one point of a healthy but noisy node can dip under a pass mark 3% below the figure).
std::vector<std::string> publishedComparison(const FleetReport& report);

}  // namespace cb
