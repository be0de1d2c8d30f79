// Launchers of the CUDA reduction kernels, one instantiation per storage type and functor
// (explicitly instantiated in Kernels.cu). C++17, so nvcc and the C++20 host files share it;
// DeviceReduce.h maps DataType/RedOp onto these.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cb {

// dst[i] = Fn{}(a[i], b[i]) for i < n, on `stream`. dst may alias a or b exactly.
template <class T, class Fn>
void launchReduceKernel(T* dst, const T* a, const T* b, size_t n, cudaStream_t stream);
// p[i] = p[i] / divisor for i < n, on `stream`.
template <class T>
void launchScaleKernel(T* p, size_t n, int divisor, cudaStream_t stream);

}  // namespace cb
