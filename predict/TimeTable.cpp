#include "predict/TimeTable.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/Error.h"

namespace cb::predict {
namespace {

std::vector<std::string_view> splitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view cell =
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t' || cell.back() == '\r'))
      cell.remove_suffix(1);
    out.push_back(cell);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

template <class F>
void forEachLine(std::string_view text, F f) {
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++number;
    start = end + 1;
    std::string_view trimmed = line;
    while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t'))
      trimmed.remove_prefix(1);
    if (trimmed.empty() || trimmed == "\r" || trimmed.front() == '#') continue;
    if (!f(line, number)) return;
  }
}

int columnOf(const std::vector<std::string_view>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

bool looksLikeTimeTable(std::string_view text) {
  bool yes = false;
  forEachLine(text, [&](std::string_view line, int) {
    auto header = splitCsv(line);
    yes = columnOf(header, "size_bytes") >= 0 && columnOf(header, "time_us") >= 0;
    return false;
  });
  return yes;
}

std::vector<TimedSize> parseTimeTable(std::string_view text, const std::string& path) {
  std::vector<TimedSize> rows;
  int sizeCol = -1, timeCol = -1;
  size_t width = 0;
  forEachLine(text, [&](std::string_view line, int number) {
    auto cells = splitCsv(line);
    if (sizeCol < 0) {
      sizeCol = columnOf(cells, "size_bytes");
      timeCol = columnOf(cells, "time_us");
      width = cells.size();
      if (sizeCol < 0 || timeCol < 0) {
        throw UsageError(fmt::format(
            "predict: {}:{}: not a table with size_bytes and time_us columns", path, number));
      }
      return true;
    }
    if (cells.size() != width) {
      throw UsageError(fmt::format("predict: {}:{}: {} cells, the header has {}", path, number,
                                   cells.size(), width));
    }
    TimedSize row;
    std::string_view s = cells[sizeCol], t = cells[timeCol];
    auto [sp, se] = std::from_chars(s.data(), s.data() + s.size(), row.bytes);
    auto [tp, te] = std::from_chars(t.data(), t.data() + t.size(), row.timeUs);
    if (se != std::errc{} || sp != s.data() + s.size() || te != std::errc{} ||
        tp != t.data() + t.size() || row.bytes == 0 || !(row.timeUs > 0) ||
        !std::isfinite(row.timeUs)) {
      throw UsageError(fmt::format(
          "predict: {}:{}: size '{}' or time '{}' is not a positive number", path, number, s, t));
    }
    rows.push_back(row);
    return true;
  });
  if (rows.empty()) throw UsageError(fmt::format("predict: {}: no rows", path));
  return rows;
}

}  // namespace cb::predict
