// How registry variants of hand-written algorithms map the user's VariantOptions onto the
// AlgoOptions a schedule is built with; shared by the host variants (ScheduleVariants.cpp) and the
// CUDA executor's (collectives/nccl/CudaSchedule.cpp).
#pragma once

#include "collectives/Registry.h"
#include "collectives/algorithms/Algorithms.h"

namespace cb {

// Chunk in elements and --ranks-per-node as given (0: the real hosts, see algoOptionsFor).
AlgoOptions algoOptions(const CollArgs& args, const VariantOptions& v);
// --ranks-per-node 0 means "the real hosts": when every host holds the same number of
// consecutive ranks, that number is the node size; otherwise (one host, or a scattered
// placement the hierarchical schedules can't express) the whole world is one node. Collective.
int ranksPerHost(Communicator& comm, double seconds);
// algoOptions with the node size resolved (collective when --ranks-per-node is 0).
AlgoOptions algoOptionsFor(Communicator& comm, const CollArgs& args, const VariantOptions& v);

}  // namespace cb
