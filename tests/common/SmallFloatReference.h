// An independent reference for IEEE binary16 and bfloat16, for the core tests: values decoded
// from the bit fields with ldexp, and rounding done by searching the sorted table of every
// representable value for the nearest one (ties to the even bit pattern), with the IEEE overflow
// rule (magnitudes at or above max + ulp/2 become infinity). Nothing here shares code with
// core/Half.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace cbtest {

// A binary format with one sign bit, kExpBits exponent bits and kManBits fraction bits.
template <int kExpBits, int kManBits>
class SmallFloatReference {
 public:
  static constexpr uint32_t kExpMask = (1u << kExpBits) - 1;
  static constexpr uint32_t kManMask = (1u << kManBits) - 1;
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr uint16_t kInfBits = static_cast<uint16_t>(kExpMask << kManBits);

  SmallFloatReference() {
    for (uint32_t b = 0; b < kInfBits; ++b) values_.push_back(decode(static_cast<uint16_t>(b)));
    double top = values_.back();
    overflow_ = top + (top - values_[values_.size() - 2]) / 2;
  }

  static bool isNan(uint16_t bits) {
    return ((bits >> kManBits) & kExpMask) == kExpMask && (bits & kManMask) != 0;
  }

  static double decode(uint16_t bits) {
    uint32_t man = bits & kManMask;
    uint32_t exp = (bits >> kManBits) & kExpMask;
    double v;
    if (exp == kExpMask) {
      v = man ? std::nan("") : INFINITY;
    } else if (exp == 0) {
      v = std::ldexp(static_cast<double>(man), 1 - kBias - kManBits);
    } else {
      v = std::ldexp(static_cast<double>(man + (1u << kManBits)),
                     static_cast<int>(exp) - kBias - kManBits);
    }
    return (bits & 0x8000u) ? -v : v;
  }

  // The bit pattern nearest to x (x must not be NaN).
  uint16_t round(long double x) const {
    uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    long double a = std::fabs(x);
    if (a >= overflow_) return sign | kInfBits;
    auto it = std::upper_bound(values_.begin(), values_.end(), a,
                               [](long double v, double e) { return v < e; });
    size_t hi = static_cast<size_t>(it - values_.begin());
    size_t lo = hi - 1;  // values_[0] == 0 <= a, so hi >= 1
    size_t pick;
    if (hi == values_.size()) {
      pick = lo;  // between max and the overflow threshold
    } else {
      long double below = a - values_[lo];
      long double above = values_[hi] - a;
      if (below < above) {
        pick = lo;
      } else if (above < below) {
        pick = hi;
      } else {
        pick = (lo % 2 == 0) ? lo : hi;
      }
    }
    return static_cast<uint16_t>(sign | pick);
  }

  // Every non-negative finite value, indexed by its bit pattern.
  const std::vector<double>& values() const { return values_; }
  double overflowThreshold() const { return overflow_; }

 private:
  std::vector<double> values_;
  double overflow_ = 0;
};

using HalfReference = SmallFloatReference<5, 10>;
using BFloat16Reference = SmallFloatReference<8, 7>;

}  // namespace cbtest
