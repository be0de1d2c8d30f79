// SIGINT/SIGTERM handling: the handler only sets a flag; long loops poll it and stop at the next
// safe point, so the run is finalized (marked interrupted) and shared memory is released.
// The flag is the one process-wide mutable state collbench has: a signal handler can reach
// nothing else.
#pragma once

namespace cb {

void installInterruptHandlers();
bool interruptRequested();
int interruptSignal();           // the signal number received, 0 if none
void requestInterrupt(int sig);  // for tests and the handler

}  // namespace cb
