// Transports by name: "local" (threads, zero-copy), "mpi" (MPI point-to-point), "shm" (POSIX
// shared memory between the processes of one host), "ucx" (UCP tag messages) carry the schedules
// of the hand-written algorithms; "mpi-native" (MPI_Isend/Irecv as OSU posts them, no reduction)
// is for point-to-point benchmarks only. Engines get transports from their Team (collectives/
// Team.h), which sets each up once and caches it; these are the functions it calls.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/transport/ShmTransport.h"
#include "core/Communicator.h"
#include "core/HostMap.h"
#include "core/Transport.h"

namespace cb {

// `setupSeconds` bounds every collective wait of a set-up (the run's -T, so a stopped or lost
// rank ends the run within the deadline the user gave, whichever step it happens to be in).
struct TransportOptions {
  double setupSeconds = 60;
  size_t shmZeroCopyBytes = kDefaultZeroCopyBytes;  // ShmOptions::zeroCopyBytes (--zero-copy)
};

inline constexpr std::string_view kMpiNativeTransport = "mpi-native";

// One row per transport: adding one is its file and a row in the table (Transports.cpp).
struct TransportInfo {
  std::string_view name;
  std::string_view description;
  bool collectives;  // carries the hand-written algorithms' schedules; false: point-to-point only
  // Why it can't be used in a world of this kind on these hosts (nullopt: it can).
  std::optional<std::string> (*unsupported)(std::string_view name, WorldKind kind,
                                            const HostMap& hosts);
  // Collective: sets it up over comm; null for a transport with no host side ("cuda").
  std::unique_ptr<Transport> (*make)(Communicator& comm, const TransportOptions& o);
};
std::span<const TransportInfo> transports();

// The transports of the hand-written algorithms (--transport of `run`; "cuda" in a GPU build:
// the CUDA executor, no host side).
std::vector<std::string> transportNames();
// Those and "mpi-native" (--transport of `p2p`).
std::vector<std::string> pointToPointTransportNames();
// Why `name` can't be used in a world of this kind on these hosts (nullopt: it can). Unknown
// names are a reason too. Local: no message.
std::optional<std::string> transportUnsupported(const std::string& name, WorldKind kind,
                                                const HostMap& hosts);
// "local" in the local world; in an MPI world "shm" when all ranks share one host, else "ucx"
// when UCX works on every rank, else "mpi". Collective only in the last case (UCX is probed on
// every rank and the ranks agree).
std::string defaultTransport(Communicator& comm, const HostMap& hosts, Deadline d);
// Collective: sets `name` up over comm. UsageError when transportUnsupported says why not.
std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm,
                                         const HostMap& hosts, const TransportOptions& o = {});

}  // namespace cb
