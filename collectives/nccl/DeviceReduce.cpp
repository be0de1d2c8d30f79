// Maps DataType/RedOp onto the kernel instantiations of Kernels.cu (see DeviceReduce.h).
#include "collectives/nccl/DeviceReduce.h"

#include <type_traits>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/Kernels.h"
#include "core/Error.h"
#include "core/Reduce.h"

namespace cb {

void deviceReduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t count,
                  cudaStream_t stream) {
  if (count == 0) return;
  dispatchDataType(t, [&]<class T>() {
    auto* d = static_cast<T*>(dst);
    const auto* x = static_cast<const T*>(a);
    const auto* y = static_cast<const T*>(b);
    dispatchRedOp<T>(op, [&]<class F>() { launchReduceKernel<T, F>(d, x, y, count, stream); });
  });
  checkCuda(cudaGetLastError(), "reduction kernel launch");
}

void deviceScale(DataType t, void* buf, size_t count, int n, cudaStream_t stream) {
  if (count == 0) return;
  dispatchDataType(
      t, [&]<class T>() { launchScaleKernel<T>(static_cast<T*>(buf), count, n, stream); });
  checkCuda(cudaGetLastError(), "scale kernel launch");
}

}  // namespace cb
