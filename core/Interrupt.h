// SIGINT/SIGTERM handling: the handler only sets a flag; long loops poll it and stop at the next
// safe point, so the run is finalized (marked interrupted) and shared memory is released.
// The flag is the one process-wide mutable state collbench has: a signal handler can reach
// nothing else.
#pragma once

#include <cstddef>
#include <functional>

#include "core/Clock.h"

namespace cb {

class Communicator;

void installInterruptHandlers();
bool interruptRequested();
int interruptSignal();           // the signal number received, 0 if none
void requestInterrupt(int sig);  // for tests and the handler

// Whether a wait should give up because of a signal. In the local world every wait does: the
// world is one process and its threads stop together. Under MPI a rank that leaves a wait alone
// leaves its peers' matching calls (and its own non-blocking collectives) in flight, and
// MPI_Finalize then crashes progressing them; so an MPI world defers interrupts: waits ignore the
// flag for a grace (0.5 s) in which the ranks meet at an agreed point (`stopIfInterrupted`), where
// every call has completed on every rank. A wait still going after the grace (one long call)
// gives up, since the launcher kills the ranks soon after; the rank must then leave without
// MPI_Finalize (`waitAbandonedOnInterrupt`).
bool interruptStopsWaits();
void deferInterruptsToAgreedPoints();  // MpiWorld, once MPI is up; never undone
bool waitAbandonedOnInterrupt();

// What an MPI rank does as soon as its rank board's watchdog (core/RankBoard.h) sees a signal, on
// that thread: rank 0's run session marks the run interrupted at once, as every way a signal can
// end the job leads there, and mpirun kills the ranks a second after its SIGTERM, which on a
// loaded host can come before the ranks meet at an agreed point. Set while the run is open; an
// empty function clears it. The hook must be safe against the main thread (RunSession locks).
void setInterruptHook(std::function<void()> hook);
void runInterruptHook();

// Writes zeros over [p, p + bytes) (faulting the pages in) in slices, throwing InterruptedError
// between them when interruptStopsWaits(): a full model's buffers took 40 s to fault in, far
// past a signal.
void zeroFillInterruptibly(void* p, size_t bytes);

// An agreed stop point (collective over `comm`): true on every rank when any rank has seen SIGINT
// or SIGTERM; a rank the signal missed then has its own flag set, so it ends the run alike.
bool interruptAgreed(Communicator& comm, Deadline d);
// Throws InterruptedError on every rank when interruptAgreed(comm, d).
void stopIfInterrupted(Communicator& comm, Deadline d);

}  // namespace cb
