#include "bench/Verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "core/Half.h"
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

bool powerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Floating-point avg whose NCCL result is rounded: 1/n is inexact unless n is a power of two.
bool inexactAvg(DataType t, int nranks) { return isFloatingPoint(t) && !powerOfTwo(nranks); }

template <class T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return halfToFloat(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bf16ToFloat(v);
  } else {
    return static_cast<double>(v);
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
    if (hasReduction(args.coll) && args.op == RedOp::kAvg && inexactAvg(args.dtype, nranks)) {
      // NCCL's sum(x * (1/n)) errs by at most (n + 2) u |avg| (u = 1 / limit): keep the average
      // small enough that this stays below 0.5, so a wrong integer can't pass the bound.
      double maxAvg = 0.5 * limit / (nranks + 2);
      sumBound = std::clamp(static_cast<int64_t>(maxAvg) - 2, int64_t{1}, sumBound);
    }
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

// Expected receive elements [first, first + count) of `rank`.
template <class T>
bool expectedTyped(const CollArgs& args, int rank, int n, uint64_t seed, size_t first, size_t count,
                   T* out) {
  Pattern p(args, n, seed);
  const size_t m = args.count;
  auto reduceAll = [&](size_t base) {
    // out = reduce over ranks of each rank's elements [base, base + count).
    p.fill(0, out, count, base);
    std::vector<T> tmp(count);
    for (int r = 1; r < n; ++r) {
      p.fill(r, tmp.data(), count, base);
      reduce(args.dtype, args.op, out, out, tmp.data(), count);
    }
    if (args.op == RedOp::kAvg) scaleForAvg(args.dtype, out, count, n);
  };
  // Receive layouts made of n blocks of m elements: block j, element i comes from `source(j)`'s
  // input element `offset + i`.
  auto blocks = [&](auto source, size_t offset) {
    for (size_t done = 0; done < count;) {
      size_t e = first + done, j = e / m, i = e % m, take = std::min(count - done, m - i);
      p.fill(source(static_cast<int>(j)), out + done, take, offset + i);
      done += take;
    }
  };
  switch (args.coll) {
    case Collective::kAllReduce: reduceAll(first); return true;
    case Collective::kReduce:
      if (rank != args.root) return false;
      reduceAll(first);
      return true;
    case Collective::kReduceScatter: reduceAll(static_cast<size_t>(rank) * m + first); return true;
    case Collective::kBroadcast: p.fill(args.root, out, count, first); return true;
    case Collective::kAllGather: blocks([](int j) { return j; }, 0); return true;
    case Collective::kAllToAll:
      blocks([](int j) { return j; }, static_cast<size_t>(rank) * m);
      return true;
    case Collective::kSendRecv: p.fill((rank - 1 + n) % n, out, count, first); return true;
  }
  return false;
}

// |got - expected| <= (n + 2) u |expected|, the bound of NCCL's sum(x * (1/n)) (Verify.h).
template <class T>
int64_t wrongWithinAvgBound(const T* got, const T* expected, size_t count, int n, double limit) {
  int64_t wrong = 0;
  const double rel = (n + 2) / limit;
  for (size_t i = 0; i < count; ++i) {
    double e = toDouble(expected[i]), g = toDouble(got[i]);
    if (!(std::fabs(g - e) <= rel * std::fabs(e))) ++wrong;  // NaN is wrong too
  }
  return wrong;
}

}  // namespace

void fillInput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* send) {
  dispatchDataType(args.dtype, [&]<class T>() {
    Pattern(args, nranks, seed).fill(rank, static_cast<T*>(send), sendCount(args, nranks));
  });
}

bool expectedOutput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* expected) {
  return expectedRange(args, rank, nranks, seed, 0, recvCount(args, nranks), expected);
}

