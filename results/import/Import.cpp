// Format names, detection from content, and dispatch to the per-tool parsers.
#include "results/import/Import.h"

#include <fmt/format.h>

#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Text.h"
#include "results/import/ImportSupport.h"

namespace cb {

constexpr EnumRow<ImportFormat> kImportFormats[] = {
    {ImportFormat::kAuto, "auto"},
    {ImportFormat::kNcclTests, "nccl-tests"},
    {ImportFormat::kNcclTestsJson, "nccl-tests-json"},
    {ImportFormat::kOsu, "osu"},
    {ImportFormat::kImb, "imb"},
    {ImportFormat::kNcclInspector, "nccl-inspector"}};
std::string_view importFormatName(ImportFormat f) { return enumName(kImportFormats, f, "auto"); }

ImportFormat parseImportFormat(std::string_view name) {
  if (auto f = enumValue(kImportFormats, toLower(trim(name)))) return *f;
  throw UsageError(fmt::format(
      "unknown import format '{}' (expected auto, nccl-tests, nccl-tests-json, osu, imb or "
      "nccl-inspector)",
      name));
}

ImportFormat detectImportFormat(std::string_view text, const std::string& path) {
  std::string_view t = trim(text);
  // nccl-tests -J writes one JSON object, NCCL Inspector a stream of records with its own keys.
  if (t.starts_with("{")) {
    return looksLikeInspectorOutput(t.substr(0, 4096)) ? ImportFormat::kNcclInspector
                                                       : ImportFormat::kNcclTestsJson;
  }
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
    // With or without its '#' (a log pasted from a web page loses it); rccl-tests prints the
    // nccl-tests format.
    std::string_view body = l.starts_with("#") ? trim(l.substr(1)) : l;
    auto tok = importer::splitWhitespace(body);
    if (body.starts_with("nccl-tests version") || body.starts_with("Collective test starting:") ||
        body.starts_with("nThread ") || body.starts_with("rccl-tests:") ||
        (tok.size() >= 3 && tok[0] == "size" && tok[1] == "count" && tok[2] == "type")) {
      return ImportFormat::kNcclTests;
    }
  }
  // A bare nccl-tests table cut out of a log: its first line that is not blank or a '#' line
  // (the column header, the footer) is a data row.
  importer::LineReader rows(text);
  while (rows.next(line)) {
    std::string_view l = trim(line.text);
    if (l.empty() || l.starts_with("#")) continue;
    auto tok = importer::splitWhitespace(l);
    if (tok.size() >= 11 && tok.size() <= 13 && importer::toUnsigned(tok[0]) &&
        importer::toUnsigned(tok[1]) &&
        importer::dataTypeBytes(importer::normalizeDataType(tok[2])) > 0) {
      return ImportFormat::kNcclTests;
    }
    break;
  }
  throw UsageError(fmt::format(
      "import: {}: cannot tell the format (no nccl-tests, OSU or IMB header, not nccl-tests "
      "JSON, not a bare nccl-tests table); pass --format",
      path));
}

namespace {

// An OpenMPI --tag-output prefix, "[1,0]<stdout>:" or "[1,0]<stderr>:"; its length, else 0.
size_t launcherPrefix(std::string_view line) {
  if (line.empty() || line[0] != '[') return 0;
  size_t i = 1;
  auto digits = [&] {
    size_t start = i;
    while (i < line.size() && i - start < 12 && line[i] >= '0' && line[i] <= '9') ++i;
    return i > start;
  };
  if (!digits() || i >= line.size() || line[i++] != ',' || !digits()) return 0;
  for (std::string_view tag : {"]<stdout>:", "]<stderr>:"}) {
    if (line.substr(i).starts_with(tag)) return i + tag.size();
  }
  return 0;
}

// srun --label's "0: " (the task number and ": ") before a line; its length, else 0. No
// benchmark line starts with digits and a colon.
size_t srunLabelPrefix(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 7 && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == 0 || i + 1 >= line.size() || line[i] != ':' || line[i + 1] != ' ') return 0;
  return i + 2;
}

