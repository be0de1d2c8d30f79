// Validation of the GPU run options (see GpuOptions.h).
#include "collectives/nccl/GpuOptions.h"

#include <fmt/format.h>

#include "core/Error.h"

namespace cb {

GpuOptions gpuOptionsFrom(const VariantOptions& o) {
  if (o.blockingWait != 0 && o.blockingWait != 1) {
    throw UsageError(fmt::format("-z/--blocking must be 0 or 1, not {}", o.blockingWait));
  }
  if (o.graphLaunches < 0) {
    throw UsageError(fmt::format("-G/--cudagraph must be >= 0, not {}", o.graphLaunches));
  }
  if (o.bufferRegistration < 0 || o.bufferRegistration > 2) {
    throw UsageError(
        fmt::format("-R/--local-register must be 0, 1 or 2, not {}", o.bufferRegistration));
  }
  if (!(o.prepareTimeoutSeconds > 0)) {
    throw UsageError(
        fmt::format("the set-up timeout must be > 0 s, not {}", o.prepareTimeoutSeconds));
  }
  return {o.blockingWait, o.graphLaunches, o.bufferRegistration, o.prepareTimeoutSeconds};
}

double perCallSeconds(float elapsedMs, int calls) {
  if (calls < 1) throw InternalError(fmt::format("perCallSeconds: {} calls", calls));
  return static_cast<double>(elapsedMs) * 1e-3 / calls;
}

}  // namespace cb
