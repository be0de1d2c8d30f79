// CB_HD marks code shared by host and device (reduction functors, half/bfloat16 conversion),
// so the host tests exercise exactly what the GPU kernels run.
#pragma once

#if defined(__CUDACC__)
#define CB_HD __host__ __device__ __forceinline__
#else
#define CB_HD inline
#endif
