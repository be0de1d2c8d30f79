// Element-wise reduction functors shared by the host executors and the CUDA kernels (CB_HD), and
// the type-erased host entry points used by every host transport.
//
// Integer sum and product wrap modulo 2^bits (computed in the unsigned type, so no signed
// overflow UB): wrapping arithmetic is associative and commutative, so any reduction order gives
// the same bits, as with NCCL and MPI. avg = sum, then one division by n at the end (integers
// truncate), which is how NCCL computes ncclAvg for integer types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/Half.h"
#include "core/HostDevice.h"
#if !defined(__CUDACC__)
// DataType.h needs C++20 (std::span); nvcc compiles C++17, and kernels only need the functors.
#include "core/DataType.h"
#include "core/Error.h"
#endif

namespace cb {

// Arithmetic view of a storage type: half and bfloat16 compute in float.
template <class T>
struct Arith {
  using Type = T;
  static CB_HD T load(T v) { return v; }
  static CB_HD T store(T v) { return v; }
};
template <>
struct Arith<Half> {
  using Type = float;
  static CB_HD float load(Half v) { return halfToFloat(v); }
  static CB_HD Half store(float v) { return floatToHalf(v); }
};
template <>
struct Arith<BFloat16> {
  using Type = float;
  static CB_HD float load(BFloat16 v) { return bf16ToFloat(v); }
  static CB_HD BFloat16 store(float v) { return floatToBf16(v); }
};

template <class T>
struct SumFn {
  CB_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      using A = Arith<T>;
      return A::store(A::load(a) + A::load(b));
    }
  }
};
template <class T>
struct ProdFn {
  CB_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Promote to at least unsigned int so uint16-sized products can't overflow int.
      using U =
          std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      using A = Arith<T>;
      return A::store(A::load(a) * A::load(b));
    }
  }
};
template <class T>
struct MaxFn {
  CB_HD T operator()(T a, T b) const {
    using A = Arith<T>;
    return A::load(a) < A::load(b) ? b : a;
  }
};
template <class T>
struct MinFn {
  CB_HD T operator()(T a, T b) const {
    using A = Arith<T>;
    return A::load(b) < A::load(a) ? b : a;
  }
};
template <class T>
struct BandFn {
  CB_HD T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <class T>
struct BorFn {
  CB_HD T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <class T>
struct BxorFn {
  CB_HD T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// x / n for the final step of avg. Integers divide in the promoted type, truncating toward zero
// as NCCL's ncclDevSumPostDiv does (casting n to T first would make n = 128 negative in int8 and
// n = 256 zero in uint8).
template <class T>
CB_HD T divideBy(T x, int n) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(static_cast<int64_t>(x) / n);
    } else {
      return static_cast<T>(static_cast<uint64_t>(x) / static_cast<uint64_t>(n));
    }
  } else {
    using A = Arith<T>;
    return A::store(A::load(x) / static_cast<typename A::Type>(n));
  }
}

#if !defined(__CUDACC__)
// Host-only from here: the type-erased entry points need DataType/RedOp.

// Calls fn.template operator()<T>() with the storage type of `t`.
template <class Fn>
decltype(auto) dispatchDataType(DataType t, Fn&& fn) {
  switch (t) {
    case DataType::kInt8: return fn.template operator()<int8_t>();
    case DataType::kUint8: return fn.template operator()<uint8_t>();
    case DataType::kInt32: return fn.template operator()<int32_t>();
    case DataType::kUint32: return fn.template operator()<uint32_t>();
    case DataType::kInt64: return fn.template operator()<int64_t>();
    case DataType::kUint64: return fn.template operator()<uint64_t>();
    case DataType::kHalf: return fn.template operator()<Half>();
    case DataType::kBFloat16: return fn.template operator()<BFloat16>();
    case DataType::kFloat: return fn.template operator()<float>();
    case DataType::kDouble: return fn.template operator()<double>();
  }
  return fn.template operator()<float>();
}

// Calls fn.template operator()<F>() with F the functor of `op` on elements of type T (SumFn for
// kAvg: the division by n comes once, at the end). The host reduction and the CUDA kernels both
// pick their functor here. Bitwise ops on floating-point types throw UsageError.
template <class T, class Fn>
void dispatchRedOp(RedOp op, Fn&& fn) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: fn.template operator()<SumFn<T>>(); return;
    case RedOp::kProd: fn.template operator()<ProdFn<T>>(); return;
    case RedOp::kMax: fn.template operator()<MaxFn<T>>(); return;
    case RedOp::kMin: fn.template operator()<MinFn<T>>(); return;
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor:
      if constexpr (std::is_integral_v<T>) {
        if (op == RedOp::kBand) fn.template operator()<BandFn<T>>();
        if (op == RedOp::kBor) fn.template operator()<BorFn<T>>();
        if (op == RedOp::kBxor) fn.template operator()<BxorFn<T>>();
      } else {
        throw UsageError("bitwise reduction on a floating-point type");
      }
      return;
  }
}

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b exactly (not partially).
// For kAvg this is the sum; call scaleForAvg once on the final result.
// `wholeBytes` is the size of the destination region this call is one piece of (a transport
// reduces a message fill by fill): when that region can't stay in cache, float/double sums
// use streaming stores. 0 means the call is the whole region.
void reduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t count,
            size_t wholeBytes = 0);
// memcpy for one piece of a copy whose destination region totals `wholeBytes`: large regions
// are written with streaming stores (no read-for-ownership of lines that won't be reused soon).
void copyPiece(void* dst, const void* src, size_t bytes, size_t wholeBytes);
// The policy both use: true when a destination region of max(bytes, wholeBytes) is written with
// streaming stores (where the CPU has them).
bool useStreamingStores(size_t bytes, size_t wholeBytes);
// buf[i] = buf[i] / n (the final step of avg).
void scaleForAvg(DataType t, void* buf, size_t count, int n);
#endif  // !defined(__CUDACC__)

}  // namespace cb
