// Column-aligned text tables for the history commands (`runs`, `show`): widths follow the
// content, numbers align right, text left, two spaces between columns.
#pragma once

#include <string>
#include <vector>

namespace cb {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string title;
    Align align = Align::kLeft;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // Missing trailing cells are blank; extra cells are an error of the caller (InternalError).
  void addRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // The title line (prefixed by `titlePrefix`, e.g. "#" as nccl-tests marks its header) and the
  // rows (prefixed by as many spaces, so columns line up); trailing blanks trimmed.
  std::string render(const std::string& titlePrefix = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace cb
