// "mpi-native": point-to-point messages the way the OSU micro-benchmarks send them, as a
// Transport: post every receive, then every send (MPI_Irecv / MPI_Isend on a duplicate of the
// communicator, so nothing else can match them), then wait for all of them, with the deadline
// (MPI_Waitall could hang forever on a dead peer). No reduction: p2p benchmarks only.
#pragma once

#include <memory>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

// Collective over comm (MPI_Comm_dup). UsageError unless comm is an MPI communicator.
std::unique_ptr<Transport> makeMpiNativeTransport(Communicator& comm);

}  // namespace cb
