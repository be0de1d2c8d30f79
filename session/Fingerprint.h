// The fingerprint of a run: what must match for two runs to be comparable (hashed) and what is
// only shown. The session builds it from the run record (versions, world), the host map and the
// host facts the topology layer reads; new facts go into topology's pieces, not here.
#pragma once

#include "core/HostMap.h"
#include "results/Records.h"
#include "topology/Environment.h"
#include "topology/Placement.h"

namespace cb {

// What one rank sees (every rank builds the same unless its environment differs). Comparable:
// collbench version, compiler and build type, MPI/UCX/CUDA/NCCL versions, CPU model, world kind
// and size, host count, the relevant environment variables. Informative: hosts, kernel, cores,
// NUMA nodes.
Fingerprint buildFingerprint(const RunRecord& record, const HostMap& hosts, const HostInfo& host);

// The run-wide parts from the run's topology (every host's): GPU model and count, NVIDIA driver,
// ranks per host and the topology summary hash (topology/Placement.h, RunTopology::fingerprint).
void addTopology(Fingerprint& fp, const RunTopology& topology);

}  // namespace cb
