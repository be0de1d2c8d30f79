#include "collectives/transport/Transports.h"

#include <fmt/format.h>

#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"

namespace cb {

std::vector<std::string> transportNames() { return {"local", "mpi"}; }

std::optional<std::string> transportUnsupported(const std::string& name, const Communicator& comm) {
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
  return fmt::format("unknown transport '{}' (known: local, mpi)", name);
}

std::string defaultTransport(const Communicator& comm) {
  return comm.worldKind() == WorldKind::kLocal ? "local" : "mpi";
}

std::unique_ptr<Transport> makeTransport(const std::string& name, Communicator& comm) {
  if (auto why = transportUnsupported(name, comm)) throw UsageError(*why);
  if (name == "local") return makeLocalTransport(comm);
  return makeMpiTransport(comm);
}

}  // namespace cb
