#include "session/World.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "session/WorldFailure.h"

namespace cb {

void runInWorld(const WorldOptions& o, const std::function<void(Communicator&)>& fn) {
  if (launchedByMpiLauncher()) {
    if (o.np != kNpNotGiven) {
      throw UsageError(
          "--np sets the size of the local (threads) world; under mpirun/srun the "
          "launcher sets the number of ranks");
    }
    MpiWorld world;
    runMpiRank(world, fn);  // an error a peer may not share aborts the job (no MPI_Finalize)
    return;
  }
  int np = o.np;
  if (np == kNpNotGiven) np = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  if (np < 1 || np > kMaxLocalRanks) {
    throw UsageError(fmt::format("--np {} is out of range (1..{})", np, kMaxLocalRanks));
  }
  LocalWorld::run(np, fn);
}

}  // namespace cb
