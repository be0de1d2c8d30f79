#include "collectives/transport/Transports.h"

#include <fmt/format.h>

#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalWorld.h"
#include "collectives/transport/ShmTransport.h"
#include "collectives/transport/UcxTransport.h"
#include "core/Error.h"
#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/GpuDevice.h"
#endif

namespace cb {
namespace {

// The checks take a const communicator (that is what the registry hands them), but agreeing
// across ranks means talking: the collectives change no state of the communicator that callers
// could observe.
Communicator& talk(const Communicator& comm) { return const_cast<Communicator&>(comm); }

bool oneHost(const Communicator& comm, double seconds) {
  if (comm.worldKind() == WorldKind::kLocal) return true;
  return allRanksOnOneHost(talk(comm), Deadline::after(seconds));
}

}  // namespace

std::vector<std::string> transportNames() {
#if defined(COLLBENCH_HAVE_CUDA)
  return {"local", "mpi", "shm", "ucx", "cuda"};
#else
  return {"local", "mpi", "shm", "ucx"};
#endif
}

std::optional<std::string> transportUnsupported(const std::string& name, const Communicator& comm,
                                                double setupSeconds) {
  if (name == "local") {
    if (comm.worldKind() != WorldKind::kLocal) {
      return std::string("the local transport needs a local (threads) world");
    }
    return std::nullopt;
  }
  if (name == "mpi") {
    if (comm.worldKind() != WorldKind::kMpi) {
      return std::string("the mpi transport needs an MPI world (run under mpirun)");
    }
    return std::nullopt;
  }
  if (name == "shm") {
    if (!oneHost(comm, setupSeconds)) {
      return std::string("the shm transport needs all ranks on one host");
    }
    return std::nullopt;
  }
  // UCX is always built in; whether it works here shows when the transport is made (all ranks
  // fail together then), so probing it on every check is not worth a UCP context each time.
  if (name == "ucx") return std::nullopt;
#if defined(COLLBENCH_HAVE_CUDA)
  // Not a host transport: the engine runs the schedule with the CUDA executor on device buffers,
  // over NCCL point-to-point (collectives/nccl/CudaSchedule.h).
  if (name == "cuda") return gpuUnavailableReason();
#endif
  return fmt::format("unknown transport '{}' (known: {})", name, fmt::join(transportNames(), ", "));
}

std::string defaultTransport(const Communicator& comm, double setupSeconds) {
  if (comm.worldKind() == WorldKind::kLocal) return "local";
  if (oneHost(comm, setupSeconds)) return "shm";
  bool ucxBroken = ucxUnavailable().has_value();
  if (!talk(comm).anyTrue(ucxBroken, Deadline::after(setupSeconds))) return "ucx";
  return "mpi";
}

std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm,
                                         const TransportOptions& o) {
  if (auto why = transportUnsupported(name, comm, o.setupSeconds)) throw UsageError(*why);
  if (name == "cuda") {
    throw InternalError(
        "the cuda transport has no host side: schedules run on it through "
        "deviceScheduleVariant()");
  }
  if (name == "local") return makeLocalTransport(comm);
  if (name == "shm") {
    ShmOptions shm;
    shm.zeroCopyBytes = o.shmZeroCopyBytes;
    shm.setupSeconds = o.setupSeconds;
    return makeShmTransport(comm, shm);
  }
  if (name == "ucx") {
    UcxOptions ucx;
    ucx.setupSeconds = o.setupSeconds;
    return makeUcxTransport(comm, ucx);
  }
  return makeMpiTransport(comm);
}

}  // namespace cb
