// Imported logs put against the peak model (core/PeakModel.h): with `import --topology FILE` the
// machine's recorded links (topology/LinkBounds.h), else the log's own device lines.
#pragma once

#include <string>

#include "diagnosis/DiagLinks.h"
#include "results/Store.h"
#include "results/import/Import.h"
#include "topology/Placement.h"
#include "topology/Topology.h"

namespace cb {

// An hwloc XML export or a collbench topology JSON (`topo --json`: its first host); UsageError
// naming the file when it is neither.
MachineTopology loadTopologyFile(const std::string& path);

// Sets the results' peak and the run's verdicts. `machine`: the machine every host of the log is
// (null: judge from the log's device lines).
void judgeImport(ImportedRun& run, const MachineTopology* machine, const std::string& machinePath);

// "# verdict allreduce nccl: best 369.02 GB/s busbw: normal: ..." lines of a stored run (the
// run detail "peak", or an import's environment.peak); "" when the run has none.
std::string storedVerdictLines(const Store& store, const RunRecord& run);

// `diag links`: each link's bibw against twice its physical bound per direction (the topology's
// for its class, or `linkRateGbps` for every link when the user states the network's rate); the
// "below bound: ..." lines of the links under the expected share, "" when none is (or none has a
// bound: links inside a host are not judged, their bound is the memory the others share).
std::string linksBelowBound(const std::vector<LinkSample>& links, const RunTopology& topology,
                            double linkRateGbps);

}  // namespace cb
