// Name tables between collbench's spellings and another tool's (NCCL's, its plugins'), shared by
// the exporters.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace cb::exporting {

struct Spelling {
  std::string_view ours, theirs;
};

template <size_t N>
std::optional<std::string> theirName(const std::array<Spelling, N>& table, std::string_view ours) {
  for (const Spelling& s : table) {
    if (s.ours == ours) return std::string(s.theirs);
  }
  return std::nullopt;
}

template <size_t N>
std::optional<std::string> ourName(const std::array<Spelling, N>& table, std::string_view theirs) {
  for (const Spelling& s : table) {
    if (s.theirs == theirs) return std::string(s.ours);
  }
  return std::nullopt;
}

}  // namespace cb::exporting
