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

std::vector<std::string> transportNames();
// Why `name` can't be used with `comm` (nullopt: it can). Unknown names are a reason too.
std::optional<std::string> transportUnsupported(const std::string& name, const Communicator& comm);
// "local" in the local world; in an MPI world "shm" when all ranks share one host, else "ucx"
// when UCX works on every rank, else "mpi".
std::string defaultTransport(const Communicator& comm);
// `shmZeroCopyBytes`: the shm transport's zero-copy threshold (ShmOptions::zeroCopyBytes).
std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm,
                                         size_t shmZeroCopyBytes = kDefaultZeroCopyBytes);

}  // namespace cb
