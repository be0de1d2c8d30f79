#include "bench/Verify.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/Reduce.h"

namespace cb {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash(uint64_t seed, int rank, size_t i) {
  return mix(seed * 0x100000001b3ull ^ mix(static_cast<uint64_t>(rank) << 40 ^ i));
}

template <class T>
T fromInt(int64_t v) {
  if constexpr (std::is_same_v<T, Half>) {
    return floatToHalf(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return floatToBf16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Values of one rank's contribution, as integers (converted exactly to the type).
struct Pattern {
  const CollArgs& args;
  int nranks;
  uint64_t seed;

  // Bound for sums: n values below it (plus the avg adjustment) stay exact.
  int64_t sumBound() const {
    double limit = exactIntegerLimit(args.dtype);
    double b = (limit - nranks) / nranks;
    return static_cast<int64_t>(std::clamp(b, 1.0, 1000.0));
  }
  int64_t plainBound() const {
    return static_cast<int64_t>(std::min(exactIntegerLimit(args.dtype), 1000.0));
  }

  // Contribution of `rank` at element index i (index in the rank's send buffer).
  int64_t value(int rank, size_t i) const {
    uint64_t h = hash(seed, rank, i);
    bool reducing = hasReduction(args.coll);
    if (!reducing) {
      int64_t b = plainBound();
      int64_t v = static_cast<int64_t>(h % static_cast<uint64_t>(b));
      return isSigned(args.dtype) ? v - b / 2 : v;
    }
    switch (args.op) {
      case RedOp::kSum:
      case RedOp::kAvg: {
        int64_t v = static_cast<int64_t>(h % static_cast<uint64_t>(sumBound()));
        if (args.op == RedOp::kAvg && rank == nranks - 1) {
          // Make the sum over ranks a multiple of n so the average is an exact integer.
          int64_t total = 0;
          for (int r = 0; r < nranks; ++r) {
            total += static_cast<int64_t>(hash(seed, r, i) % static_cast<uint64_t>(sumBound()));
          }
          v += (nranks - total % nranks) % nranks;
        }
        return v;
      }
      case RedOp::kProd: {
        int64_t v = 1;
        if ((i + seed) % static_cast<uint64_t>(nranks) == static_cast<uint64_t>(rank) &&
            i % 4 == 0) {
          v = 2;
        }
        if (isSigned(args.dtype) &&
            (i + seed + 1) % static_cast<uint64_t>(nranks) == static_cast<uint64_t>(rank) &&
            i % 3 == 1) {
          v = -v;
        }
        return v;
      }
      case RedOp::kMax:
      case RedOp::kMin: {
        int64_t b = plainBound();
        int64_t v = static_cast<int64_t>(h % static_cast<uint64_t>(b));
        return isSigned(args.dtype) ? v - b / 2 : v;
      }
      default:  // bitwise: any bits of the low byte
        return static_cast<int64_t>(h & 0xff);
    }
  }

  template <class T>
  void fill(int rank, T* out, size_t count, size_t indexBase = 0) const {
    for (size_t i = 0; i < count; ++i) out[i] = fromInt<T>(value(rank, indexBase + i));
  }
};

template <class T>
bool expectedTyped(const CollArgs& args, int rank, int n, uint64_t seed, T* out) {
  Pattern p{args, n, seed};
  const size_t m = args.count;
  auto reduceAll = [&](size_t base, size_t count) {
    // out = reduce over ranks of each rank's elements [base, base+count).
    p.fill(0, out, count, base);
    std::vector<T> tmp(count);
    for (int r = 1; r < n; ++r) {
      p.fill(r, tmp.data(), count, base);
      reduce(args.dtype, args.op, out, out, tmp.data(), count);
    }
    if (args.op == RedOp::kAvg) scaleForAvg(args.dtype, out, count, n);
  };
  switch (args.coll) {
    case Collective::kAllReduce: reduceAll(0, m); return true;
    case Collective::kReduce:
      if (rank != args.root) return false;
      reduceAll(0, m);
      return true;
    case Collective::kReduceScatter: reduceAll(static_cast<size_t>(rank) * m, m); return true;
    case Collective::kBroadcast: p.fill(args.root, out, m); return true;
    case Collective::kAllGather:
      for (int j = 0; j < n; ++j) p.fill(j, out + static_cast<size_t>(j) * m, m);
      return true;
    case Collective::kAllToAll:
      for (int j = 0; j < n; ++j) {
        p.fill(j, out + static_cast<size_t>(j) * m, m, static_cast<size_t>(rank) * m);
      }
      return true;
    case Collective::kSendRecv: p.fill((rank - 1 + n) % n, out, m); return true;
  }
  return false;
}

}  // namespace

void fillInput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* send) {
  dispatchDataType(args.dtype, [&]<class T>() {
    Pattern{args, nranks, seed}.fill(rank, static_cast<T*>(send), sendCount(args, nranks));
  });
}

bool expectedOutput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* expected) {
  return dispatchDataType(args.dtype, [&]<class T>() {
    return expectedTyped(args, rank, nranks, seed, static_cast<T*>(expected));
  });
}

int64_t countWrong(DataType t, const void* got, const void* expected, size_t count) {
  const size_t es = dataTypeSize(t);
  const auto* a = static_cast<const unsigned char*>(got);
  const auto* b = static_cast<const unsigned char*>(expected);
  if (std::memcmp(a, b, count * es) == 0) return 0;
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(a + i * es, b + i * es, es) != 0) ++wrong;
  }
  return wrong;
}

}  // namespace cb
