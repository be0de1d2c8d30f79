#include "session/World.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/GpuDevice.h"
#endif
#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "session/Slurm.h"
#include "session/WorldFailure.h"

namespace cb {
namespace {

// Per local rank of a world of `np` GPU ranks: the CPUs near its GPU within this thread's mask
// (empty for a rank whose GPU the topology does not place, or without the GPU path).
std::vector<std::vector<int>> gpuCpusOfRanks(int np) {
  std::vector<std::vector<int>> out(np);
#if defined(COLLBENCH_HAVE_CUDA)
  if (gpuUnavailableReason()) return out;
  const int visible = gpuDeviceCount();
  const std::vector<int> allowed = threadCpus();
  for (int r = 0; r < np; ++r) {
    DeviceChoice choice = pickDevice(r, np, visible);
    if (choice.device < 0) continue;
    out[r] = cpusNearGpu(liveTopology(), describeDevice(choice.device).pciBusId, allowed);
  }
#else
  (void)np;
#endif
  return out;
}

}  // namespace

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
  std::vector<std::vector<int>> gpuCpus;
  if (o.bind == BindPolicy::kAuto && o.gpuRanks) gpuCpus = gpuCpusOfRanks(np);
  const bool anyGpuCpus = std::any_of(gpuCpus.begin(), gpuCpus.end(),
                                      [](const std::vector<int>& c) { return !c.empty(); });
  if (bind == BindPolicy::kNone && !anyGpuCpus) {
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
    if (anyGpuCpus && !gpuCpus[comm.rank()].empty()) {
      bindThisThreadTo(gpuCpus[comm.rank()], comm.rank());
    } else if (bind != BindPolicy::kNone) {
      bindThisThread(bind, comm.rank());
    }
    fn(comm);
  });
}

}  // namespace cb
