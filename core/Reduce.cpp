#include "core/Reduce.h"

#include "core/Error.h"

namespace cb {
namespace {

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
      case RedOp::kAvg: apply(d, x, y, count, SumFn<T>{}); break;
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
