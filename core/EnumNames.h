// An enum's names as one table of rows, read both ways: the name printed for a value and the
// value of a typed name (or one of its aliases) come from the same rows, so a parse error's list
// of names cannot drift from what is printed. A list flag ("a,b", or "all") reads the same way.
#pragma once

#include <fmt/format.h>
#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {

template <class E>
struct EnumRow {
  E value;
  std::string_view name;          // the name printed and parsed
  std::string_view aliases = {};  // other accepted spellings, separated by spaces
};

// The row's name of v; `unknown` when no row holds it.
template <class E, size_t N>
constexpr std::string_view enumName(const EnumRow<E> (&rows)[N], E v,
                                    std::string_view unknown = "?") {
  for (const EnumRow<E>& r : rows) {
    if (r.value == v) return r.name;
  }
  return unknown;
}

// The value whose name or alias is `name` exactly; callers fold case or trim first when a flag
// allows it.
template <class E, size_t N>
std::optional<E> enumValue(const EnumRow<E> (&rows)[N], std::string_view name) {
  for (const EnumRow<E>& r : rows) {
    if (r.name == name) return r.value;
    for (std::string_view rest = r.aliases; !rest.empty();) {
      const size_t end = std::min(rest.find(' '), rest.size());
      if (rest.substr(0, end) == name) return r.value;
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
  }
  return std::nullopt;
}

// "a, b, c": every row's name, for an error message.
template <class E, size_t N>
std::string enumNames(const EnumRow<E> (&rows)[N]) {
  std::string out;
  for (const EnumRow<E>& r : rows) out += fmt::format("{}{}", out.empty() ? "" : ", ", r.name);
  return out;
}

// enumValue, or UsageError "unknown WHAT 'NAME' (a, b, c)".
template <class E, size_t N>
E parseEnum(const EnumRow<E> (&rows)[N], std::string_view name, std::string_view what) {
  if (std::optional<E> v = enumValue(rows, name)) return *v;
  throw UsageError(fmt::format("unknown {} '{}' ({})", what, name, enumNames(rows)));
}

// One item of a list flag: case and surrounding blanks ignored; the error names the table's values
// "or all".
template <class E, size_t N>
E parseListItem(const EnumRow<E> (&rows)[N], std::string_view item, std::string_view what) {
  if (std::optional<E> v = enumValue(rows, toLower(trim(item)))) return *v;
  throw UsageError(
      fmt::format("unknown {} '{}' (expected {} or all)", what, item, enumNames(rows)));
}

// A comma-separated list flag: "all" (any case) is every value of `all`; otherwise each item by
// `parseOne`, repeats kept once; UsageError `emptyMessage` when nothing is named.
template <class E, class ParseOne>
std::vector<E> parseEnumList(std::string_view s, std::span<const E> all, ParseOne parseOne,
                             std::string_view emptyMessage) {
  if (toLower(trim(s)) == "all") return {all.begin(), all.end()};
  std::vector<E> out;
  for (const std::string& item : splitList(s)) {
    const E v = parseOne(item);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw UsageError(std::string(emptyMessage));
  return out;
}

}  // namespace cb
