// Shared helpers of the log importers (see ImportSupport.h).
#include "results/import/ImportSupport.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/Collective.h"
#include "core/DataType.h"
#include "core/Error.h"
#include "core/Text.h"

namespace cb::importer {

bool LineReader::next(Line& line) {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view raw = text_.substr(pos_, end - pos_);
  pos_ = end + 1;
  while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.remove_suffix(1);
  line.number = ++number_;
  line.text = raw;
  return true;
}

void fail(const ImportOptions& options, int line, std::string_view what) {
  if (line > 0) throw UsageError(fmt::format("import: {}:{}: {}", options.path, line, what));
  throw UsageError(fmt::format("import: {}: {}", options.path, what));
}

void failParse(const ImportOptions& options, const Line& line, std::string_view why) {
  std::string shown(trim(line.text));
  constexpr size_t kMaxShown = 120;
  if (shown.size() > kMaxShown) shown = shown.substr(0, kMaxShown) + "...";
  if (why.empty()) fail(options, line.number, fmt::format("cannot parse '{}'", shown));
  fail(options, line.number, fmt::format("cannot parse '{}' ({})", shown, why));
}

std::vector<std::string_view> splitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::optional<uint64_t> toUnsigned(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> toSigned(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> toDouble(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

int64_t boundedInt(const ImportOptions& options, int line, std::string_view text, int64_t lo,
                   int64_t hi, std::string_view what) {
  auto v = toSigned(text);
  if (!v || *v < lo || *v > hi) {
    std::string shown(text.substr(0, 40));
    fail(options, line,
         fmt::format("{} '{}' is not a whole number from {} to {}", what, shown, lo, hi));
  }
  return *v;
}

std::string normalizeCollective(std::string_view name) {
  std::string v = toLower(trim(name));
  // A path to the nccl-tests binary: keep the file name.
  if (auto slash = v.find_last_of('/'); slash != std::string::npos) v = v.substr(slash + 1);
  // Distributions build the MPI flavour as all_reduce_perf_mpi.
  if (v.size() > 4 && v.ends_with("_mpi")) v.resize(v.size() - 4);
  try {
    return std::string(collectiveName(parseCollective(v)));
  } catch (const UsageError&) {
  }
  if (v.size() > 5 && v.ends_with("_perf")) v.resize(v.size() - 5);
  for (char& c : v) {
    if (c == '-' || c == ' ') c = '_';
  }
  return v;
}

std::string resolveCollective(const std::string& stated, const ImportOptions& options, int line,
                              std::string_view what) {
  if (!stated.empty()) {
    if (options.collective && normalizeCollective(*options.collective) != stated) {
      fail(options, line,
           fmt::format("--collective {} contradicts the log, which names {}", *options.collective,
                       stated));
    }
    return stated;
  }
  if (options.collective) {
    std::string c = normalizeCollective(*options.collective);
    if (c.empty()) fail(options, 0, "--collective is empty");
    return c;
  }
  fail(options, line,
       fmt::format("the log does not name the collective ({}); pass --collective NAME", what));
}

int resolveWorldSize(int stated, const ImportOptions& options, int line) {
  if (stated > 0 && options.worldSize > 0 && stated != options.worldSize) {
    fail(options, line,
         fmt::format("--world-size {} contradicts the log, which shows {} ranks", options.worldSize,
                     stated));
  }
  return stated > 0 ? stated : options.worldSize;
}

std::string mpiTypeName(std::string_view mpiType) {
  std::string t(trim(mpiType));
  while (!t.empty() && t.back() == '.') t.pop_back();  // "# Datatype: MPI_INT."
  struct Name {
    std::string_view mpi, cb;
  };
  static constexpr Name kNames[] = {
      {"MPI_CHAR", "int8"},       {"MPI_SIGNED_CHAR", "int8"},     {"MPI_INT8_T", "int8"},
      {"MPI_BYTE", "uint8"},      {"MPI_UNSIGNED_CHAR", "uint8"},  {"MPI_UINT8_T", "uint8"},
      {"MPI_INT", "int32"},       {"MPI_INT32_T", "int32"},        {"MPI_UNSIGNED", "uint32"},
      {"MPI_UINT32_T", "uint32"}, {"MPI_LONG", "int64"},           {"MPI_LONG_LONG", "int64"},
      {"MPI_INT64_T", "int64"},   {"MPI_UNSIGNED_LONG", "uint64"}, {"MPI_UINT64_T", "uint64"},
      {"MPI_FLOAT", "float"},     {"MPI_DOUBLE", "double"},
  };
  for (const auto& n : kNames) {
    if (t == n.mpi) return std::string(n.cb);
  }
  std::string out = toLower(t);
  if (out.starts_with("mpi_")) out = out.substr(4);
  return out;
}

std::string normalizeDataType(std::string_view name) {
  try {
    return std::string(dataTypeName(parseDataType(name)));
  } catch (const UsageError&) {
    return toLower(trim(name));
  }
}

size_t dataTypeBytes(std::string_view dtype) {
  try {
    return dataTypeSize(parseDataType(dtype));
  } catch (const UsageError&) {
    return 0;
  }
}

namespace {

enum class Shape { kWhole, kPerRankBlock, kUnknown };

Shape shapeOf(std::string_view c) {
  static constexpr std::string_view kWhole[] = {"allreduce",
                                                "reduce_scatter",
                                                "reduce_scatter_block",
                                                "broadcast",
                                                "reduce",
                                                "sendrecv",
                                                "latency",
                                                "bw",
                                                "bibw",
                                                "pingping"};
  static constexpr std::string_view kBlock[] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                                "gather",    "gatherv",    "scatter",  "scatterv"};
  for (auto w : kWhole) {
    if (c == w) return Shape::kWhole;
  }
  for (auto b : kBlock) {
    if (c == b) return Shape::kPerRankBlock;
  }
  return Shape::kUnknown;
}

}  // namespace

std::optional<double> toolAlgBytes(std::string_view collective, uint64_t size, int n) {
  switch (shapeOf(collective)) {
    case Shape::kWhole: return static_cast<double>(size);
    case Shape::kPerRankBlock:
      if (n <= 0) return std::nullopt;
      return static_cast<double>(size) * n;
    case Shape::kUnknown: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> busFactor(std::string_view c, int n) {
  if (c == "broadcast" || c == "reduce" || c == "sendrecv" || c == "latency" || c == "bw" ||
      c == "bibw" || c == "pingping") {
    return 1.0;
  }
  if (n <= 0) return std::nullopt;
  if (c == "allreduce") return 2.0 * (n - 1) / n;
  if (shapeOf(c) != Shape::kUnknown) return static_cast<double>(n - 1) / n;
  return std::nullopt;
}

bool isReduction(std::string_view c) {
  return c == "allreduce" || c == "reduce" || c == "reduce_scatter" || c == "reduce_scatter_block";
}

std::string isoFromLocalTime(std::string_view text) {
  std::string t(trim(text));
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char extra = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &extra) == 6) {
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", y, mo, d, h, mi, s);
  }
  // asctime form: "Fri Sep 11 15:04:20 2020" (the day may be space-padded).
  char wday[8] = {}, mon[8] = {};
  if (std::sscanf(t.c_str(), "%7s %7s %d %d:%d:%d %d%c", wday, mon, &d, &h, &mi, &s, &y, &extra) ==
      7) {
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int m = 0; m < 12; ++m) {
      if (kMonths[m] == mon) {
        return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", y, m + 1, d, h, mi, s);
      }
    }
  }
  return "";
}

std::string ncclVersionFromCode(long code) {
  if (code <= 0) return "";
  // NCCL_VERSION(X,Y,Z): X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

void finishImportedRun(ImportedRun& run, const ImportOptions& options, std::string_view source,
                       nlohmann::ordered_json environment) {
  RunRecord& r = run.run;
  r.source = std::string(source);
  r.worldKind = "imported";
  r.commandLine = "import " + options.path;
  r.label = options.label;
  r.collbenchVersion = COLLBENCH_VERSION;
  if (r.startedAt.empty()) r.startedAt = options.importedAt;
  if (!environment.is_object()) environment = nlohmann::ordered_json::object();
  environment["importedFrom"] = options.path;
  run.notes.insert(run.notes.end(), options.preparationNotes.begin(),
                   options.preparationNotes.end());
  environment["importNotes"] = run.notes;
  // Text from the log is valid UTF-8 by now (parseImport replaces what is not); replace anyway
  // rather than throw, so no byte of a log can reach the user as an internal error.
  r.environmentJson =
      environment.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace cb::importer
