// What `collbench export` writes: the stored runs a selection names, and those runs, their results
// or their raw samples as CSV, JSON or JSON lines, or their results in another tool's format
// (results/export/). cli/ExportCommand keeps the flags, their checks and the output file.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "results/Store.h"

namespace cb {

// The formats of whole documents (a header, then rows) and the tool formats of results.
bool isExportTableFormat(const std::string& format);
const std::vector<std::string>& exportToolFormats();
bool isExportToolFormat(const std::string& format);

// One run (`run`: an id or last/latest), or, when `run` is empty, the runs `filter` selects,
// oldest first. UsageError for a bad id, a missing run or "last" on an empty store.
struct ExportSelection {
  std::string run;
  RunFilter filter;
};
std::vector<RunRecord> selectExportRuns(const Store& store, const ExportSelection& selection);

struct ExportTableOptions {
  std::string what = "runs";   // runs, results or samples
  std::string format = "csv";  // csv, json or jsonl
  bool perRank = false;        // samples: also every rank's own times
};

// Writes the document through `sink` as it goes: CSV rows and JSON lines leave one at a time (a
// reader of a pipe gets them as they are read); a JSON array is written at the end. Unknown
// values (NULL in the store) are empty CSV fields and JSON nulls.
void writeExportTable(const Store& store, const std::vector<RunRecord>& runs,
                      const ExportTableOptions& options,
                      const std::function<void(std::string_view)>& sink);

// The results of `runs` in the tool format `format` (one of exportToolFormats()). The fitted
// formats leave out cases they cannot fit: one line each in `leftOut` when given.
std::string exportToolText(const Store& store, const std::vector<RunRecord>& runs,
                           const std::string& format, std::vector<std::string>* leftOut);

// The fields joined by commas, each through csvField (core/Text.h), and a line break.
std::string exportCsvLine(const std::vector<std::string>& fields);

}  // namespace cb
