// Schedules over MPI point-to-point (the "mpi" transport).
#pragma once

#include <memory>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

// UsageError unless comm is an MPI communicator. Uses comm's MPI communicator (collbench's own
// duplicate of the world's) with the reserved schedule tag.
std::unique_ptr<Transport> makeMpiTransport(Communicator& comm);

}  // namespace cb
