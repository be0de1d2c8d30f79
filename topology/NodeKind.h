// The node type (core/Reference.h) of a run or of a recorded machine: the model of its GPUs as
// NVML or hwloc names them, how many a node holds, and how many nodes.
#pragma once

#include "core/Reference.h"
#include "topology/Placement.h"
#include "topology/Topology.h"

namespace cb {

// A run's GPU ranks: the model every host's GPUs share, the most GPU ranks on one host, the
// hosts with GPU ranks. Unknown (empty gpu) for host ranks or mixed models.
NodeKind runNodeKind(const RunTopology& topology);
// A recorded machine that each of `nodes` hosts is (import --topology): its GPUs.
NodeKind machineNodeKind(const MachineTopology& machine, int nodes);

}  // namespace cb
