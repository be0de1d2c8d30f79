// NCCL's own account of what it ran: with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=TUNING, rank 0 of
// each communicator logs one line per planned collective (NCCL 2.28, src/enqueue.cc):
//   "<host>:<pid>:<tid> [<dev>] NCCL INFO AllReduce: 1048576 Bytes -> Algo Ring proto LL128
//    channel{Lo..Hi}={0..31}"
// or, for a call on symmetric windows (src/scheduler/symmetric_sched.cc):
//   "... NCCL INFO AllReduce [Symmetric]: 1024 Bytes -> Kernel AllReduce_AGxLL_R nchannels 1
//    nthreads 512 nWorks 1"
// Bytes are count x element size (the per-rank count NCCL was called with). Point-to-point
// calls (alltoall, sendrecv) log no such line.
//
// `--nccl-choice` turns the logging on for the run (NcclTuningLog) and each NCCL point records
// the choice in its message; this file parses the lines (pure, tested on the host).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/Collective.h"

namespace cb {

struct NcclTuningLine {
  std::string func;  // "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"
  uint64_t bytes = 0;
  std::string algo;    // "Ring", ... ("" for a symmetric kernel)
  std::string proto;   // "LL", "LL128", "Simple" ("" for a symmetric kernel)
  std::string kernel;  // symmetric kernel name ("" otherwise)
};

// nullopt for any other line.
std::optional<NcclTuningLine> parseNcclTuningLine(std::string_view line);
// NCCL's name of a collective in those lines ("" for alltoall and sendrecv).
std::string_view ncclFuncName(Collective c);
// What NCCL ran for `bytes` of `c` according to `lines`: "Ring/LL128", "symmetric kernel
// AllReduce_AGxLL_R", several joined by ", " if they differ, or "" when no line matches.
std::string ncclChoiceFor(std::span<const std::string> lines, Collective c, uint64_t bytes);
// The point's note: "NCCL ran Ring/LL128", plus, when the variant forced an algorithm and/or a
// protocol ("" = not forced) that NCCL did not run, "; NOT the forced Tree/LL". "" without a
// choice.
std::string ncclChoiceNote(const std::string& choice, const std::string& forcedAlgo,
                           const std::string& forcedProto);

// The process-wide capture behind --nccl-choice: enable() sets NCCL_DEBUG=INFO,
// NCCL_DEBUG_SUBSYS=TUNING and NCCL_DEBUG_FILE to a private file before NCCL initializes, and
// drain() returns the lines written since the last drain. Throws UsageError if the user already
// set NCCL_DEBUG or NCCL_DEBUG_FILE (their log would be taken away).
class NcclTuningLog {
 public:
  static void enable();
  static bool enabled();
  static std::vector<std::string> drain();
  // Removes the file (at exit of the run).
  static void close();
};

}  // namespace cb
