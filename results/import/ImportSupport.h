// Pieces shared by the log importers: numbered lines, strict number parsing, the one-line error
// format, collective and datatype names, and the bandwidth conventions of the design brief for
// tools that print only a time (OSU, IMB).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/import/Import.h"

namespace cb::importer {

struct Line {
  int number = 0;         // 1-based
  std::string_view text;  // without the line break and trailing whitespace
};

// Walks a text line by line ("\n" or "\r\n").
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(Line& line);

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int number_ = 0;
};

// "import: FILE:LINE: what" (LINE omitted when 0).
[[noreturn]] void fail(const ImportOptions& options, int line, std::string_view what);
// "import: FILE:LINE: cannot parse '<line>'" plus an optional reason.
[[noreturn]] void failParse(const ImportOptions& options, const Line& line,
                            std::string_view why = {});

std::vector<std::string_view> splitWhitespace(std::string_view s);

// A table header's columns read by name: rows {header name, the member that keeps its index}.
template <class Columns>
struct NamedColumn {
  std::string_view name;
  int Columns::*index;
};
// The member of the column called `name`; nullptr when the table does not read it.
template <class Columns, size_t N>
int Columns::*columnNamed(const NamedColumn<Columns> (&table)[N], std::string_view name) {
  for (const NamedColumn<Columns>& c : table) {
    if (c.name == name) return c.index;
  }
  return nullptr;
}
// Whole-token conversions; nullopt unless the entire token is a number of that kind.
std::optional<uint64_t> toUnsigned(std::string_view s);
std::optional<int64_t> toSigned(std::string_view s);
std::optional<double> toDouble(std::string_view s);  // finite values only
// A whole-token integer in [lo, hi]; else "import: FILE:LINE: WHAT 'TEXT' is not a whole number
// from LO to HI" (logs are untrusted: never std::stoi, which throws out of range).
int64_t boundedInt(const ImportOptions& options, int line, std::string_view text, int64_t lo,
                   int64_t hi, std::string_view what);

// "all_reduce_perf", "AllReduce", "bcast" -> "allreduce", "broadcast"; names outside collbench's
// set are kept lowercased without "_perf", '-' and ' ' as '_' ("gather", "reduce_scatter_block").
std::string normalizeCollective(std::string_view name);
// The collective of a section: what the log states, else --collective, else an error at `line`.
// `stated` empty means the log does not say; `what` describes where the name was looked for.
std::string resolveCollective(const std::string& stated, const ImportOptions& options, int line,
                              std::string_view what);
// The world size: stated by the log (0 = not stated), checked against --world-size.
int resolveWorldSize(int stated, const ImportOptions& options, int line);

// MPI_INT -> "int32", MPI_CHAR -> "int8", MPI_BYTE -> "uint8", MPI_FLOAT -> "float", ...;
// unknown names are returned lowercased without the MPI_ prefix.
std::string mpiTypeName(std::string_view mpiType);
// nccl-tests type names normalised through core's parser ("float32" -> "float"); others kept.
std::string normalizeDataType(std::string_view name);
size_t dataTypeBytes(std::string_view dtype);  // 0 when unknown

// The brief's conventions for a tool that reports `size` bytes per call in the way OSU and IMB
// do (per-rank block for allgather/alltoall/gather/scatter, whole vector otherwise):
// S = algBytes, busbw = algbw * busFactor. nullopt when the collective is not covered or the
// world size is needed and unknown (n == 0).
std::optional<double> toolAlgBytes(std::string_view collective, uint64_t size, int n);
std::optional<double> busFactor(std::string_view collective, int n);
bool isReduction(std::string_view collective);

// "2020-09-11 15:04:20" or "Fri Sep 11 15:04:20 2020" -> "2020-09-11T15:04:20"; "" if not a date.
std::string isoFromLocalTime(std::string_view text);
// NCCL_VERSION_CODE -> "2.26.2" (22602) or "2.7.8" (2708).
std::string ncclVersionFromCode(long code);

// Fills what every imported run shares (source, worldKind, commandLine, label, collbenchVersion,
// the import-time startedAt default) and stores `environment` plus the notes as environmentJson.
void finishImportedRun(ImportedRun& run, const ImportOptions& options, std::string_view source,
                       nlohmann::ordered_json environment);

}  // namespace cb::importer
