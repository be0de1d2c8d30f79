// How registry variants of hand-written algorithms map the user's ScheduleOptions onto the
// AlgoOptions a schedule is built with; shared by the host variants (ScheduleVariants.cpp) and the
// CUDA executor's (collectives/nccl/CudaSchedule.cpp).
#pragma once

#include "collectives/Registry.h"
#include "collectives/Team.h"
#include "collectives/algorithms/Algorithms.h"

namespace cb {

// Chunk in elements and --ranks-per-node as given (0: the real hosts, see algoOptionsFor).
AlgoOptions algoOptions(const CollArgs& args, const ScheduleOptions& v);
// algoOptions with the node size resolved: --ranks-per-node 0 means the real hosts, the team's
// host map tells how many consecutive ranks each holds (HostMap::ranksPerHost). Local.
AlgoOptions algoOptionsFor(const Team& team, const CollArgs& args, const ScheduleOptions& v);

}  // namespace cb
