// Transport selection by name for the host executor: "local" (threads, zero-copy), "mpi"
// (MPI point-to-point); later "shm" and "ucx". "" picks the default for the world.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

std::vector<std::string> transportNames();
// Why `name` can't be used with `comm` (nullopt: it can). Unknown names are a reason too.
std::optional<std::string> transportUnsupported(const std::string& name, const Communicator& comm);
std::string defaultTransport(const Communicator& comm);
std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm);

}  // namespace cb
