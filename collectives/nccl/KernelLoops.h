// The element loops of the CUDA reduction kernels, shared with the host (CB_HD): a kernel thread
// runs them with its global index as `first` and the grid size as `stride`, and the host tests run
// them for every simulated thread, so the indexing the GPU uses is tested without a GPU.
// C++17, included by nvcc.
#pragma once

#include <cstddef>

#include "core/HostDevice.h"
#include "core/Reduce.h"

namespace cb {

// dst[i] = fn(a[i], b[i]) for i = first, first + stride, ... < n. dst may alias a or b exactly.
template <class T, class Fn>
CB_HD void reduceStrided(T* dst, const T* a, const T* b, size_t n, size_t first, size_t stride,
                         Fn fn) {
  for (size_t i = first; i < n; i += stride) dst[i] = fn(a[i], b[i]);
}

// p[i] = p[i] / divisor (the last step of avg) on the same index pattern.
template <class T>
CB_HD void scaleStrided(T* p, size_t n, int divisor, size_t first, size_t stride) {
  for (size_t i = first; i < n; i += stride) p[i] = divideBy(p[i], divisor);
}

constexpr unsigned kKernelThreads = 256;
constexpr unsigned kKernelMaxBlocks = 4096;  // beyond this, threads loop (grid-stride)

// Blocks for n elements: enough to cover n once, at most kKernelMaxBlocks, at least 1.
inline unsigned kernelBlocks(size_t n) {
  size_t blocks = (n + kKernelThreads - 1) / kKernelThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kKernelMaxBlocks) blocks = kKernelMaxBlocks;
  return static_cast<unsigned>(blocks);
}

}  // namespace cb
