// Every data type x every reduction op of cb::reduce and cb::scaleForAvg (core/Reduce.h) against
// an independent reference: integers in (unsigned) __int128, wrapping modulo 2^bits for sum and
// prod; floating point in long double rounded once to the type (SmallFloatReference.h for half
// and bfloat16). Rounding through long double equals direct IEEE rounding for float, half and
// bfloat16 (64 >= 2p + 2 bits); for double the inputs are chosen so that the long double result
// is exact, so the only rounding is the final one to double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "common/SmallFloatReference.h"
#include "core/DataType.h"
#include "core/Error.h"
#include "core/Reduce.h"

namespace {

using cb::DataType;
using cb::RedOp;

constexpr size_t kCount = 20000;
constexpr RedOp kAllOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin,
                             RedOp::kAvg, RedOp::kBand, RedOp::kBor, RedOp::kBxor};

bool isBitwise(RedOp op) { return op == RedOp::kBand || op == RedOp::kBor || op == RedOp::kBxor; }

template <class T>
constexpr bool kIsSmallFloat = std::is_same_v<T, cb::Half> || std::is_same_v<T, cb::BFloat16>;

template <class T>
uint64_t rawBits(T v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

template <class T>
T fromBits(uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// Decoding to long double and rounding back, per floating type (defined below).
template <class T>
struct FloatRef;

// --- inputs --------------------------------------------------------------------------------

template <class T>
std::vector<T> makeInputs(std::mt19937_64& rng) {
  std::vector<T> v;
  if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    for (T x : {T(0), T(1), T(2), static_cast<T>(-1), L::max(), L::min(),
                static_cast<T>(L::max() - 1), static_cast<T>(L::min() + 1)}) {
      v.push_back(x);
    }
    while (v.size() < kCount) v.push_back(static_cast<T>(rng()));
  } else if constexpr (kIsSmallFloat<T>) {
    using Ref = typename FloatRef<T>::Reference;
    const uint16_t inf = Ref::kInfBits;
    for (uint16_t b : {uint16_t{0x0000}, uint16_t{0x8000}, uint16_t{0x0001}, inf,
                       static_cast<uint16_t>(inf | 0x8000), static_cast<uint16_t>(inf - 1)}) {
      v.push_back(T{b});
    }
    while (v.size() < kCount) {
      auto b = static_cast<uint16_t>(rng());
      if (!Ref::isNan(b)) v.push_back(T{b});
    }
  } else if constexpr (std::is_same_v<T, float>) {
    using L = std::numeric_limits<float>;
    for (float x : {0.0f, -0.0f, 1.0f, -1.5f, L::infinity(), -L::infinity(), L::max(), -L::max(),
                    L::denorm_min(), L::min()}) {
      v.push_back(x);
    }
    while (v.size() < kCount) {
      // Half arbitrary bit patterns, half ordinary magnitudes (where sums actually round).
      float f = fromBits<float>(static_cast<uint32_t>(rng()));
      if (v.size() % 2) f = std::ldexp(static_cast<float>(rng() % 16777216), int(rng() % 40) - 40);
      if (!std::isnan(f)) v.push_back((rng() & 1) ? -f : f);
    }
  } else {
    static_assert(std::is_same_v<T, double>);
    // 32-bit mantissas scaled by 2^-15..2^15 keep sums (<= 63 bits) and products (64 bits)
    // exact in long double, so the reference rounds exactly once.
    using L = std::numeric_limits<double>;
    for (double x : {0.0, -0.0, 1.0, L::infinity(), -L::infinity(), L::denorm_min()}) {
      v.push_back(x);
    }
    while (v.size() < kCount) {
      double m = static_cast<double>(static_cast<uint32_t>(rng()));
      double x = std::ldexp(m, static_cast<int>(rng() % 31) - 15 - 32);
      v.push_back((rng() & 1) ? -x : x);
    }
  }
  return v;
}

// --- reference -----------------------------------------------------------------------------

template <class T>
T refInteger(RedOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  unsigned __int128 ua = static_cast<U>(a), ub = static_cast<U>(b);
  __int128 sa = a, sb = b;
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return static_cast<T>(static_cast<U>(ua + ub));
    case RedOp::kProd: return static_cast<T>(static_cast<U>(ua * ub));
    case RedOp::kMax: return sa >= sb ? a : b;
    case RedOp::kMin: return sa <= sb ? a : b;
    case RedOp::kBand: return static_cast<T>(static_cast<U>(ua & ub));
    case RedOp::kBor: return static_cast<T>(static_cast<U>(ua | ub));
    case RedOp::kBxor: return static_cast<T>(static_cast<U>(ua ^ ub));
  }
  return 0;
}

