// OSU micro-benchmarks logs: point-to-point latency/bw/bibw and the blocking collectives, in the
// default and full-statistics (-f) layouts, v5.x to v7.x (the "# Datatype:" line, Validation and
// tail-latency columns), for MPI, MPI-CUDA/ROCM and the NCCL (xccl) variant. Each "# OSU ..."
// title starts a run, so several outputs concatenated in one file import as several runs.
//
// Units: OSU's MB/s is 1e6 bytes/s (osu_bw: size / 1e6 * iterations * window / time), so
// algbw GB/s = MB/s / 1000. bibw counts both directions, as OSU prints it. For the bandwidth
// tests the time per message is derived as size / bandwidth; for latency tests algbw is
// size / time. Collectives: timeUs is OSU's average latency; algbw and busbw follow the brief's
// table, which needs the world size for every collective but broadcast and reduce. OSU never
// prints it for collectives, so it comes from --world-size or from the one "#Using NCCL" line
// each rank of the xccl variant prints; without it algbw/busbw stay 0 and a note says so.
#include <fmt/format.h>

#include <cmath>
#include <regex>

#include "core/Text.h"
#include "results/import/Import.h"
#include "results/import/ImportSupport.h"

namespace cb {
namespace {

using importer::Line;
using json = nlohmann::ordered_json;

enum class Kind { kLatency, kBandwidth, kCollective };

struct Test {
  std::string collective;  // "latency", "bw", "bibw", "allreduce", ...
  Kind kind = Kind::kCollective;
};

// The test name between the backend and "Test" in the title, lowercased.
std::optional<Test> testFromTitle(std::string name) {
  name = toLower(name);
  if (name == "latency" || name == "multi latency" || name == "multi-latency") {
    return Test{name == "latency" ? "latency" : "multi_latency", Kind::kLatency};
  }
  if (name == "bandwidth") return Test{"bw", Kind::kBandwidth};
  if (name == "bi-directional bandwidth") return Test{"bibw", Kind::kBandwidth};
  if (name == "multiple bandwidth / message rate") return Test{"mbw_mr", Kind::kBandwidth};
  const std::string suffix = " latency";
  if (!name.ends_with(suffix)) return std::nullopt;
  std::string coll = name.substr(0, name.size() - suffix.size());
  if (coll.starts_with("non-blocking") || coll.starts_with("persistent")) return std::nullopt;
  if (coll == "all-to-all personalized exchange") coll = "alltoall";
  if (coll == "all-to-allv personalized exchange") coll = "alltoallv";
  if (coll == "reduce scatter") coll = "reduce_scatter";
  static const std::string_view kKnown[] = {
      "allreduce", "allgather", "allgatherv", "alltoall",       "alltoallv",
      "broadcast", "bcast",     "reduce",     "reduce_scatter", "reduce_scatter_block",
      "gather",    "gatherv",   "scatter",    "scatterv",       "barrier"};
  for (auto k : kKnown) {
    if (coll == k) return Test{importer::normalizeCollective(coll), Kind::kCollective};
  }
  return std::nullopt;
}

struct Columns {
  int headerLine = 0;
  bool hasSize = true;
  int avg = -1, latency = -1, bandwidth = -1, mbps = -1, msgRate = -1, min = -1, max = -1,
      iterations = -1, validation = -1, p50 = -1, p99 = -1;
  int count = 0;  // value columns after Size
};

struct Section {
  int titleLine = 0;
  std::string title, backend, device, version;
  Test test;
  std::string dtype;  // from "# Datatype:"
  int pairs = 0;      // osu_mbw_mr "# [ pairs: N ]"
  int usingNccl = 0;  // "#Using NCCL" lines before the title
  std::optional<Columns> columns;
  std::vector<ResultRecord> results;
  bool validationFailed = false;
  std::vector<std::string> notes;
};

class OsuParser {
 public:
  explicit OsuParser(const ImportOptions& options) : options_(options) {}