// Length of the valid UTF-8 sequence at text[i], 0 when the byte there does not start one.
size_t utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF   ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms, surrogates and code points beyond U+10FFFF.
  unsigned char d = byte(i + 1);
  if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) ||
      (c == 0xF4 && d > 0x8F)) {
    return 0;
  }
  return n;
}

}  // namespace

PreparedText prepareImportText(std::string_view text, const ImportOptions& options) {
  PreparedText out;
  out.text.reserve(text.size());
  int line = 1, prefixed = 0, labelled = 0, firstBadLine = 0;
  size_t lineStart = 0, bad = 0;
  bool atLineStart = true;
  for (size_t i = 0; i < text.size();) {
    if (atLineStart) {
      atLineStart = false;
      lineStart = out.text.size();
      if (size_t p = launcherPrefix(text.substr(i, 64)); p > 0) {
        i += p;
        ++prefixed;
        continue;
      }
      if (size_t p = options.jsonInput ? 0 : srunLabelPrefix(text.substr(i, 16)); p > 0) {
        i += p;
        ++labelled;
        continue;
      }
    }
    char c = text[i];
    if (c == '\0') {
      importer::fail(options, line, "NUL byte: this is not a text log");
    }
    if (c == '\n') {
      out.text += c;
      ++line;
      ++i;
      atLineStart = true;
      continue;
    }
    // Bounded lines keep every later step (including std::regex, which recurses per character)
    // far from the stack's limit; no benchmark prints lines anywhere near this long.
    const size_t cap = options.jsonInput ? kMaxImportJsonBytes : kMaxImportLineBytes;
    if (out.text.size() - lineStart >= cap) {
      importer::fail(options, line,
                     fmt::format("line longer than {} bytes: not a benchmark log line", cap));
    }
    size_t n = utf8Length(text, i);
    if (n == 0) {
      // Accepted deliberately: a log is kept, the byte shown as '?', and the run says so.
      out.text += '?';
      if (bad++ == 0) firstBadLine = line;
      ++i;
      continue;
    }
    out.text.append(text.substr(i, n));
    i += n;
  }
  if (bad > 0) {
    out.notes.push_back(fmt::format(
        "{} byte(s) that are not UTF-8 replaced by '?' (first on line {})", bad, firstBadLine));
  }
  if (prefixed > 0) {
    out.notes.push_back(fmt::format(
        "{} line(s) carried an MPI launcher prefix ([J,R]<stdout>:), removed", prefixed));
  }
  if (labelled > 0) {
    out.notes.push_back(
        fmt::format("{} line(s) carried srun --label's task prefix (N: ), removed", labelled));
  }
  return out;
}

std::vector<ImportedRun> parseImport(std::string_view text, ImportFormat format,
                                     const ImportOptions& options) {
  ImportOptions o = options;
  std::string_view head = trim(text.substr(0, 4096));
  o.jsonInput = format == ImportFormat::kNcclTestsJson || format == ImportFormat::kNcclInspector ||
                (format == ImportFormat::kAuto && head.starts_with("{"));
  PreparedText prepared = prepareImportText(text, o);
  o.preparationNotes = prepared.notes;
  std::string_view t = prepared.text;
  if (format == ImportFormat::kAuto) format = detectImportFormat(t, o.path);
  if ((o.dtype || o.op) && format != ImportFormat::kNcclInspector) {
    throw UsageError(
        fmt::format("import: {}: --dtype/--op are for logs that do not state them "
                    "(nccl-inspector); this is {}",
                    o.path, importFormatName(format)));
  }
  switch (format) {
    case ImportFormat::kNcclTests: return parseNcclTestsText(t, o);
    case ImportFormat::kNcclTestsJson: return parseNcclTestsJson(t, o);
    case ImportFormat::kOsu: return parseOsu(t, o);
    case ImportFormat::kImb: return parseImb(t, o);
    case ImportFormat::kNcclInspector: return parseNcclInspector(t, o);
    case ImportFormat::kAuto: break;
  }
  throw InternalError("import: unreachable format");
}

}  // namespace cb
