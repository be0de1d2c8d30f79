// The CUDA reduction kernels: thin wrappers that run KernelLoops.h's shared element loops with the
// SAME functors the host executors use (core/Reduce.h), for every storage type and operator.
#include <cstdint>

#include "collectives/nccl/KernelLoops.h"
#include "collectives/nccl/Kernels.h"
#include "core/Half.h"
#include "core/Reduce.h"

namespace cb {
namespace {

__device__ __forceinline__ size_t globalThread() {
  return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ size_t gridThreads() {
  return static_cast<size_t>(gridDim.x) * blockDim.x;
}

template <class T, class Fn>
__global__ void reduceKernel(T* dst, const T* a, const T* b, size_t n) {
  reduceStrided(dst, a, b, n, globalThread(), gridThreads(), Fn{});
}

template <class T>
__global__ void scaleKernel(T* p, size_t n, int divisor) {
  scaleStrided(p, n, divisor, globalThread(), gridThreads());
}

}  // namespace

template <class T, class Fn>
void launchReduceKernel(T* dst, const T* a, const T* b, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  reduceKernel<T, Fn><<<kernelBlocks(n), kKernelThreads, 0, stream>>>(dst, a, b, n);
}

template <class T>
void launchScaleKernel(T* p, size_t n, int divisor, cudaStream_t stream) {
  if (n == 0) return;
  scaleKernel<T><<<kernelBlocks(n), kKernelThreads, 0, stream>>>(p, n, divisor);
}

// Every storage type with sum/prod/max/min and the scale step; bitwise ops for integers only.
#define CB_REDUCE_ARITH(T)                                                                      \
  template void launchReduceKernel<T, SumFn<T>>(T*, const T*, const T*, size_t, cudaStream_t);  \
  template void launchReduceKernel<T, ProdFn<T>>(T*, const T*, const T*, size_t, cudaStream_t); \
  template void launchReduceKernel<T, MaxFn<T>>(T*, const T*, const T*, size_t, cudaStream_t);  \
  template void launchReduceKernel<T, MinFn<T>>(T*, const T*, const T*, size_t, cudaStream_t);  \
  template void launchScaleKernel<T>(T*, size_t, int, cudaStream_t);
#define CB_REDUCE_BITWISE(T)                                                                    \
  template void launchReduceKernel<T, BandFn<T>>(T*, const T*, const T*, size_t, cudaStream_t); \
  template void launchReduceKernel<T, BorFn<T>>(T*, const T*, const T*, size_t, cudaStream_t);  \
  template void launchReduceKernel<T, BxorFn<T>>(T*, const T*, const T*, size_t, cudaStream_t);

CB_REDUCE_ARITH(int8_t)
CB_REDUCE_ARITH(uint8_t)
CB_REDUCE_ARITH(int32_t)
CB_REDUCE_ARITH(uint32_t)
CB_REDUCE_ARITH(int64_t)
CB_REDUCE_ARITH(uint64_t)
CB_REDUCE_ARITH(Half)
CB_REDUCE_ARITH(BFloat16)
CB_REDUCE_ARITH(float)
CB_REDUCE_ARITH(double)
CB_REDUCE_BITWISE(int8_t)
CB_REDUCE_BITWISE(uint8_t)
CB_REDUCE_BITWISE(int32_t)
CB_REDUCE_BITWISE(uint32_t)
CB_REDUCE_BITWISE(int64_t)
CB_REDUCE_BITWISE(uint64_t)

#undef CB_REDUCE_ARITH
#undef CB_REDUCE_BITWISE

}  // namespace cb