template <class T>
struct FloatRef {
  static long double load(T v) { return v; }
  static T store(long double x) { return static_cast<T>(x); }
  static bool isNan(T v) { return std::isnan(v); }
};
template <class T, class Ref>
struct SmallFloatRef {
  using Reference = Ref;
  static const Ref& ref() {
    static const Ref r;  // immutable table, built once
    return r;
  }
  static long double load(T v) { return Ref::decode(v.bits); }
  static T store(long double x) {
    if (std::isnan(x)) return T{static_cast<uint16_t>(Ref::kInfBits | 1)};
    return T{ref().round(x)};
  }
  static bool isNan(T v) { return Ref::isNan(v.bits); }
};
template <>
struct FloatRef<cb::Half> : SmallFloatRef<cb::Half, cbtest::HalfReference> {};
template <>
struct FloatRef<cb::BFloat16> : SmallFloatRef<cb::BFloat16, cbtest::BFloat16Reference> {};

// True if `got` is the reference result of a op b.
template <class T>
bool matches(RedOp op, T a, T b, T got) {
  if constexpr (std::is_integral_v<T>) {
    return got == refInteger(op, a, b);
  } else {
    using R = FloatRef<T>;
    long double x = R::load(a), y = R::load(b), g = R::load(got);
    if (op == RedOp::kMax || op == RedOp::kMin) {
      long double want = op == RedOp::kMax ? std::fmax(x, y) : std::fmin(x, y);
      // Equal values (+0 and -0) may return either operand; the result must be an operand.
      return g == want && (rawBits(got) == rawBits(a) || rawBits(got) == rawBits(b));
    }
    long double exact = op == RedOp::kProd ? x * y : x + y;
    T want = R::store(exact);
    if (R::isNan(want)) return R::isNan(got);
    return rawBits(got) == rawBits(want);
  }
}

// True if `got` is the reference result of the final avg step x / n.
template <class T>
bool matchesDivision(T x, int n, T got) {
  if constexpr (std::is_integral_v<T>) {
    return got == static_cast<T>(static_cast<__int128>(x) / n);  // truncates toward zero
  } else {
    using R = FloatRef<T>;
    T want = R::store(R::load(x) / n);
    if (R::isNan(want)) return R::isNan(got);
    return rawBits(got) == rawBits(want);
  }
}

// --- the test ------------------------------------------------------------------------------

template <class T>
void checkType(DataType t, std::mt19937_64& rng) {
  std::vector<T> a = makeInputs<T>(rng);
  std::vector<T> b = makeInputs<T>(rng);
  std::shuffle(b.begin(), b.end(), rng);
  for (RedOp op : kAllOps) {
    SCOPED_TRACE(std::string(cb::dataTypeName(t)) + " " + std::string(cb::redOpName(op)));
    bool valid = !(isBitwise(op) && cb::isFloatingPoint(t));
    EXPECT_EQ(cb::redOpValidFor(op, t), valid);
    std::vector<T> out(kCount);
    if (!valid) {
      EXPECT_THROW(cb::reduce(t, op, out.data(), a.data(), b.data(), kCount), cb::UsageError);
      continue;
    }
    cb::reduce(t, op, out.data(), a.data(), b.data(), kCount);
    int64_t bad = 0;
    size_t firstBad = 0;
    for (size_t i = 0; i < kCount; ++i) {
      if (!matches(op, a[i], b[i], out[i]) && bad++ == 0) firstBad = i;
    }
    EXPECT_EQ(bad, 0) << "first mismatch at element " << firstBad << ": bits 0x" << std::hex
                      << rawBits(a[firstBad]) << " op 0x" << rawBits(b[firstBad]) << " gave 0x"
                      << rawBits(out[firstBad]);
    if (op != RedOp::kAvg) continue;
    for (int n : {1, 2, 3, 4, 7, 8, 16}) {
      if (std::is_same_v<T, double> && (n & (n - 1)) != 0) continue;  // keep division exact
      std::vector<T> scaled = out;
      cb::scaleForAvg(t, scaled.data(), kCount, n);
      int64_t wrong = 0;
      for (size_t i = 0; i < kCount; ++i) wrong += !matchesDivision(out[i], n, scaled[i]);
      EXPECT_EQ(wrong, 0) << "avg with n=" << n;
    }
  }
}

TEST(Reduce, EveryTypeAndOpMatchesTheReference) {
  std::mt19937_64 rng(2024);
  for (DataType t : cb::allDataTypes()) {
    cb::dispatchDataType(t, [&]<class T>() { checkType<T>(t, rng); });
  }
}

TEST(Reduce, DestinationMayAliasAnOperand) {
  std::vector<int32_t> a{1, 2, 3}, b{10, 20, 30};
  cb::reduce(DataType::kInt32, RedOp::kSum, a.data(), a.data(), b.data(), a.size());
  EXPECT_EQ(a, (std::vector<int32_t>{11, 22, 33}));
  cb::reduce(DataType::kInt32, RedOp::kMax, b.data(), a.data(), b.data(), b.size());
  EXPECT_EQ(b, (std::vector<int32_t>{11, 22, 33}));
}

