// Validation of the GPU run options (see GpuOptions.h).
#include "collectives/nccl/GpuOptions.h"

#include <fmt/format.h>

#include "core/Error.h"

namespace cb {

GpuOptions gpuOptionsFrom(const VariantOptions& o) {
  if (o.gpu.blockingWait != 0 && o.gpu.blockingWait != 1) {
    throw UsageError(fmt::format("-z/--blocking must be 0 or 1, not {}", o.gpu.blockingWait));
  }
  if (o.gpu.graphLaunches < 0) {
    throw UsageError(fmt::format("-G/--cudagraph must be >= 0, not {}", o.gpu.graphLaunches));
  }
  if (o.gpu.bufferRegistration < 0 || o.gpu.bufferRegistration > 2) {
    throw UsageError(
        fmt::format("-R/--local-register must be 0, 1 or 2, not {}", o.gpu.bufferRegistration));
  }
  if (!(o.prepareTimeoutSeconds > 0)) {
    throw UsageError(
        fmt::format("the set-up timeout must be > 0 s, not {}", o.prepareTimeoutSeconds));
  }
  return {o.gpu.blockingWait, o.gpu.graphLaunches, o.gpu.bufferRegistration,
          o.prepareTimeoutSeconds, o.gpu.largestBytes};
}

double perCallSeconds(float elapsedMs, int calls) {
  if (calls < 1) throw InternalError(fmt::format("perCallSeconds: {} calls", calls));
  return static_cast<double>(elapsedMs) * 1e-3 / calls;
}

}  // namespace cb
