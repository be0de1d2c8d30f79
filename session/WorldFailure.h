// How an MPI world ends after an error. MPI_Finalize is collective: a rank that finalizes while a
// peer is stopped, gone or still inside a collective waits for ever (seen: ranks spinning in
// MPI_Finalize for minutes after a -T timeout). So a rank whose error its peers may not share
// (a timeout, an MPI/UCX error, a database write, an internal error) prints its one line and calls
// MPI_Abort, which ends every rank of the job; errors every rank meets alike (bad options, a
// missing capability) finalize normally, under a watchdog that ends the process if finalizing
// does not return within a few seconds. After a signal (core/Interrupt.h) a rank leaves without
// MPI_Finalize, exit 128 + N: a wait given up on it may have left a call in flight, and mpirun,
// tearing the job down, would kill the rank in MPI_Finalize's fence.
#pragma once

#include <functional>

#include "collectives/mpi/MpiWorld.h"
#include "core/Communicator.h"

namespace cb {

// Runs fn on this rank of `world` and returns normally, or never: an error every rank shares is
// printed by the rank it reaches (rank 0: the others agreed silently) before MPI_Finalize, then
// the process exits with its code; any other error aborts the job.
void runMpiRank(MpiWorld& world, const std::function<void(Communicator&)>& fn);

}  // namespace cb
