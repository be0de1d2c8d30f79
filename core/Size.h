// Sizes as users type them: binary suffixes K, M, G, T (2^10...), optional trailing B/iB,
// as nccl-tests -b/-e accept them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cb {

// "8" -> 8, "16K" -> 16384, "1M"/"1MB"/"1MiB" -> 1048576, "1.5K" -> 1536.
// Throws UsageError for empty, negative, fractional bytes, unknown suffixes or overflow.
uint64_t parseSize(std::string_view text);
// Human form with binary units: 8 -> "8 B", 65536 -> "64 KiB", 1572864 -> "1.5 MiB".
std::string formatSize(uint64_t bytes);
// Durations, one grammar for every duration flag (-T, --time-budget, --inject-delay,
// --listen-timeout, diag's slow-rank): a number with a unit us, ms, s, m or min, h ("500us",
// "20ms", "1.5s", "2min"); a bare number is in the flag's own unit, `plainSeconds` seconds each
// (1: seconds; 1e-6: --inject-delay's microseconds). Throws UsageError naming the expected form.
double parseDurationSeconds(std::string_view text, double plainSeconds = 1);

// Byte counts that stop at 2^64 - 1 instead of wrapping: a memory estimate of 2^63 + 2^63 bytes
// must read "more than 16 EiB", never 0.
constexpr uint64_t kSaturatedBytes = ~uint64_t{0};
inline uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  return a > kSaturatedBytes - b ? kSaturatedBytes : a + b;
}
inline uint64_t saturatingMul(uint64_t a, uint64_t b) {
  return b != 0 && a > kSaturatedBytes / b ? kSaturatedBytes : a * b;
}

}  // namespace cb