  std::vector<ImportedRun> parse(std::string_view text) {
    importer::LineReader reader(text);
    Line line;
    while (reader.next(line)) handle(line);
    close();
    if (runs_.empty()) importer::fail(options_, 0, "no '# OSU ... Test' title found");
    return std::move(runs_);
  }

 private:
  void handle(const Line& line) {
    std::string_view t = trim(line.text);
    if (t.empty()) return;
    std::string s(t);
    std::smatch m;
    if (s.starts_with("#Using NCCL") || s.starts_with("# Using NCCL")) {
      ++usingNcclLines_;  // printed once per rank by the xccl benchmarks, before the title
      return;
    }
    if (std::regex_match(s, m, kTitle)) return startSection(line, m);
    if (t.front() == '#') {
      if (!current_) return;  // comments before the first title
      if (std::regex_search(s, m, kDatatype)) {
        current_->dtype = importer::mpiTypeName(m[1].str());
      } else if (std::regex_search(s, m, kPairs)) {
        current_->pairs = static_cast<int>(
            importer::boundedInt(options_, line.number, m[1].str(), 1, 1 << 24, "pairs"));
      } else if (std::regex_search(s, kSizeHeader) || std::regex_search(s, kNoSizeHeader)) {
        parseHeader(line, s);
      }
      return;  // other comments ("# Send Buffer on DEVICE ...", window sizes) are fine
    }
    if (!current_ || !current_->columns) importer::failParse(options_, line);
    parseRow(line);
  }

  void startSection(const Line& line, const std::smatch& m) {
    close();
    Section sec;
    sec.titleLine = line.number;
    sec.title = m[0].str();
    sec.backend = m[1].str();
    sec.device = m[2].matched ? m[2].str() : "";
    sec.version = m[4].matched ? m[4].str() : "";
    auto test = testFromTitle(m[3].str());
    if (!test) {
      importer::fail(options_, line.number,
                     fmt::format("unsupported OSU test '{}' (import knows latency, bw, bibw, "
                                 "mbw_mr and the blocking collectives)",
                                 m[3].str()));
    }
    sec.test = *test;
    sec.usingNccl = usingNcclLines_;
    usingNcclLines_ = 0;
    current_ = std::move(sec);
  }

  void parseHeader(const Line& line, const std::string& s) {
    Columns c;
    c.headerLine = line.number;
    std::string rest(trim(std::string_view(s).substr(1)));
    if (rest.starts_with("Size")) {
      rest = rest.substr(4);
    } else {
      c.hasSize = false;  // osu_barrier: no size column
    }
    // Column names contain spaces; match them one after another.
    static const std::pair<std::regex, int Columns::*> kNames[] = {
        {std::regex(R"(^Avg Latency\s*\(us\))"), &Columns::avg},
        {std::regex(R"(^Min Latency\s*\(us\))"), &Columns::min},
        {std::regex(R"(^Max Latency\s*\(us\))"), &Columns::max},
        {std::regex(R"(^Latency\s*\(us\))"), &Columns::latency},
        {std::regex(R"(^Bandwidth\s*\(MB/s\))"), &Columns::bandwidth},
        {std::regex(R"(^MB/s)"), &Columns::mbps},
        {std::regex(R"(^Messages/s)"), &Columns::msgRate},
        {std::regex(R"(^Iterations)"), &Columns::iterations},
        {std::regex(R"(^Validation)"), &Columns::validation},
        {std::regex(R"(^P50 Tail Lat\s*\(us\))"), &Columns::p50},
        {std::regex(R"(^P99 Tail Lat\s*\(us\))"), &Columns::p99},
    };
    static const std::regex kOtherTail(R"(^P\d+ Tail (Lat\s*\(us\)|BW\s*\(MB/s\)))");
    int index = 0;
    while (!(rest = std::string(trim(rest))).empty()) {
      std::smatch m;
      bool matched = false;
      for (const auto& [re, member] : kNames) {
        if (std::regex_search(rest, m, re)) {
          c.*member = index;
          matched = true;
          break;
        }
      }
      if (!matched && !std::regex_search(rest, m, kOtherTail)) {
        importer::failParse(options_, line, fmt::format("unknown OSU column at '{}'", rest));
      }
      rest = rest.substr(m.length(0));
      ++index;
    }
    c.count = index;
    bool ok = false;
    switch (current_->test.kind) {
      case Kind::kLatency: ok = c.latency >= 0 || c.avg >= 0; break;
      case Kind::kBandwidth: ok = c.bandwidth >= 0 || c.mbps >= 0; break;
      case Kind::kCollective: ok = c.avg >= 0; break;
    }
    if (!ok || (!c.hasSize && current_->test.collective != "barrier")) {
      importer::failParse(options_, line, "columns do not match the test in the title");
    }
    current_->columns = c;
  }