void fillInputRange(const CollArgs& args, int rank, int nranks, uint64_t seed, size_t first,
                    size_t count, void* out) {
  dispatchDataType(args.dtype, [&]<class T>() {
    Pattern(args, nranks, seed).fill(rank, static_cast<T*>(out), count, first);
  });
}

bool expectedRange(const CollArgs& args, int rank, int nranks, uint64_t seed, size_t first,
                   size_t count, void* out) {
  return dispatchDataType(args.dtype, [&]<class T>() {
    return expectedTyped(args, rank, nranks, seed, first, count, static_cast<T*>(out));
  });
}

int64_t countWrong(const CollArgs& args, int nranks, const void* got, const void* expected,
                   size_t count) {
  if (!hasReduction(args.coll) || args.op != RedOp::kAvg || !inexactAvg(args.dtype, nranks)) {
    return countWrong(args.dtype, got, expected, count);
  }
  return dispatchDataType(args.dtype, [&]<class T>() {
    return wrongWithinAvgBound(static_cast<const T*>(got), static_cast<const T*>(expected), count,
                               nranks, exactIntegerLimit(args.dtype));
  });
}

void uploadPoison(const UploadFn& upload, size_t bytes) {
  const size_t chunk = std::min<size_t>(bytes, kVerifyChunkElements * 8);
  std::vector<std::byte> poison(chunk, std::byte{0xa5});
  for (size_t off = 0; off < bytes; off += chunk) {
    upload(off, poison.data(), std::min(chunk, bytes - off));
  }
}

void uploadInput(const CollArgs& args, int rank, int nranks, uint64_t seed,
                 const UploadFn& upload) {
  const size_t es = dataTypeSize(args.dtype), total = sendCount(args, nranks);
  std::vector<std::byte> host(std::min(total, kVerifyChunkElements) * es);
  for (size_t first = 0; first < total; first += kVerifyChunkElements) {
    size_t count = std::min(kVerifyChunkElements, total - first);
    fillInputRange(args, rank, nranks, seed, first, count, host.data());
    upload(first * es, host.data(), count * es);
  }
}

int64_t checkOutput(const CollArgs& args, int rank, int nranks, uint64_t seed,
                    const DownloadFn& download, int threads) {
  if (args.coll == Collective::kReduce && rank != args.root) return -1;
  const size_t es = dataTypeSize(args.dtype), total = recvCount(args, nranks);
  const size_t chunks = (total + kVerifyChunkElements - 1) / kVerifyChunkElements;
  const int workers = static_cast<int>(std::clamp<size_t>(threads, 1, std::max<size_t>(chunks, 1)));
  std::vector<int64_t> wrong(workers, 0);
  std::vector<std::exception_ptr> errors(workers);
  auto work = [&](int w) {
    try {
      std::vector<std::byte> got(std::min(total, kVerifyChunkElements) * es);
      std::vector<std::byte> expected(got.size());
      // Chunk c goes to worker c mod workers: neighbouring chunks run at the same time.
      for (size_t c = static_cast<size_t>(w); c < chunks; c += static_cast<size_t>(workers)) {
        size_t first = c * kVerifyChunkElements;
        size_t count = std::min(kVerifyChunkElements, total - first);
        download(first * es, got.data(), count * es);
        expectedRange(args, rank, nranks, seed, first, count, expected.data());
        wrong[w] += countWrong(args, nranks, got.data(), expected.data(), count);
      }
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  int64_t sum = 0;
  for (int64_t x : wrong) sum += x;
  return sum;
}

int64_t countWrong(DataType t, const void* got, const void* expected, size_t count) {
  const size_t es = dataTypeSize(t);
  const auto* a = static_cast<const unsigned char*>(got);
  const auto* b = static_cast<const unsigned char*>(expected);
  if (count == 0 || std::memcmp(a, b, count * es) == 0) return 0;  // 0 elements: null is fine
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(a + i * es, b + i * es, es) != 0) ++wrong;
  }
  return wrong;
}

}  // namespace cb
