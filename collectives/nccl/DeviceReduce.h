// Type-erased device reductions for the CUDA schedule executor, mirroring cb::reduce and
// cb::scaleForAvg on the host (same functors, same avg = sum then one division).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/DataType.h"

namespace cb {

// dst[i] = a[i] op b[i] for i < count, enqueued on `stream`; kAvg reduces as kSum. Throws
// UsageError for a bitwise op on a floating-point type (as the host does).
void deviceReduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t count,
                  cudaStream_t stream);
// buf[i] = buf[i] / n, enqueued on `stream`.
void deviceScale(DataType t, void* buf, size_t count, int n, cudaStream_t stream);

}  // namespace cb
