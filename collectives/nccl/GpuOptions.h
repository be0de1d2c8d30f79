// How GPU variants run a call, as nccl-tests' flags set it. The CLI parses them into
// cb::VariantOptions (blockingWait, graphLaunches, bufferRegistration, prepareTimeoutSeconds);
// gpuOptionsFrom() validates and copies them here.
//
//   -z blockingWait        0: the host polls the call's end event, checking NCCL's asynchronous
//                             error and the deadline (nccl-tests' testStreamSynchronize);
//                          1: the host sleeps in a blocking-sync event wait while a watchdog
//                             aborts the NCCL communicator at the deadline.
//   -G graphLaunches N     capture N calls into a CUDA graph once per buffer pair, then each run
//                          launches the graph; the reported time per call is total / N.
//   -R bufferRegistration  0: none; 1: ncclCommRegister on the engine's buffers; 2: symmetric
//                          windows (ncclMemAlloc + ncclCommWindowRegister), staged: see
//                          NcclVariants.cpp.
#pragma once

#include "collectives/Registry.h"

namespace cb {

struct GpuOptions {
  int blockingWait = 0;
  int graphLaunches = 0;
  int bufferRegistration = 0;
  double prepareTimeoutSeconds = 300;
};

// Throws UsageError for values outside the ranges above.
GpuOptions gpuOptionsFrom(const VariantOptions& o);

// Device seconds per call from the event time of one run that executed `calls` calls
// (graph mode: graphLaunches; otherwise 1).
double perCallSeconds(float elapsedMs, int calls);
// Calls per run for these options.
inline int callsPerRun(const GpuOptions& o) { return o.graphLaunches > 0 ? o.graphLaunches : 1; }

}  // namespace cb
