// IEEE binary16 and bfloat16 storage types with round-to-nearest-even conversions, usable on host
// and device. Arithmetic goes through float, as NCCL's reductions do for these types.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/HostDevice.h"

namespace cb {

CB_HD uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

CB_HD float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

CB_HD float halfToFloat(Half h) {
  uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t man = h.bits & 0x3ffu;
  if (exp == 0x1f) return bitsFloat(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {
    if (man == 0) return bitsFloat(sign);
    // subnormal: value = man * 2^-24
    float v = (float)man * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112u) << 23) | (man << 13));
}

CB_HD Half floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u) {  // inf or nan
    return Half{(uint16_t)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u))};
  }
  if (absu >= 0x477ff000u) return Half{(uint16_t)(sign | 0x7c00u)};  // rounds to inf
  if (absu < 0x38800000u) {  // result is subnormal or zero: value / 2^-24, rounded to even
    float a = bitsFloat(absu) * 16777216.0f;  // exact scaling by 2^24
    uint32_t m = (uint32_t)a;
    float rem = a - (float)m;
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return Half{(uint16_t)(sign | m)};
  }
  uint32_t exp = ((absu >> 23) - 112u) << 10;
  uint32_t man = (absu >> 13) & 0x3ffu;
  uint32_t h = exp | man;
  uint32_t rest = absu & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
  return Half{(uint16_t)(sign | h)};
}

CB_HD float bf16ToFloat(BFloat16 b) { return bitsFloat((uint32_t)b.bits << 16); }

CB_HD BFloat16 floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{(uint16_t)((u >> 16) | 0x40u)};  // nan
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;  // round to nearest even
  return BFloat16{(uint16_t)(u >> 16)};
}

}  // namespace cb
