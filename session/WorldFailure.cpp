#include "session/WorldFailure.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {
namespace {

// Seconds MPI_Finalize may take after an error every rank shares before the process ends itself.
constexpr int kFinalizeGraceSeconds = 10;

[[noreturn]] void printAndAbort(const std::string& line, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "collbench: %s\n", printable(line).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);  // MPI_Abort does not return; if a broken library does, do not finalize either
}

void armFinalizeWatchdog(const std::string& line, int code) {
  std::thread([line, code] {
    std::this_thread::sleep_for(std::chrono::seconds(kFinalizeGraceSeconds));
    std::fflush(stdout);
    std::fprintf(stderr, "collbench: %s (MPI_Finalize did not return within %d s)\n",
                 printable(line).c_str(), kFinalizeGraceSeconds);
    std::fflush(stderr);
    _exit(code);
  }).detach();
}

bool sharedByEveryRank(ErrorKind kind) {
  return kind == ErrorKind::kUsage || kind == ErrorKind::kEnvironment ||
         kind == ErrorKind::kInterrupted;
}

}  // namespace

void runMpiRank(MpiWorld& world, const std::function<void(Communicator&)>& fn) {
  try {
    fn(world.world());
  } catch (const Error& e) {
    if (!sharedByEveryRank(e.kind())) printAndAbort(e.what(), exitCodeFor(e.kind()));
    armFinalizeWatchdog(e.what(), exitCodeFor(e.kind()));
    throw;
  } catch (const std::bad_alloc&) {
    printAndAbort("out of memory", 2);
  } catch (const std::exception& e) {
    printAndAbort(std::string("internal error: ") + e.what(), 2);
  }
}

}  // namespace cb
