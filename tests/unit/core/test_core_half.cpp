// Half and bfloat16 conversions (core/Half.h) against the independent reference in
// SmallFloatReference.h: exhaustive round trips over all 65536 patterns, and float -> 16-bit
// rounding (nearest, ties to even, overflow, subnormals) on every rounding boundary and on
// millions of random floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>

#include "common/SmallFloatReference.h"
#include "core/Half.h"

namespace {

using cbtest::BFloat16Reference;
using cbtest::HalfReference;

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Counts mismatches and keeps the first one, so a broken conversion reports one readable line
// instead of millions.
struct Mismatches {
  int64_t count = 0;
  std::string first;
  void add(const std::string& what) {
    if (count++ == 0) first = what;
  }
};

// Checks the conversion of one float against the reference rounding.
template <class Ref, class Convert>
void checkRounding(const Ref& ref, Convert convert, float f, Mismatches& bad) {
  uint16_t got = convert(f);
  if (std::isnan(f)) {
    if (!Ref::isNan(got)) bad.add("NaN " + std::to_string(bitsOf(f)) + " did not stay NaN");
    return;
  }
  uint16_t want = ref.round(f);
  if (got != want) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x): got 0x%04x want 0x%04x", f, bitsOf(f), got,
                  want);
    bad.add(buf);
  }
}

// The exact midpoint between every pair of neighbours, and the floats just either side of it.
template <class Ref, class Convert>
void checkEveryBoundary(const Ref& ref, Convert convert, Mismatches& bad) {
  const auto& v = ref.values();
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    auto mid = static_cast<float>((v[i] + v[i + 1]) / 2);  // exact: one more bit than the format
    ASSERT_EQ(static_cast<double>(mid), (v[i] + v[i + 1]) / 2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), -mid}) {
      checkRounding(ref, convert, f, bad);
    }
    checkRounding(ref, convert, static_cast<float>(v[i]), bad);
  }
  auto threshold = static_cast<float>(ref.overflowThreshold());
  for (float f : {threshold, std::nextafter(threshold, 0.0f), std::nextafter(threshold, INFINITY),
                  -threshold, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0e38f, -3.0e38f}) {
    checkRounding(ref, convert, f, bad);
  }
}

// Random bit patterns (every exponent, NaN and infinity included) and random floats spread
// uniformly over the exponents of the 16-bit format, its subnormals and both overflow sides.
template <class Ref, class Convert>
void checkRandom(const Ref& ref, Convert convert, int minExp, int maxExp, Mismatches& bad) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<uint32_t> any;
  std::uniform_int_distribution<int> exp(minExp, maxExp);
  for (int i = 0; i < 1000000; ++i) {
    checkRounding(ref, convert, floatOf(any(rng)), bad);
    uint32_t man = any(rng) & 0x7fffffu;
    float f = std::ldexp(1.0f + static_cast<float>(man) / 8388608.0f, exp(rng));
    checkRounding(ref, convert, (any(rng) & 1) ? -f : f, bad);
  }
}

// The two formats, checked the same way.
struct HalfFormat {
  using Reference = HalfReference;
  static float decode(uint16_t bits) { return cb::halfToFloat(cb::Half{bits}); }
  static uint16_t round(float f) { return cb::floatToHalf(f).bits; }
  // 2^-27 .. 2^17: below the smallest subnormal (2^-24) up to past the overflow at 65520.
  static constexpr int kMinExp = -27, kMaxExp = 17;
};
struct BFloat16Format {
  using Reference = BFloat16Reference;
  static float decode(uint16_t bits) { return cb::bf16ToFloat(cb::BFloat16{bits}); }
  static uint16_t round(float f) { return cb::floatToBf16(f).bits; }
  static constexpr int kMinExp = -149, kMaxExp = 127;
};
struct FormatName {
  template <class F>
  static std::string GetName(int) {
    return std::is_same_v<F, HalfFormat> ? "Half" : "BFloat16";
  }
};

