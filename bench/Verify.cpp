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

// Per-element hash: a strong key per (seed, rank), then one multiply-xorshift per element, so a
// 64 MiB check costs tens of milliseconds, not seconds.
uint64_t rankKey(uint64_t seed, int rank) {
  return mix(seed * 0x100000001b3ull ^ mix(static_cast<uint64_t>(rank) + 1));
}
inline uint32_t elementHash(uint64_t key, size_t i) {
  uint64_t x = (key + i) * 0x9e3779b97f4a7c15ull;
  return static_cast<uint32_t>((x ^ (x >> 29)) >> 32);
}
// Maps a 32-bit hash onto [0, bound) without a division.
inline int64_t below(uint32_t h, int64_t bound) {
  return static_cast<int64_t>((static_cast<uint64_t>(h) * static_cast<uint64_t>(bound)) >> 32);
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
  enum class Kind { kPlain, kSum, kAvg, kProd, kBits };

  Pattern(const CollArgs& args, int nranks, uint64_t seed)
      : args(args), nranks(nranks), seed(seed) {
    const double limit = exactIntegerLimit(args.dtype);
    // Sums of n values below sumBound (plus the avg adjustment, < n) stay exact.
    sumBound = static_cast<int64_t>(std::clamp((limit - nranks) / nranks, 1.0, 1000.0));
    plainBound = static_cast<int64_t>(std::min(limit, 1000.0));
    offset = isSigned(args.dtype) ? plainBound / 2 : 0;
    if (!hasReduction(args.coll)) {
      kind = Kind::kPlain;
    } else {
      switch (args.op) {
        case RedOp::kSum: kind = Kind::kSum; break;
        case RedOp::kAvg: kind = Kind::kAvg; break;
        case RedOp::kProd: kind = Kind::kProd; break;
        case RedOp::kMax:
        case RedOp::kMin: kind = Kind::kPlain; break;
        default: kind = Kind::kBits; break;
      }
    }
  }

  const CollArgs& args;
  int nranks;
  uint64_t seed;
  int64_t sumBound, plainBound, offset;
  Kind kind;

  // Products are +-1 or +-2: rank (i + seed) mod n doubles every fourth element, and for signed
  // types rank (i + seed + 1) mod n negates every third.
  int64_t prodValue(int rank, size_t i) const {
    const uint64_t n = static_cast<uint64_t>(nranks), r = static_cast<uint64_t>(rank);
    int64_t v = ((i + seed) % n == r && i % 4 == 0) ? 2 : 1;
    if (isSigned(args.dtype) && (i + seed + 1) % n == r && i % 3 == 1) v = -v;
    return v;
  }

  template <class T>
  void fill(int rank, T* out, size_t count, size_t indexBase = 0) const {
    const uint64_t key = rankKey(seed, rank);
    switch (kind) {
      case Kind::kPlain:
        for (size_t i = 0; i < count; ++i) {
          out[i] = fromInt<T>(below(elementHash(key, indexBase + i), plainBound) - offset);
        }
        break;
      case Kind::kSum:
        for (size_t i = 0; i < count; ++i) {
          out[i] = fromInt<T>(below(elementHash(key, indexBase + i), sumBound));
        }
        break;
      case Kind::kAvg: {
        // The last rank tops each element up so the sum over ranks is a multiple of n and the
        // average an exact integer.
        std::vector<uint64_t> keys(nranks);
        for (int r = 0; r < nranks; ++r) keys[r] = rankKey(seed, r);
        for (size_t i = 0; i < count; ++i) {
          const size_t idx = indexBase + i;
          int64_t v = below(elementHash(key, idx), sumBound);
          if (rank == nranks - 1) {
            int64_t total = 0;
            for (int r = 0; r < nranks; ++r) total += below(elementHash(keys[r], idx), sumBound);
            v += (nranks - total % nranks) % nranks;
          }
          out[i] = fromInt<T>(v);
        }
        break;
      }
      case Kind::kProd:
        for (size_t i = 0; i < count; ++i) out[i] = fromInt<T>(prodValue(rank, indexBase + i));
        break;
      case Kind::kBits:
        for (size_t i = 0; i < count; ++i) {
          out[i] = fromInt<T>(static_cast<int64_t>(elementHash(key, indexBase + i) & 0xff));
        }
        break;
    }
  }
};

template <class T>
bool expectedTyped(const CollArgs& args, int rank, int n, uint64_t seed, T* out) {
  Pattern p(args, n, seed);
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
    Pattern(args, nranks, seed).fill(rank, static_cast<T*>(send), sendCount(args, nranks));
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
