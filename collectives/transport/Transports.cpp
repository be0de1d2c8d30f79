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

namespace {

std::optional<std::string> needsLocalWorld(std::string_view name, WorldKind kind, const HostMap&) {
  if (kind == WorldKind::kLocal) return std::nullopt;
  return fmt::format("the {} transport needs a local (threads) world", name);
}

std::optional<std::string> needsMpiWorld(std::string_view name, WorldKind kind, const HostMap&) {
  if (kind == WorldKind::kMpi) return std::nullopt;
  return fmt::format("the {} transport needs an MPI world (run under mpirun)", name);
}

std::optional<std::string> needsOneHost(std::string_view name, WorldKind kind,
                                        const HostMap& hosts) {
  if (kind == WorldKind::kLocal || hosts.oneHost()) return std::nullopt;
  return fmt::format("the {} transport needs all ranks on one host", name);
}

// UCX is always built in; whether it works here shows when the transport is made (all ranks fail
// together then), so probing it on every check is not worth a UCP context each time.
std::optional<std::string> anyWorld(std::string_view, WorldKind, const HostMap&) {
  return std::nullopt;
}

std::unique_ptr<Transport> makeShm(Communicator& comm, const TransportOptions& o) {
  ShmOptions shm;
  shm.zeroCopyBytes = o.shmZeroCopyBytes;
  shm.setupSeconds = o.setupSeconds;
  return makeShmTransport(comm, shm);
}

std::unique_ptr<Transport> makeUcx(Communicator& comm, const TransportOptions& o) {
  UcxOptions ucx;
  ucx.setupSeconds = o.setupSeconds;
  return makeUcxTransport(comm, ucx);
}

#if defined(COLLBENCH_HAVE_CUDA)
std::optional<std::string> needsGpu(std::string_view, WorldKind, const HostMap&) {
  return gpuUnavailableReason();
}
#endif

// One row per transport, in the order lists and help texts show them.
const TransportInfo kTransports[] = {
    {"local", "threads of one process: a message is one memcpy from the sender's buffer", true,
     needsLocalWorld,
     [](Communicator& c, const TransportOptions&) { return makeLocalTransport(c); }},
    {"mpi", "MPI point-to-point (MPI_Isend/MPI_Irecv) under the hand-written schedules", true,
     needsMpiWorld, [](Communicator& c, const TransportOptions&) { return makeMpiTransport(c); }},
    {"shm", "POSIX shared memory between the processes of one host (zero-copy past --zero-copy)",
     true, needsOneHost, makeShm},
    {"ucx", "UCX tag messages (UCP): shared memory, TCP, InfiniBand, as UCX picks", true, anyWorld,
     makeUcx},
#if defined(COLLBENCH_HAVE_CUDA)
    // Not a host transport: the engine runs the schedule with the CUDA executor on device
    // buffers, over NCCL point-to-point (collectives/nccl/CudaSchedule.h).
    {"cuda", "the CUDA executor on device buffers, over NCCL point-to-point", true, needsGpu,
     nullptr},
#endif
    {kMpiNativeTransport, "MPI_Isend/MPI_Irecv as OSU posts them, no reduction (p2p only)", false,
     needsMpiWorld,
     [](Communicator& c, const TransportOptions&) { return makeMpiNativeTransport(c); }},
};

const TransportInfo* findTransport(std::string_view name) {
  for (const auto& t : kTransports) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

std::span<const TransportInfo> transports() { return kTransports; }

std::vector<std::string> transportNames() {
  std::vector<std::string> out;
  for (const auto& t : kTransports) {
    if (t.collectives) out.emplace_back(t.name);
  }
  return out;
}

std::vector<std::string> pointToPointTransportNames() {
  std::vector<std::string> out;
  for (const auto& t : kTransports) {
    if (t.make) out.emplace_back(t.name);
  }
  return out;
}

std::optional<std::string> transportUnsupported(const std::string& name, WorldKind kind,
                                                const HostMap& hosts) {
  if (const TransportInfo* t = findTransport(name)) return t->unsupported(t->name, kind, hosts);
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
  const TransportInfo* t = findTransport(name);
  if (!t->make) {
    throw InternalError(
        fmt::format("the {} transport has no host side: schedules run on it through "
                    "deviceScheduleVariant()",
                    name));
  }
  return t->make(comm, o);
}

}  // namespace cb
