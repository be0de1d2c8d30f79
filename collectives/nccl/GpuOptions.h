// How GPU variants run a call, as nccl-tests' flags set it. The CLI parses them into
// cb::VariantOptions (gpu.blockingWait, gpu.graphLaunches, gpu.bufferRegistration,
// prepareTimeoutSeconds);
// gpuOptionsFrom() validates and copies them here.
//
//   -z blockingWait        nccl-tests' -z 1: in the nccl-tests timing loop, wait for each call and
//                          barrier after it, inside the timed batch (bench/TimingLoops). The
//                          per-call loop always waits for each call. Waits poll the stream.
//   -G graphLaunches N     nccl-tests loop: the batch of calls is captured once into a CUDA graph
//                          and launched N times; time = total / (calls x N), as nccl-tests.
//                          Per-call loop: each timed sample launches a graph of N calls, / N.
//   -R bufferRegistration  0: none; 1: ncclCommRegister on the engine's buffers (allocated with
//                          ncclMemAlloc, which NCCL 2.28 needs to register them); 2: symmetric
//                          windows (ncclCommWindowRegister), staged: see NcclVariants.cpp.
#pragma once

#include <cstddef>

#include "collectives/Registry.h"

namespace cb {

struct GpuOptions {
  int blockingWait = 0;
  int graphLaunches = 0;
  int bufferRegistration = 0;
  double prepareTimeoutSeconds = 300;
  size_t largestBytes = 0;  // the run's largest buffer side: -R 2 windows are this size
};

// Throws UsageError for values outside the ranges above.
GpuOptions gpuOptionsFrom(const VariantOptions& o);

// Device seconds per call from the event time of one run that executed `calls` calls
// (graph mode: graphLaunches; otherwise 1).
double perCallSeconds(float elapsedMs, int calls);
// Calls per run for these options.
inline int callsPerRun(const GpuOptions& o) { return o.graphLaunches > 0 ? o.graphLaunches : 1; }

}  // namespace cb
