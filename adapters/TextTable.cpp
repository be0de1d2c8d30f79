// Column-aligned text tables (see TextTable.h).
#include "adapters/TextTable.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {

void TextTable::addRow(std::vector<std::string> cells) {
  if (cells.size() > columns_.size()) {
    throw InternalError(
        fmt::format("table row has {} cells for {} columns", cells.size(), columns_.size()));
  }
  cells.resize(columns_.size());
  // A label with a line break or stray bytes (imported, or stored before labels were checked)
  // must not break the table.
  for (auto& cell : cells) cell = printable(cell);
  rows_.push_back(std::move(cells));
}

std::string TextTable::render(const std::string& titlePrefix) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = columns_[c].title.size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  auto line = [&](const std::string& prefix, auto cell) {
    std::string out = prefix;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out += "  ";
      const std::string& text = cell(c);
      out += columns_[c].align == Align::kRight ? fmt::format("{:>{}}", text, widths[c])
                                                : fmt::format("{:<{}}", text, widths[c]);
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out =
      line(titlePrefix, [&](size_t c) -> const std::string& { return columns_[c].title; });
  std::string pad(titlePrefix.size(), ' ');
  for (const auto& row : rows_) {
    out += line(pad, [&](size_t c) -> const std::string& { return row[c]; });
  }
  return out;
}

}  // namespace cb
