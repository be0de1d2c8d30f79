// A published table of one collective at one scale as CSV: a header naming `size_bytes` and
// `time_us` (other columns, such as algbw and busbw, are read past), one row per size; lines
// starting with '#' are comments (a fixture's source line). The form in which papers and issue
// threads give figures that are not nccl-tests' own output (tests/data/scaling).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb::predict {

struct TimedSize {
  uint64_t bytes = 0;
  double timeUs = 0;
};

// True when the first line that is not a comment or blank names size_bytes and time_us.
bool looksLikeTimeTable(std::string_view text);
// Throws UsageError "predict: FILE:LINE: ..." on a row that is not numbers.
std::vector<TimedSize> parseTimeTable(std::string_view text, const std::string& path);

}  // namespace cb::predict