  void parseRow(const Line& line) {
    Section& sec = *current_;
    const Columns& c = *sec.columns;
    auto tok = importer::splitWhitespace(line.text);
    size_t expected = static_cast<size_t>(c.count) + (c.hasSize ? 1 : 0);
    if (tok.size() != expected) {
      importer::failParse(options_, line,
                          fmt::format("{} fields, the header has {}", tok.size(), expected));
    }
    size_t first = c.hasSize ? 1 : 0;
    auto value = [&](int col) -> double {
      auto v = importer::toDouble(tok[first + col]);
      if (!v)
        importer::failParse(options_, line, fmt::format("'{}' is not a number", tok[first + col]));
      return *v;
    };
    ResultRecord r;
    if (c.hasSize) {
      auto size = importer::toUnsigned(tok[0]);
      if (!size) importer::failParse(options_, line, "the size must be an integer");
      r.sizeBytes = *size;
    }
    r.placement = "out";
    r.statistic = "mean";
    if (c.latency >= 0) r.timeUs = value(c.latency);
    if (c.avg >= 0) r.timeUs = value(c.avg);
    r.timeKnown = c.latency >= 0 || c.avg >= 0;
    if (r.timeKnown) r.meanUs = r.timeUs;
    if (c.min >= 0) r.minUs = value(c.min);
    if (c.max >= 0) r.maxUs = value(c.max);
    r.medianKnown = c.p50 >= 0;
    if (c.p50 >= 0) r.medianUs = value(c.p50);
    if (c.p99 >= 0) r.p99Us = value(c.p99);
    if (c.iterations >= 0) {
      auto it = importer::toUnsigned(tok[first + c.iterations]);
      if (!it) importer::failParse(options_, line, "iterations must be an integer");
      r.iterations = static_cast<int64_t>(*it);
    }
    if (c.bandwidth >= 0 || c.mbps >= 0) {
      double mbps = value(c.bandwidth >= 0 ? c.bandwidth : c.mbps);
      r.algbw = r.busbw = mbps / 1000;  // OSU MB = 1e6 B
      if (mbps > 0) {
        r.timeUs = static_cast<double>(r.sizeBytes) / mbps;
        r.meanUs = r.timeUs;
        r.timeKnown = true;
      }
    }
    for (int col = 0; col < c.count; ++col) {
      // Every other column (rates, other percentiles) must still be a number.
      if (col != c.validation && col != c.iterations) value(col);
    }
    if (c.validation >= 0) {
      std::string v = toLower(tok[first + c.validation]);
      if (v == "pass") {
        r.wrong = 0;
      } else if (v == "fail") {
        r.wrong = 1;
        r.status = ResultStatus::kFailed;
        r.message = "OSU validation failed (wrong=1 means at least one element)";
        sec.validationFailed = true;
      } else {
        importer::failParse(options_, line, "validation must be Pass or Fail");
      }
    }
    sec.results.push_back(std::move(r));
  }

