#include "collectives/transport/Transports.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/mpi/MpiNativeTransport.h"
#include "collectives/mpi/MpiTransport.h"
#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalTransport.h"
#include "collectives/transport/LocalWorld.h"
#include "collectives/transport/ShmTransport.h"
#include "collectives/transport/UcxTransport.h"
#include "core/Error.h"
#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/GpuDevice.h"
#endif

namespace cb {

std::vector<std::string> transportNames() {
#if defined(COLLBENCH_HAVE_CUDA)
  return {"local", "mpi", "shm", "ucx", "cuda"};
#else
  return {"local", "mpi", "shm", "ucx"};
#endif
}

std::vector<std::string> pointToPointTransportNames() {
  return {"local", "mpi", "shm", "ucx", std::string(kMpiNativeTransport)};
}

std::optional<std::string> transportUnsupported(const std::string& name, WorldKind kind,
                                                const HostMap& hosts) {
  if (name == "local") {
    if (kind != WorldKind::kLocal) {
      return std::string("the local transport needs a local (threads) world");
    }
    return std::nullopt;
  }
  if (name == "mpi" || name == kMpiNativeTransport) {
    if (kind != WorldKind::kMpi) {
      return fmt::format("the {} transport needs an MPI world (run under mpirun)", name);
    }
    return std::nullopt;
  }
  if (name == "shm") {
    if (kind != WorldKind::kLocal && !hosts.oneHost()) {
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
  return fmt::format("unknown transport '{}' (known: {})", name,
                     fmt::join(pointToPointTransportNames(), ", "));
}

std::string defaultTransport(Communicator& comm, const HostMap& hosts, Deadline d) {
  if (comm.worldKind() == WorldKind::kLocal) return "local";
  if (hosts.oneHost()) return "shm";
  bool ucxBroken = ucxUnavailable().has_value();
  if (!comm.anyTrue(ucxBroken, d)) return "ucx";
  return "mpi";
}

std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm,
                                         const HostMap& hosts, const TransportOptions& o) {
  if (auto why = transportUnsupported(name, comm.worldKind(), hosts)) throw UsageError(*why);
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
  if (name == kMpiNativeTransport) return makeMpiNativeTransport(comm);
  return makeMpiTransport(comm);
}

}  // namespace cb
