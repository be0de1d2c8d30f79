// Transport selection by name for the host executor: "local" (threads, zero-copy), "mpi" (MPI
// point-to-point), "shm" (POSIX shared memory between the processes of one host) and "ucx" (UCP
// tag messages). "" picks the default for the world.
//
// In an MPI world transportUnsupported("shm"), defaultTransport() and makeTransport() are
// collective over `comm` (they allgather host names, probe UCX, set up segments and endpoints):
// every rank must call them in the same order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/transport/ShmTransport.h"
#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

// `setupSeconds` bounds every collective wait below (the run's -T, so a stopped or lost rank ends
// the run within the deadline the user gave, whichever step it happens to be in).
struct TransportOptions {
  double setupSeconds = 60;
  size_t shmZeroCopyBytes = kDefaultZeroCopyBytes;  // ShmOptions::zeroCopyBytes
};

std::vector<std::string> transportNames();
// Why `name` can't be used with `comm` (nullopt: it can). Unknown names are a reason too.
std::optional<std::string> transportUnsupported(const std::string& name, const Communicator& comm,
                                                double setupSeconds = 60);
// "local" in the local world; in an MPI world "shm" when all ranks share one host, else "ucx"
// when UCX works on every rank, else "mpi".
std::string defaultTransport(const Communicator& comm, double setupSeconds = 60);
std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm,
                                         const TransportOptions& o = {});

}  // namespace cb
