// The world a command runs in: under mpirun/srun an MPI world of processes, else a local world of
// threads. Every rank runs the same function with its world communicator.
#pragma once

#include <functional>
#include <limits>

#include "core/Communicator.h"
#include "topology/Placement.h"

namespace cb {

// --np not given: the local world gets one rank per core, at least 2. (Not -1: a user's --np -1
// must be refused, not taken as the default.)
inline constexpr int kNpNotGiven = std::numeric_limits<int>::min();
inline constexpr int kMaxLocalRanks = 1024;

struct WorldOptions {
  int np = kNpNotGiven;                 // local world ranks
  BindPolicy bind = BindPolicy::kAuto;  // --bind: local world rank threads only
  // Every rank drives a GPU (a run of GPU variants only): --bind auto binds each local-world rank
  // thread to the CPUs local to its GPU (cpusNearGpu) instead of core r.
  bool gpuRanks = false;
};

// Throws UsageError for --np or --bind under a launcher, or --np out of range. With --bind each
// rank thread of the local world is bound (local rank = rank) before fn runs. Under MPI an error a
// peer may not share ends the job (session/WorldFailure.h) instead of returning.
void runInWorld(const WorldOptions& o, const std::function<void(Communicator&)>& fn);

}  // namespace cb
