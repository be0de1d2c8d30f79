// Checks every parsed option of the chosen subcommand by its type, in one place, so that no
// subcommand can forget them: CLI11 2.1 takes "-5" for an unsigned option (as 2^64-5), an integer
// past int64 as INT64_MAX, "010" as octal, and nan, inf and 1e999 for a floating-point one. No
// option of collbench means anything with a negative or non-finite number, so those are refused
// here with one line naming the flag; each command still checks its own ranges (zero, upper
// bounds). An empty value is refused for every option. Labels and titles are shown in tables and
// reports: checked like --label everywhere.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "cli/Command.h"
#include "cli/Validate.h"
#include "core/Error.h"

namespace cb::cli {
namespace {

bool isDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

void checkInteger(const std::string& flag, const std::string& v) {
  if (!v.empty() && v[0] == '-' && isDigits(v, 1)) {
    throw UsageError(fmt::format("{} {}: must not be negative", flag, v));
  }
  if (!isDigits(v, 0)) {
    throw UsageError(fmt::format("{} '{}': expected a whole number", flag, v));
  }
  if (v.size() > 1 && v[0] == '0') {
    throw UsageError(fmt::format("{} {}: write the number without leading zeros", flag, v));
  }
  errno = 0;
  std::strtoull(v.c_str(), nullptr, 10);
  if (errno == ERANGE || v.size() > 19) {
    throw UsageError(fmt::format("{} {}: too large", flag, v));
  }
}

void checkReal(const std::string& flag, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  // strtod also reads hexadecimal floats: digits, '.', exponent only.
  bool decimal = v.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (v.empty() || end != v.c_str() + v.size() || !decimal) {
    throw UsageError(fmt::format("{} '{}': expected a number", flag, v));
  }
  if (!std::isfinite(d) || errno == ERANGE) {
    throw UsageError(fmt::format("{} {}: out of range", flag, v));
  }
  if (d < 0) throw UsageError(fmt::format("{} {}: must not be negative", flag, v));
}

void checkApp(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_type_size() == 0) continue;  // not given, or a flag
    std::string flag = opt->get_name(false, true);
    flag = flag.substr(0, flag.find(','));  // "-T,--timeout": the short name, as errors elsewhere
    const std::string type = opt->get_type_name();
    for (const std::string& v : opt->results()) {
      // An empty value is a variable that was not set ("--algo $ALGO"): never a choice.
      if (v.empty() && opt->get_name() != "--db") {
        throw UsageError(fmt::format("{} is empty: give a value or leave the option out", flag));
      }
      if (type.starts_with("INT") || type.starts_with("UINT")) checkInteger(flag, v);
      if (type.starts_with("FLOAT")) checkReal(flag, v);
    }
    const std::string longName = opt->get_name(false, true);
    if (longName.ends_with("-label") || longName.ends_with("--title")) {
      for (const std::string& v : opt->results()) checkLabel(v, flag);
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) checkApp(*sub);
}

}  // namespace

void checkParsedOptions(const CLI::App& app) { checkApp(app); }

}  // namespace cb::cli