  void close() {
    if (!current_) return;
    Section sec = std::move(*current_);
    current_.reset();
    if (sec.results.empty()) {
      importer::fail(options_, sec.titleLine,
                     fmt::format("'{}' has no result rows", trim(sec.title)));
    }
    ImportedRun run;
    run.notes = std::move(sec.notes);
    const std::string& coll = sec.test.collective;
    importer::resolveCollective(coll, options_, sec.titleLine, "");

    int stated = 0;
    if (sec.test.kind != Kind::kCollective) {
      stated = sec.test.collective == "mbw_mr" ? 2 * sec.pairs : 2;
      if (stated == 0) run.notes.push_back("no '# [ pairs: N ]' line: the world size is not known");
    } else if (sec.usingNccl >= 2) {
      stated = sec.usingNccl;
      run.notes.push_back(
          fmt::format("world size {} from the '#Using NCCL' lines, one per rank", sec.usingNccl));
    }
    int n = importer::resolveWorldSize(stated, options_, sec.titleLine);

    std::string lib = toLower(sec.backend);
    std::string variant = lib;
    if (lib == "mpi" && !sec.device.empty()) variant = "mpi:" + toLower(sec.device);
    if (sec.dtype.empty()) {
      run.notes.push_back("the log states no datatype");
    }
    size_t es = importer::dataTypeBytes(sec.dtype);
    bool missingBw = false;
    for (auto& r : sec.results) {
      r.collective = coll;
      r.variant = variant;
      if (n > 0) r.nranks = n;
      r.dtype = sec.dtype;  // "" (unknown) when the log states none
      r.op = importer::isReduction(coll) ? "sum" : "none";
      if (es > 0) r.count = r.sizeBytes / es;
      if (sec.test.kind == Kind::kBandwidth) continue;
      auto bytes = importer::toolAlgBytes(coll, r.sizeBytes, n);
      auto factor = importer::busFactor(coll, n);
      if (bytes && r.timeUs > 0) {
        r.algbw = *bytes / (r.timeUs * 1e3);  // B/us -> GB/s
        if (factor) r.busbw = *r.algbw * *factor;
      }
      missingBw = missingBw || ((!bytes || !factor) && coll != "barrier");
    }
    if (missingBw) {
      run.notes.push_back(
          n > 0 ? fmt::format("no bus bandwidth convention for {}: algbw/busbw left unknown", coll)
                : "the log does not state the world size (pass --world-size): algbw/busbw are "
                  "unknown where they depend on it");
    }
    if (sec.test.kind == Kind::kBandwidth) {
      run.notes.push_back("OSU MB/s = 1e6 B/s; timeUs derived as size / bandwidth");
    }
    if (importer::isReduction(coll)) run.notes.push_back("op 'sum': OSU reduces with MPI_SUM");

    RunRecord& rec = run.run;
    rec.worldSize = n;
    rec.status = sec.validationFailed ? RunStatus::kFailed : RunStatus::kOk;
    json env = json::object();
    env["tool"] = "osu";
    env["toolVersion"] = sec.version;
    env["title"] = std::string(trim(sec.title));
    env["backend"] = sec.backend;
    if (!sec.device.empty()) env["memory"] = toLower(sec.device);
    run.results = std::move(sec.results);
    importer::finishImportedRun(run, options_, "osu", std::move(env));
    runs_.push_back(std::move(run));
  }

  const ImportOptions& options_;
  std::optional<Section> current_;
  std::vector<ImportedRun> runs_;
  int usingNcclLines_ = 0;

  // "# OSU MPI-CUDA Bandwidth Test v7.5", "# OSU NCCL-CUDA Allreduce Latency Test v7.5".
  static inline const std::regex kTitle{
      R"(^#\s*OSU\s+([A-Za-z+]+)(?:-([A-Za-z]+(?: MANAGED)?))?\s+(.+?)\s+Test(?:\s+v(\S+))?\s*$)"};
  static inline const std::regex kDatatype{R"(^#\s*Datatype:\s*(\S+))"};
  static inline const std::regex kPairs{R"(^#\s*\[\s*pairs:\s*(\d+)\s*\])"};
  static inline const std::regex kSizeHeader{R"(^#\s*Size\s+\S)"};
  static inline const std::regex kNoSizeHeader{R"(^#\s*Avg Latency\s*\(us\))"};
};

}  // namespace

std::vector<ImportedRun> parseOsu(std::string_view text, const ImportOptions& options) {
  return OsuParser(options).parse(text);
}

}  // namespace cb