template <class F>
class SmallFloat : public ::testing::Test {};
using Formats = ::testing::Types<HalfFormat, BFloat16Format>;
TYPED_TEST_SUITE(SmallFloat, Formats, FormatName);

TYPED_TEST(SmallFloat, EveryPatternDecodesToTheReferenceValue) {
  using Ref = typename TypeParam::Reference;
  Mismatches bad;
  for (uint32_t b = 0; b < 65536; ++b) {
    auto bits = static_cast<uint16_t>(b);
    float got = TypeParam::decode(bits);
    double want = Ref::decode(bits);
    if (Ref::isNan(bits)) {
      if (!std::isnan(got)) bad.add(std::to_string(b) + " should decode to NaN");
    } else if (static_cast<double>(got) != want || std::signbit(got) != std::signbit(want)) {
      bad.add(std::to_string(b));
    }
  }
  EXPECT_EQ(bad.count, 0) << "first mismatch at bits " << bad.first;
}

TYPED_TEST(SmallFloat, EveryPatternRoundTripsThroughFloat) {
  using Ref = typename TypeParam::Reference;
  Mismatches bad;
  for (uint32_t b = 0; b < 65536; ++b) {
    auto bits = static_cast<uint16_t>(b);
    uint16_t back = TypeParam::round(TypeParam::decode(bits));
    if (Ref::isNan(bits)) {
      if (!Ref::isNan(back) || (back & 0x8000) != (bits & 0x8000)) {
        bad.add(std::to_string(b) + " (NaN lost)");
      }
    } else if (back != bits) {
      bad.add(std::to_string(b) + " -> " + std::to_string(back));
    }
  }
  EXPECT_EQ(bad.count, 0) << "first mismatch: " << bad.first;
}

TYPED_TEST(SmallFloat, RoundsToNearestEvenOnEveryBoundary) {
  typename TypeParam::Reference ref;
  Mismatches bad;
  checkEveryBoundary(ref, TypeParam::round, bad);
  EXPECT_EQ(bad.count, 0) << bad.first;
}

TYPED_TEST(SmallFloat, MatchesReferenceOnRandomFloats) {
  typename TypeParam::Reference ref;
  Mismatches bad;
  checkRandom(ref, TypeParam::round, TypeParam::kMinExp, TypeParam::kMaxExp, bad);
  EXPECT_EQ(bad.count, 0) << bad.first;
}

TEST(Half, KnownValues) {
  EXPECT_EQ(cb::floatToHalf(1.0f).bits, 0x3c00);
  EXPECT_EQ(cb::floatToHalf(-2.0f).bits, 0xc000);
  EXPECT_EQ(cb::floatToHalf(65504.0f).bits, 0x7bff);
  EXPECT_EQ(cb::floatToHalf(65519.0f).bits, 0x7bff);
  EXPECT_EQ(cb::floatToHalf(65520.0f).bits, 0x7c00);  // ties to even overflows
  EXPECT_EQ(cb::floatToHalf(std::ldexp(1.0f, -24)).bits, 0x0001);
  EXPECT_EQ(cb::floatToHalf(std::ldexp(1.0f, -25)).bits, 0x0000);         // tie to even: 0
  EXPECT_EQ(cb::floatToHalf(std::ldexp(3.0f, -25)).bits, 0x0002);         // tie to even: 2
  EXPECT_EQ(cb::floatToHalf(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);  // tie, even below
  EXPECT_EQ(cb::floatToHalf(1.0f + std::ldexp(3.0f, -11)).bits, 0x3c02);  // tie, even above
  EXPECT_EQ(cb::halfToFloat(cb::Half{0x3555}), 0.333251953125f);
}

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(cb::floatToBf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(cb::floatToBf16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);  // tie, even below
  EXPECT_EQ(cb::floatToBf16(1.0f + std::ldexp(3.0f, -8)).bits, 0x3f82);  // tie, even above
  EXPECT_EQ(cb::floatToBf16(3.4028235e38f).bits, 0x7f80);                // FLT_MAX -> inf
  EXPECT_EQ(cb::bf16ToFloat(cb::BFloat16{0xc040}), -3.0f);
}

}  // namespace
