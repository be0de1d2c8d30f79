#include "session/World.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "session/Slurm.h"
#include "session/WorldFailure.h"

namespace cb {

void runInWorld(const WorldOptions& o, const std::function<void(Communicator&)>& fn) {
  if (launchedByMpiLauncher()) {
    if (o.bind != BindPolicy::kNone && o.bind != BindPolicy::kAuto) {
      throw UsageError(
          "--bind binds the local world's rank threads; under mpirun bind the processes with "
          "mpirun --bind-to core|numa");
    }
    if (o.np != kNpNotGiven) {
      throw UsageError(
          "--np sets the size of the local (threads) world; under mpirun/srun the "
          "launcher sets the number of ranks");
    }
    MpiWorld world;
    runMpiRank(world, fn);  // an error a peer may not share aborts the job (no MPI_Finalize)
    return;
  }
  if (auto why = srunWithoutMpiPlugin()) throw UsageError(*why);
  int np = o.np;
  if (np == kNpNotGiven) np = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  if (np < 1 || np > kMaxLocalRanks) {
    throw UsageError(fmt::format("--np {} is out of range (1..{})", np, kMaxLocalRanks));
  }
  const BindPolicy bind = resolveBindPolicy(o.bind, np);
  if (bind == BindPolicy::kNone) {
    LocalWorld::run(np, fn);
    return;
  }
  // Rank threads are bound as mpirun binds processes; the local rank is the rank. Rank 0 runs
  // on the calling thread, which gets its own affinity back afterwards.
  cpu_set_t caller;
  const bool saved = pthread_getaffinity_np(pthread_self(), sizeof caller, &caller) == 0;
  struct Restore {
    bool saved;
    cpu_set_t* set;
    ~Restore() {
      if (saved) pthread_setaffinity_np(pthread_self(), sizeof *set, set);
    }
  } restore{saved, &caller};
  LocalWorld::run(np, [&](Communicator& comm) {
    bindThisThread(bind, comm.rank());
    fn(comm);
  });
}

}  // namespace cb
