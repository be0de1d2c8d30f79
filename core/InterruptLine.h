// The one line an interrupted MPI job prints on rank 0, from whichever thread gets there first:
// the rank board's watchdog as soon as it sees the signal (mpirun may kill the rank before its
// main thread reaches a stop), or the main thread's own path.
#pragma once

#include <string>

namespace cb {

// Prints "collbench: <line>" on stderr unless an interrupt line was printed already.
void printInterruptLineOnce(const std::string& line);

}  // namespace cb
