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
// Durations for --time-budget and -T: "200ms", "2s", "1.5s", "500us", "3m"; bare number = s.
double parseDurationSeconds(std::string_view text);

}  // namespace cb
