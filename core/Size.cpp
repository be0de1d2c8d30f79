#include "core/Size.h"

#include <fmt/format.h>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {
namespace {

// Splits "1.5MiB" into the number "1.5" and the lower-cased unit "mib".
void splitNumber(std::string_view text, std::string_view what, std::string& num,
                 std::string& unit) {
  auto t = trim(text);
  if (t.empty()) throw UsageError(fmt::format("empty {}", what));
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  num = std::string(t.substr(0, i));
  unit = toLower(trim(t.substr(i)));
  if (num.empty() || num == "." || num.find('.') != num.rfind('.')) {
    throw UsageError(fmt::format("invalid {} '{}'", what, text));
  }
}

}  // namespace

uint64_t parseSize(std::string_view text) {
  std::string num, unit;
  if (!trim(text).empty() && trim(text).front() == '-') {
    throw UsageError(fmt::format("invalid size '{}': sizes can't be negative", text));
  }
  splitNumber(text, "size", num, unit);
  int shift = 0;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else {
    static constexpr std::string_view kUnits = "kmgt";
    auto pos = kUnits.find(unit[0]);
    std::string_view rest = std::string_view(unit).substr(1);
    if (pos == std::string_view::npos || !(rest.empty() || rest == "b" || rest == "ib")) {
      throw UsageError(fmt::format(
          "invalid size '{}': unknown unit '{}' (use K, M, G or T, binary multiples)", text, unit));
    }
    shift = 10 * static_cast<int>(pos + 1);
  }
  long double value = std::strtold(num.c_str(), nullptr) * std::ldexp(1.0L, shift);
  if (value > 18446744073709551615.0L) {
    throw UsageError(fmt::format("invalid size '{}': too large", text));
  }
  if (value != std::floor(value)) {
    throw UsageError(fmt::format("invalid size '{}': not a whole number of bytes", text));
  }
  return static_cast<uint64_t>(value);
}

std::string formatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  // Three significant digits in fixed notation ("{:.3g}" would print 1023.9 as "1.02e+03");
  // a value that rounds up to 1024 moves on to the next unit.
  int decimals = v < 10 ? 2 : v < 100 ? 1 : 0;
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (std::strtod(s.c_str(), nullptr) >= 1024 && u < 6) {
    s = fmt::format("{:.2f}", v / 1024);
    ++u;
  }
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return fmt::format("{} {}", s, kUnits[u]);
}

double parseDurationSeconds(std::string_view text, double plainSeconds) {
  const std::string form =
      fmt::format("a number of {} or one with a unit: 500us, 20ms, 10s, 2min, 1h",
                  plainSeconds == 1 ? "seconds" : "microseconds");
  std::string num, unit;
  if (!trim(text).empty() && trim(text).front() == '-') {
    throw UsageError(fmt::format("invalid duration '{}': can't be negative ({})", text, form));
  }
  try {
    splitNumber(text, "duration", num, unit);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{} ({})", e.what(), form));
  }
  double v = std::strtod(num.c_str(), nullptr);
  if (unit.empty()) return v * plainSeconds;
  if (unit == "s") return v;
  if (unit == "ms") return v * 1e-3;
  if (unit == "us") return v * 1e-6;
  if (unit == "m" || unit == "min") return v * 60;
  if (unit == "h") return v * 3600;
  throw UsageError(fmt::format("invalid duration '{}': unknown unit '{}' ({})", text, unit, form));
}

}  // namespace cb
