// For a wait that nothing can abandon: a blocking MPI or NCCL call still running past its
// deadline (MPI can't cancel a barrier; NCCL can't abort a blocking init safely). A watchdog then
// ends the process with one line, which is better than hanging: the run is reaped as interrupted
// at the next open of the database.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/Error.h"

namespace cb {

// Prints "collbench: <what>" on stderr and ends the process at once with the timeout's exit code.
[[noreturn]] inline void exitStuck(const std::string& what) {
  std::fprintf(stderr, "collbench: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(exitCodeFor(ErrorKind::kTimeout));
}

}  // namespace cb