TEST(Reduce, KnownWrappingAndAverages) {
  int8_t a = 127, b = 1, out = 0;
  cb::reduce(DataType::kInt8, RedOp::kSum, &out, &a, &b, 1);
  EXPECT_EQ(out, -128);
  uint8_t c = 16, d = 17, p = 0;
  cb::reduce(DataType::kUint8, RedOp::kProd, &p, &c, &d, 1);
  EXPECT_EQ(p, static_cast<uint8_t>(272 % 256));
  int32_t s = -7;
  cb::scaleForAvg(DataType::kInt32, &s, 1, 2);
  EXPECT_EQ(s, -3);  // truncation toward zero
  float f = 3.0f;
  cb::scaleForAvg(DataType::kFloat, &f, 1, 2);
  EXPECT_EQ(f, 1.5f);
  cb::Half h{0x4200};  // 3.0
  cb::scaleForAvg(DataType::kHalf, &h, 1, 2);
  EXPECT_EQ(h.bits, 0x3e00);                                 // 1.5
  cb::reduce(DataType::kFloat, RedOp::kSum, &f, &f, &f, 0);  // count 0 touches nothing
  EXPECT_EQ(f, 1.5f);
}

}  // namespace

namespace cb {
namespace {

// The streaming-store policy: the destination region decides, not the piece.
TEST(ReduceLarge, StreamingPolicyFollowsTheWholeRegion) {
  const size_t mib = size_t{1} << 20;
  EXPECT_FALSE(useStreamingStores(256 << 10, 0));
  EXPECT_FALSE(useStreamingStores(256 << 10, 8 * mib));  // a fill of a cache-resident message
  EXPECT_TRUE(useStreamingStores(256 << 10, 16 * mib));  // a fill of a message that is not
  EXPECT_TRUE(useStreamingStores(16 * mib, 0));
  EXPECT_FALSE(useStreamingStores(16 * mib - 1, 0));
}

// Sums on the streaming-store path (forced by the whole-region hint, or by size alone): same
// bits as the scalar sum at every alignment, in place and out of place.
TEST(ReduceLarge, StreamingSumMatchesScalarAtEveryOffset) {
  const size_t huge = size_t{1} << 30;
  for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{4099}, (size_t{17} << 20) / 4 + 3}) {
    std::vector<float> a(n + 8), b(n + 8), d(n + 8);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(i % 1000) * 0.5f;
      b[i] = static_cast<float>((i * 7) % 333) - 100.0f;
    }
    for (size_t off : {size_t{0}, size_t{1}, size_t{2}, size_t{3}}) {
      std::fill(d.begin(), d.end(), -1.0f);
      reduce(DataType::kFloat, RedOp::kSum, d.data() + off, a.data() + off, b.data(), n, huge);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(d[off + i], a[off + i] + b[i]) << "n " << n << " offset " << off << " i " << i;
      }
      for (size_t i = 0; i < off; ++i) ASSERT_EQ(d[i], -1.0f) << "wrote before the region";
      for (size_t i = off + n; i < d.size(); ++i) ASSERT_EQ(d[i], -1.0f) << "wrote past it";
    }
    std::vector<double> x(n), y(n), expect(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = static_cast<double>(i);
      y[i] = 3.0 * static_cast<double>(i % 17);
      expect[i] = x[i] + y[i];
    }
    reduce(DataType::kDouble, RedOp::kAvg, x.data(), x.data(), y.data(), n, huge);  // in place
    EXPECT_EQ(x, expect) << "n " << n;
  }
}

// copyPiece copies exactly `bytes` whatever the alignment of either side and whichever path.
TEST(ReduceLarge, CopyPieceCopiesExactlyAtEveryOffset) {
  std::vector<std::byte> src(70000), dst(70000 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 131 % 251);
  for (size_t whole : {size_t{0}, size_t{1} << 30}) {
    for (size_t bytes :
         {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{4097}, size_t{65599}}) {
      for (size_t doff = 0; doff < 17; doff += 3) {
        for (size_t soff : {size_t{0}, size_t{5}, size_t{16}}) {
          std::fill(dst.begin(), dst.end(), std::byte{0xee});
          copyPiece(dst.data() + doff, src.data() + soff, bytes, whole);
          ASSERT_EQ(std::memcmp(dst.data() + doff, src.data() + soff, bytes), 0)
              << bytes << " bytes, offsets " << doff << "/" << soff << ", whole " << whole;
          for (size_t i = 0; i < doff; ++i) ASSERT_EQ(dst[i], std::byte{0xee});
          for (size_t i = doff + bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], std::byte{0xee});
        }
      }
    }
  }
}

}  // namespace
}  // namespace cb
