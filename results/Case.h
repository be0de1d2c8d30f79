// What identifies one measured point across runs (a "case"), how users write cases and sets of
// sizes on the command line, and the small pure helpers `compare`, `gate` and `history` share.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/Records.h"

namespace cb {

// The case of a result: everything that must match for two measurements to be compared.
// Its text form is the CASE syntax of `collbench history`:
//   collective:variant:dtype:op:size:placement:nranks   e.g.
//   allreduce:ring/local:float:sum:1M:out:2
// with ":root=R" appended for rooted collectives (broadcast, reduce, ...).
struct CaseKey {
  std::string collective, variant, dtype, op;
  uint64_t sizeBytes = 0;
  std::string placement;
  int nranks = 0;  // 0: unknown (ResultRecord::nranks unset)
  int root = -1;   // -1: not rooted or unknown (ResultRecord::root unset)

  auto operator<=>(const CaseKey&) const = default;

  static CaseKey of(const ResultRecord& r);
  std::string toString() const;
  // The series a case belongs to: the same key without the size ("allreduce:ring/local:float:
  // sum:*:out:2"). The gate judges series, so one noisy size does not fail a run.
  CaseKey series() const;
  std::string seriesString() const;
};

// Bytes in the shortest exact binary form parseSize reads back: 1048576 -> "1M", 1536 -> "1536".
std::string compactSize(uint64_t bytes);

// A CASE pattern: the parts of CaseKey::toString in order, separated by ':'. Trailing parts may be
// omitted and any part may be '*' or empty: both match anything. The size part takes the forms
// of --sizes (8, 4K, 1M-64M). Example: "allreduce::float" = every allreduce variant in float.
struct CasePattern {
  std::optional<std::string> collective, variant, dtype, op, placement;
  std::optional<std::pair<uint64_t, uint64_t>> sizes;  // inclusive range
  std::optional<int> nranks;
  std::optional<int> root;

  // Throws UsageError with the offending part.
  static CasePattern parse(std::string_view text);
  bool matches(const CaseKey& key) const;
};

// A set of sizes as --sizes takes it: comma-separated sizes and inclusive ranges, each end
// optional: "1M-64M", "4K,1M", "-64K" (up to 64 KiB), "1M-" (1 MiB and above). Empty = all.
class SizeFilter {
 public:
  static SizeFilter parse(std::string_view text);  // throws UsageError
  bool contains(uint64_t bytes) const;
  bool all() const { return ranges_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
  std::string text_;
};

// Parses one range "A-B", "A", "A-", "-B" (sizes in parseSize form); UsageError naming `what`.
std::pair<uint64_t, uint64_t> parseSizeRange(std::string_view text, std::string_view what);

}  // namespace cb
