// Format names, detection from content, and dispatch to the per-tool parsers.
#include "results/import/Import.h"

#include <fmt/format.h>

#include "core/Error.h"
#include "core/Text.h"
#include "results/import/ImportSupport.h"

namespace cb {

std::string_view importFormatName(ImportFormat f) {
  switch (f) {
    case ImportFormat::kAuto: return "auto";
    case ImportFormat::kNcclTests: return "nccl-tests";
    case ImportFormat::kNcclTestsJson: return "nccl-tests-json";
    case ImportFormat::kOsu: return "osu";
    case ImportFormat::kImb: return "imb";
  }
  return "auto";
}

ImportFormat parseImportFormat(std::string_view name) {
  for (auto f : {ImportFormat::kAuto, ImportFormat::kNcclTests, ImportFormat::kNcclTestsJson,
                 ImportFormat::kOsu, ImportFormat::kImb}) {
    if (toLower(trim(name)) == importFormatName(f)) return f;
  }
  throw UsageError(fmt::format(
      "unknown import format '{}' (expected auto, nccl-tests, nccl-tests-json, osu or imb)", name));
}

ImportFormat detectImportFormat(std::string_view text, const std::string& path) {
  std::string_view t = trim(text);
  // nccl-tests -J writes one JSON object; nothing else here starts with a brace.
  if (t.starts_with("{")) return ImportFormat::kNcclTestsJson;
  importer::LineReader reader(text);
  importer::Line line;
  while (reader.next(line)) {
    std::string_view l = trim(line.text);
    if (l.starts_with("# OSU ")) return ImportFormat::kOsu;
    if (l.find("Intel(R) MPI Benchmark") != std::string_view::npos ||
        l.find("Intel (R) MPI Benchmark") != std::string_view::npos ||
        l.starts_with("# Benchmarking ")) {
      return ImportFormat::kImb;
    }
    if (l.starts_with("# nccl-tests version") || l.starts_with("# Collective test starting:") ||
        l.starts_with("# nThread ")) {
      return ImportFormat::kNcclTests;
    }
  }
  throw UsageError(fmt::format(
      "import: {}: cannot tell the format (no nccl-tests, OSU or IMB header, not nccl-tests "
      "JSON); pass --format",
      path));
}

std::vector<ImportedRun> parseImport(std::string_view text, ImportFormat format,
                                     const ImportOptions& options) {
  if (format == ImportFormat::kAuto) format = detectImportFormat(text, options.path);
  switch (format) {
    case ImportFormat::kNcclTests: return parseNcclTestsText(text, options);
    case ImportFormat::kNcclTestsJson: return parseNcclTestsJson(text, options);
    case ImportFormat::kOsu: return parseOsu(text, options);
    case ImportFormat::kImb: return parseImb(text, options);
    case ImportFormat::kAuto: break;
  }
  throw InternalError("import: unreachable format");
}

}  // namespace cb
