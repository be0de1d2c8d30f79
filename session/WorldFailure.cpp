#include "session/WorldFailure.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/InterruptLine.h"
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

// After a signal a rank leaves without MPI_Finalize. A wait given up on it (core/Interrupt.h) may
// have left a call in flight, a non-blocking collective among them: MPI_Finalize would progress
// it on freed buffers and crash (the segfaults in ompi_mpi_finalize -> libnbc ->
// mca_pml_ob1_isend). And the launcher is ending the job: finalizing waits in a fence for it.
// `meet`: every rank left the run at an agreed point, where every call had completed; the ranks
// then leave together, rank 0 last to arrive, after it marked the run interrupted: mpirun kills
// the others' peers as soon as one rank exits, and a rank 0 still storing the mark would die
// with the run left `running` (1 of 20 trials on 4 ranks).
[[noreturn]] void exitWithoutFinalize(const std::string& line, bool meet) {
  if (!line.empty()) printInterruptLineOnce(line);
  std::fflush(stdout);
  if (meet) MPI_Barrier(MPI_COMM_WORLD);
  _exit(exitCodeFor(ErrorKind::kInterrupted));
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
    if (waitAbandonedOnInterrupt()) exitWithoutFinalize(e.what(), false);
    if (!sharedByEveryRank(e.kind())) printAndAbort(e.what(), exitCodeFor(e.kind()));
    // Interrupted: the ranks met at an agreed point, where every call had completed, and the run
    // is marked. MPI_Finalize would not return (its fence needs the launcher, which is tearing
    // the job down) and mpirun would SIGKILL the rank inside it, mid-fence, a second later.
    if (e.kind() == ErrorKind::kInterrupted) exitWithoutFinalize(e.what(), true);
    // The line before MPI_Finalize: the peers that agreed on the error leave right after it with
    // a non-zero code, and mpirun then kills this rank before it could print afterwards.
    std::fflush(stdout);
    std::fprintf(stderr, "collbench: %s\n", printable(e.what()).c_str());
    std::fflush(stderr);
    armFinalizeWatchdog(e.what(), exitCodeFor(e.kind()));
    world.finalize();
    std::exit(exitCodeFor(e.kind()));
  } catch (const std::bad_alloc&) {
    printAndAbort("out of memory", 2);
  } catch (const std::exception& e) {
    printAndAbort(std::string("internal error: ") + e.what(), 2);
  }
  // The ranks other than 0 return from an interrupted run (rank 0 prints the line): they leave
  // the same way, so that every rank has left when mpirun's SIGTERM round ends.
  if (waitAbandonedOnInterrupt() || interruptRequested()) {
    exitWithoutFinalize("", !waitAbandonedOnInterrupt());
  }
}

}  // namespace cb
