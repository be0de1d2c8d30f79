// Importers for the logs teams already have: nccl-tests (text tables in every format since the
// DGX-2 era, and the -J JSON report), OSU micro-benchmarks and Intel MPI Benchmarks. Each parser
// takes a file's text and returns runs ready for Store::beginRun/addResults/finishRun; nothing is
// written here, so a caller can parse every file before touching the database.
//
// Parsers are strict: a line that is neither a known part of the tool's output nor a comment or
// blank line is an error naming FILE:LINE and the line (UsageError), never silently skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/Records.h"

namespace cb {

struct ImportedRun {
  RunRecord run;  // status ok/failed/interrupted as the log shows it; id 0 until stored
  std::vector<ResultRecord> results;
  std::vector<std::string> notes;  // what the importer assumed or could not know
};

enum class ImportFormat { kAuto, kNcclTests, kNcclTestsJson, kOsu, kImb, kNcclInspector };
// "auto", "nccl-tests", "nccl-tests-json", "osu", "imb", "nccl-inspector" (also the
// RunRecord::source values).
std::string_view importFormatName(ImportFormat f);
ImportFormat parseImportFormat(std::string_view name);  // throws UsageError

struct ImportOptions {
  std::string path;   // shown in errors and kept as commandLine "import <path>"
  std::string label;  // RunRecord::label
  // The collective when the log does not name it (old nccl-tests tables). When the log names one
  // and this differs, the import fails rather than mislabel the data.
  std::optional<std::string> collective;
  // Ranks, when the log does not state them (OSU collectives). 0 = unknown. A log that states a
  // different number is an error.
  int worldSize = 0;
  // Data type and reduction of logs that do not state them (NCCL Inspector's records), so they
  // match the cases of benchmark runs. A log that states them is refused with these set.
  std::optional<std::string> dtype, op;
  // startedAt for logs that carry no date (ISO-8601 UTC); "" lets the store use "now".
  std::string importedAt;
  // Set by parseImport: the input is JSON (long lines allowed), and what preparing the text
  // changed (every run's notes get them).
  bool jsonInput = false;
  std::vector<std::string> preparationNotes;
};

// Lines longer than this fail a text log.
constexpr size_t kMaxImportLineBytes = 4096;
// JSON (an nccl-tests -J report, or one NCCL Inspector record per line): a line, and a whole
// nccl-tests report, longer than this is refused. A report of 1,024 ranks is about 200 KB, and
// parsing JSON takes about 20 times its size in memory.
constexpr size_t kMaxImportJsonBytes = 4u << 20;
// Files larger than this are refused before parsing (ImportCommand reads at most this much).
// The bound of an import's memory: about 3 times the file (the file, the prepared copy, the
// records); docs/ARCHITECTURE.md ("results/import") states the measured figures.
constexpr size_t kMaxImportFileBytes = 64u << 20;

// What parseImport does to a file's bytes before any parser sees them: strips OpenMPI
// --tag-output prefixes ("[1,0]<stdout>:"), replaces bytes that are not UTF-8 by '?', and fails
// (FILE:LINE) on a NUL byte or a text line longer than kMaxImportLineBytes.
struct PreparedText {
  std::string text;
  std::vector<std::string> notes;
};
PreparedText prepareImportText(std::string_view text, const ImportOptions& options);

// Recognises the format from the content (never from the file name); UsageError naming the file
// when it matches none.
ImportFormat detectImportFormat(std::string_view text, const std::string& path);

// Parses one file (prepared as above). kAuto detects first. Throws UsageError
// "import: FILE:LINE: ..." on the first problem.
std::vector<ImportedRun> parseImport(std::string_view text, ImportFormat format,
                                     const ImportOptions& options);

std::vector<ImportedRun> parseNcclTestsText(std::string_view text, const ImportOptions& options);
std::vector<ImportedRun> parseNcclTestsJson(std::string_view text, const ImportOptions& options);
std::vector<ImportedRun> parseOsu(std::string_view text, const ImportOptions& options);
std::vector<ImportedRun> parseImb(std::string_view text, const ImportOptions& options);
// NCCL Inspector's per-collective JSON records (results/import/InspectorImport.cpp): one run.
std::vector<ImportedRun> parseNcclInspector(std::string_view text, const ImportOptions& options);
// The start of a file names Inspector's record keys ("coll_perf", ...).
bool looksLikeInspectorOutput(std::string_view head);

}  // namespace cb
