// nccl-tests text logs: every table format seen in the wild, one run per test invocation.
//
// Formats handled (see tests/data/samples):
//  * old (2018-2020): "#   Rank  0 Pid ..." device lines without Group, no root column, no
//    redop column for non-reductions, and an "error" column holding the maximum absolute error
//    of the check rather than a count;
//  * 2022+: "#  Rank  0 Group  0 Pid ..." lines, size count type redop root, then time algbw
//    busbw #wrong for out-of-place and in-place; "N/A" when not checked;
//  * newest: "# nccl-tests version ..." and "# Collective test starting/concluded: <binary>"
//    around each test (several tests may be concatenated in one file), optional per-iteration
//    columns (i_min i_max i_p99 i_cv%), "cputime" and a trailing timestamp.
//
// The old "error" column: nccl-tests compared that maximum with a per-type tolerance
// (DeltaMaxValue: 1e-2 half/bfloat16, 1e-5 float, 1e-12 double, 1e-200 i.e. any difference for
// integers) and counted each placement above it in "Out of bounds values". So a float residual of
// 2e-07 is rounding, not a failure: it is kept in the message and wrong = 0. Above the tolerance
// the placement failed; the log gives no element count, so wrong = 1 means "at least one".
//
// Anything that is not a comment, a blank line, NCCL's own INFO/WARN chatter or a known
// nccl-tests line is an error naming the line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <tuple>

#include "core/Text.h"
#include "results/import/Import.h"
#include "results/import/ImportSupport.h"

namespace cb {
namespace {

using importer::Line;
using json = nlohmann::ordered_json;

struct Device {
  int rank = 0;
  int group = -1;  // absent in the old format
  int64_t pid = 0;
  std::string host;
  int device = 0;
  std::string busId;
  std::string name;
};

// Column positions of one placement (out-of-place or in-place).
struct PlacementColumns {
  int time = -1, algbw = -1, busbw = -1, check = -1;
  int iMin = -1, iMax = -1, iP99 = -1, iCv = -1;
};

struct Table {
  int headerLine = 0;
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  std::vector<PlacementColumns> placements;
  bool errorColumn = false;  // old format: max abs error instead of #wrong
  bool timestamp = false;    // -S: a "date time" pair ends each row
  bool cputime = false;
  size_t columns = 0;  // header tokens, "timestamp" counted once
};

// The columns read by their header names (a placement's after its "time").
constexpr importer::NamedColumn<Table> kTableColumns[] = {{"size", &Table::size},
                                                          {"count", &Table::count},
                                                          {"type", &Table::type},
                                                          {"redop", &Table::redop},
                                                          {"root", &Table::root}};
constexpr importer::NamedColumn<PlacementColumns> kPlacementColumns[] = {
    {"algbw", &PlacementColumns::algbw}, {"busbw", &PlacementColumns::busbw},
    {"i_min", &PlacementColumns::iMin},  {"i_max", &PlacementColumns::iMax},
    {"i_p99", &PlacementColumns::iP99},  {"i_cv%", &PlacementColumns::iCv}};

// The unit of a printed number's last digit: 0.01 in "35.29", 1 in "16603", 1e6 in "1e+06" and
// in "1.0e+07". nccl-tests 2.19 fits its columns by dropping decimals as values grow (algbw
// "1495.0", "1e+06"); older releases printed two decimals and switched to %.1e past 7 digits.
double printedUnit(std::string_view text) {
  const size_t e = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, e);
  const size_t dot = mantissa.find('.');
  int unitExponent =
      dot == std::string_view::npos ? 0 : -static_cast<int>(mantissa.size() - dot - 1);
  if (e != std::string_view::npos) {
    std::string_view exponent = text.substr(e + 1);
    if (exponent.starts_with('+')) exponent.remove_prefix(1);
    if (auto exp = importer::toSigned(exponent)) unitExponent += static_cast<int>(*exp);
  }
  return std::pow(10.0, unitExponent);
}

struct Section {
  int firstLine = 0;
  std::string binary;
  int binaryLine = 0;
  std::string toolVersion;
  long ncclLibrary = 0;
  bool hasParams = false;
  json params = json::object();
  int64_t iters = 0;
  std::vector<Device> devices;
  bool devicesTruncated = false;
  std::optional<Table> table;
  bool inTable = false;
  int rows = 0;
  std::vector<ResultRecord> results;
  std::vector<int> resultLines;  // the log line of each result
  // The unit of each result's last printed algbw and busbw digit (printedUnit).
  std::vector<std::pair<double, double>> bwUnits;
  std::optional<int64_t> outOfBounds;
  bool outOfBoundsFailed = false;
  std::optional<double> avgBusBw;
  bool avgBusBwFailed = false;
  bool concluded = false;
  bool testFailure = false;
  std::string algo;  // NCCL_ALGO as NCCL's INFO lines report it
  std::string ncclVersion, cudaVersion;
  std::string firstTimestamp;
  std::vector<std::string> notes;
  // Lines that are not nccl-tests output (pasted from a web page or a README), by kind: how many
  // and the first one's line number; one note per kind.
  std::vector<std::tuple<std::string, int, int>> skipped;
  std::string rcclLibrary;  // "RCCL version : ..." of rccl-tests
  bool redopBlank = false;  // rows without the redop the header names (old alltoall)

  bool started() const {
    return hasParams || !results.empty() || !binary.empty() || !toolVersion.empty() ||
           table.has_value();
  }
};

double toleranceFor(std::string_view dtype) {
  if (dtype == "half" || dtype == "bfloat16") return 1e-2;
  if (dtype == "float") return 1e-5;
  if (dtype == "double") return 1e-12;
  return 0;  // integers (nccl-tests: 1e-200): any difference is wrong
}

class NcclTestsParser {
 public:
  explicit NcclTestsParser(const ImportOptions& options) : options_(options) {}

  std::vector<ImportedRun> parse(std::string_view text) {
    importer::LineReader reader(text);
    Line line;
    while (reader.next(line)) handle(line);
    closeSection(lastLine_);
    if (runs_.empty()) importer::fail(options_, 0, "no nccl-tests result table found");
    return std::move(runs_);
  }

 private:
  void handle(const Line& line) {
    lastLine_ = line.number;
    std::string_view t = trim(line.text);
    if (t.empty()) return;
    if (handleNcclChatter(t)) return;
    if (t.front() == '#') return handleComment(line, t);
    // nccl-tests' own lines copied without their '#' (a web page's rendering drops it).
    if (std::string marked = "# " + std::string(t); isNcclTestsComment(marked)) {
      skip(line, "nccl-tests line(s) without their '#' mark, read as such");
      return handleComment(line, marked);
    }
    if (handlePastedLine(line, t)) return;
    if (std::regex_search(std::string(t), kTestFailure)) {
      section().testFailure = true;
      section().notes.push_back(fmt::format("line {}: {}", line.number, t));
      return;
    }
    if (t == "..." && !section().devices.empty() && !section().table) {
      // nccl-tests truncates a process's device list at 2048 characters.
      section().devicesTruncated = true;
      return;
    }
    if (t == "...") {
      // A publisher's cut: the rows around it are as printed, the cut ones are not known.
      skip(line, "'...' line(s) where the publisher cut lines");
      return;
    }
    if (section().inTable) return parseRow(line);
    if (!section().table) {
      // A bare table pasted without its header: the columns follow from the row's layout.
      if (auto header = bareHeader(t)) {
        section().notes.push_back(
            fmt::format("line {}: no column header; columns taken from the row layout ({} fields)",
                        line.number, importer::splitWhitespace(t).size()));
        parseHeader(line, importer::splitWhitespace(*header));
        return parseRow(line);
      }
    }
    importer::failParse(options_, line);
  }

  void skip(const Line& line, std::string kind) {
    auto& list = section().skipped;
    for (auto& [k, count, first] : list) {
      if (k == kind) {
        ++count;
        return;
      }
    }
    list.emplace_back(std::move(kind), 1, line.number);
  }

  // A line that nccl-tests prints as a comment, when given its '#': a reader of a pasted log
  // takes "Out of bounds values : 0 OK" or "size count type ..." as what they are.
  static bool isNcclTestsComment(const std::string& s) {
    for (const std::regex* r : {&kVersionLine, &kStarting, &kConcluded, &kParamsLine, &kRankAny,
                                &kOutOfBounds, &kAvgBusBw, &kUsingDevices, &kColumnLines}) {
      if (std::regex_search(s, *r)) return true;
    }
    return false;
  }

  // What a log pasted from a README, a blog or a terminal carries around the table: code fences,
  // the command line, environment assignments, NCCL's and rccl-tests' banners. Skipped with a
  // note per kind; anything else is still an error.
  bool handlePastedLine(const Line& line, std::string_view t) {
    std::string s(t);
    std::smatch m;
    if (t.starts_with("```") || t.starts_with("~~~")) {
      skip(line, "code fence line(s)");
      return true;
    }
    if (std::regex_search(s, m, kNcclBanner)) {
      section().ncclVersion = m[1].str();
      if (m[2].matched) section().cudaVersion = m[2].str();
      skip(line, "NCCL version banner line(s), version kept");
      return true;
    }
    if (std::regex_search(s, m, kRcclTests)) {
      section().toolVersion = "rccl-tests " + m[1].str();
      skip(line, "rccl-tests banner line(s): rccl-tests output is read as the nccl-tests format");
      return true;
    }
    if (std::regex_search(s, m, kRcclBlock)) {
      if (m[1].str() == "RCCL version") section().rcclLibrary = std::string(trim(m[2].str()));
      skip(line, "RCCL/HIP/ROCm version block line(s)");
      return true;
    }
    if (std::regex_search(s, kAssignment)) {
      skip(line, "NAME=value line(s) (environment or job settings)");
      return true;
    }
    if (std::regex_search(s, kCommandLine)) {
      skip(line, "command line(s)");
      return true;
    }
    return false;
  }

  // The header nccl-tests prints above rows like this one: 13 fields (2022+: redop and root,
  // #wrong), 12 (old reductions: redop, no root, error) or 11 (old: neither). nullopt when the
  // line is not such a row.
  static std::optional<std::string> bareHeader(std::string_view t) {
    auto tok = importer::splitWhitespace(t);
    if (tok.size() < 11 || tok.size() > 13) return std::nullopt;
    if (!importer::toUnsigned(tok[0]) || !importer::toUnsigned(tok[1])) return std::nullopt;
    if (importer::dataTypeBytes(importer::normalizeDataType(tok[2])) == 0) return std::nullopt;
    if (tok.size() == 13) {
      return std::string(
          "size count type redop root time algbw busbw #wrong time algbw busbw #wrong");
    }
    if (tok.size() == 12) {
      return std::string("size count type redop time algbw busbw error time algbw busbw error");
    }
    return std::string("size count type time algbw busbw error time algbw busbw error");
  }

  // "host:pid:tid [dev] NCCL INFO ..." lines interleaved with the table when NCCL_DEBUG is set.
  bool handleNcclChatter(std::string_view t) {
    std::smatch m;
    std::string s(t);
    if (!std::regex_search(s, m, kNcclChatter)) return false;
    std::smatch v;
    if (std::regex_search(s, v, kNcclAlgo)) section().algo = toLower(v[1].str());
    if (std::regex_search(s, v, kNcclVersion)) {
      section().ncclVersion = v[1].str();
      if (v[2].matched) section().cudaVersion = v[2].str();
    }
    if (m[1].str() == "WARN") section().notes.push_back(fmt::format("NCCL WARN{}", m[2].str()));
    return true;
  }

  void handleComment(const Line& line, std::string_view t) {
    std::string s(t);
    std::smatch m;
    if (std::regex_search(s, m, kVersionLine)) {
      newSectionIf(section().started(), line.number);
      section().toolVersion = m[1].str();
      if (m[3].matched) {
        section().ncclLibrary = static_cast<long>(importer::boundedInt(
            options_, line.number, m[3].str(), 0, 99999999, "nccl-library version code"));
      }
      return;
    }
    if (std::regex_search(s, m, kStarting)) {
      newSectionIf(section().hasParams || section().table || !section().binary.empty(),
                   line.number);
      section().binary = m[1].str();
      section().binaryLine = line.number;
      return;
    }
    if (std::regex_search(s, m, kConcluded)) {
      section().concluded = true;
      section().inTable = false;
      return;
    }
    if (std::regex_search(s, kParamsLine)) {
      newSectionIf(section().hasParams || section().table.has_value(), line.number);
      parseParams(line, s);
      return;
    }
    if (std::regex_search(s, m, kRankNew)) return addDevice(line, m, true);
    if (std::regex_search(s, m, kRankOld)) return addDevice(line, m, false);
    if (std::regex_search(s, kRankAny)) importer::failParse(options_, line, "device line");
    if (std::regex_search(s, m, kOutOfBounds)) {
      section().outOfBounds = importer::boundedInt(options_, line.number, m[1].str(), 0, INT64_MAX,
                                                   "out-of-bounds count");
      section().outOfBoundsFailed = m[2].str() == "FAILED";
      section().inTable = false;
      return;
    }
    if (std::regex_search(s, m, kAvgBusBw)) {
      auto v = importer::toDouble(m[1].str());
      if (!v) importer::failParse(options_, line, "average bus bandwidth");
      section().avgBusBw = *v;
      section().avgBusBwFailed = m[2].str() == "FAILED";
      section().inTable = false;
      return;
    }
    if (std::regex_search(s, m, kJsonOutput)) {
      section().notes.push_back("nccl-tests also wrote a JSON report: " + m[1].str());
      return;
    }
    if (std::regex_search(s, m, kErrorLine)) {
      section().notes.push_back("nccl-tests reported: " + m[1].str());
      return;
    }
    auto tokens = importer::splitWhitespace(t.substr(1));
    if (tokens.size() >= 2 && tokens[0] == "size" && tokens[1] == "count") {
      return parseHeader(line, tokens);
    }
    // Any other comment (blank "#", "# Using devices", units, "out-of-place in-place") is fine.
  }

  void newSectionIf(bool condition, int lineNumber) {
    if (!condition) return;
    closeSection(lineNumber - 1);
    current_ = Section{};
    current_->firstLine = lineNumber;
  }

  Section& section() {
    if (!current_) {
      current_ = Section{};
      current_->firstLine = lastLine_;
    }
    return *current_;
  }

  void parseParams(const Line& line, const std::string& s) {
    Section& sec = section();
    sec.hasParams = true;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), kParamPair);
         it != std::sregex_iterator(); ++it) {
      std::string key = (*it)[1].matched ? (*it)[1].str() : (*it)[3].str();
      std::string value = (*it)[1].matched ? (*it)[2].str() : (*it)[4].str();
      if (auto n = importer::toSigned(value)) {
        sec.params[key] = *n;
      } else {
        sec.params[key] = value;  // "2(factor)"
      }
      if (key == "iters") {
        auto n = importer::toSigned(value);
        if (!n) importer::failParse(options_, line, "iters");
        sec.iters = *n;
      }
    }
  }

  void addDevice(const Line& line, const std::smatch& m, bool withGroup) {
    Section& sec = section();
    Device d;
    int i = 1;
    constexpr int64_t kMaxRank = 1 << 24;  // far beyond any machine; keeps sets and ints sane
    d.rank = static_cast<int>(
        importer::boundedInt(options_, line.number, m[i++].str(), 0, kMaxRank, "rank"));
    if (withGroup) {
      d.group = static_cast<int>(
          importer::boundedInt(options_, line.number, m[i++].str(), 0, kMaxRank, "group"));
    }
    d.pid = importer::boundedInt(options_, line.number, m[i++].str(), 0, INT64_MAX, "pid");
    d.host = m[i++].str();
    d.device = static_cast<int>(
        importer::boundedInt(options_, line.number, m[i++].str(), 0, kMaxRank, "device"));
    d.busId = m[i++].str();
    d.name = std::string(trim(m[i++].str()));
    if (sec.table) importer::failParse(options_, line, "device line after the table header");
    sec.devices.push_back(std::move(d));
  }

  void parseHeader(const Line& line, const std::vector<std::string_view>& tokens) {
    Table tb;
    tb.headerLine = line.number;
    tb.columns = tokens.size();
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string_view c = tokens[i];
      int idx = static_cast<int>(i);
      PlacementColumns* p = tb.placements.empty() ? nullptr : &tb.placements.back();
      int PlacementColumns::*placed = importer::columnNamed(kPlacementColumns, c);
      if (int Table::*column = importer::columnNamed(kTableColumns, c)) {
        tb.*column = idx;
      } else if (c == "time" || c == "cputime") {
        tb.cputime = c == "cputime";
        tb.placements.push_back({});
        tb.placements.back().time = idx;
      } else if (p && placed) {
        p->*placed = idx;
      } else if (p && (c == "#wrong" || c == "wrong" || c == "error")) {
        p->check = idx;
        tb.errorColumn = c == "error";
      } else if (c == "timestamp" && i + 1 == tokens.size()) {
        tb.timestamp = true;
      } else {
        importer::failParse(options_, line, fmt::format("unknown column '{}'", c));
      }
    }
    bool complete = tb.size == 0 && tb.count == 1 && tb.type >= 0 && tb.placements.size() == 2;
    for (const auto& p : tb.placements) {
      complete = complete && p.algbw >= 0 && p.busbw >= 0 && p.check >= 0;
    }
    if (!complete) {
      importer::failParse(options_, line,
                          "expected size, count, type, then time algbw busbw #wrong for "
                          "out-of-place and in-place");
    }
    Section& sec = section();
    if (sec.table && !sec.results.empty()) {
      // A second table without a new "# nThread" line: a new test by another process (e.g. an
      // MPI launch of a binary built without MPI prints one full report per process).
      newSectionIf(true, line.number);
    }
    current_->table = tb;
    current_->inTable = true;
  }

  void parseRow(const Line& line) {
    Section& sec = section();
    const Table& tb = *sec.table;
    auto tok = importer::splitWhitespace(line.text);
    size_t base = tb.columns - (tb.timestamp ? 1 : 0);
    // Old nccl-tests printed alltoall's rows with a blank under the header's redop column.
    if (tb.redop >= 0 && tb.root < 0 && tok.size() + 1 == base &&
        static_cast<size_t>(tb.redop) < tok.size() &&
        importer::toDouble(tok[tb.redop]).has_value()) {
      tok.insert(tok.begin() + tb.redop, "none");
      if (!sec.redopBlank) {
        sec.notes.push_back(fmt::format(
            "line {}: rows leave the redop column blank (old nccl-tests alltoall): read as none",
            line.number));
      }
      sec.redopBlank = true;
    }
    bool withStamp = tb.timestamp && tok.size() == base + 2;
    if (tok.size() != base && !withStamp) {
      importer::failParse(options_, line,
                          fmt::format("{} fields, the header has {}", tok.size(), base));
    }
    if (withStamp && sec.firstTimestamp.empty()) {
      sec.firstTimestamp = importer::isoFromLocalTime(
          fmt::format("{} {}", tok[tok.size() - 2], tok[tok.size() - 1]));
    }
    ResultRecord r;
    r.medianKnown = false;  // nccl-tests prints the mean, never a median
    auto size = importer::toUnsigned(tok[tb.size]);
    auto count = importer::toUnsigned(tok[tb.count]);
    if (!size || !count) importer::failParse(options_, line, "size and count must be integers");
    r.sizeBytes = *size;
    r.count = *count;
    r.dtype = importer::normalizeDataType(tok[tb.type]);
    r.op = tb.redop >= 0 ? toLower(tok[tb.redop]) : "none";
    if (tb.root >= 0) {
      auto root = importer::toSigned(tok[tb.root]);
      if (!root) importer::failParse(options_, line, "root must be an integer");
      if (*root >= 0) r.root = static_cast<int>(*root);  // -1: not a rooted collective
    }
    if (sec.iters > 0) r.iterations = sec.iters;
    r.statistic = "mean";  // nccl-tests reports the average over its timed iterations
    for (size_t g = 0; g < tb.placements.size(); ++g) {
      const PlacementColumns& p = tb.placements[g];
      ResultRecord x = r;
      x.placement = g == 0 ? "out" : "in";
      auto time = importer::toDouble(tok[p.time]);
      auto algbw = importer::toDouble(tok[p.algbw]);
      auto busbw = importer::toDouble(tok[p.busbw]);
      if (!time || !algbw || !busbw) {
        importer::failParse(options_, line, "time, algbw and busbw must be numbers");
      }
      const double algbwUnit = printedUnit(tok[p.algbw]);
      if (tb.root >= 0) {
        checkAlgbw(line, r.sizeBytes, tok[p.time], *time, *algbw, algbwUnit, x.placement);
      }
      x.timeUs = *time;
      x.meanUs = *time;
      x.algbw = *algbw;
      x.busbw = *busbw;
      checkColumn(line, tok[p.check], tb.errorColumn, x);
      auto optional = [&](int idx, std::optional<double>& out) {
        if (idx < 0) return;
        auto v = importer::toDouble(tok[idx]);
        if (!v) importer::failParse(options_, line, "per-iteration columns must be numbers");
        out = *v;
      };
      optional(p.iMin, x.minUs);
      optional(p.iMax, x.maxUs);
      optional(p.iP99, x.p99Us);
      optional(p.iCv, x.cv);
      if (x.cv) *x.cv /= 100;  // printed in percent
      sec.results.push_back(std::move(x));
      sec.resultLines.push_back(line.number);
      sec.bwUnits.emplace_back(algbwUnit, printedUnit(tok[p.busbw]));
    }
    ++sec.rows;
  }

  // The current layout (redop and root columns) prints algbw = size / time from the same mean
  // time it prints, so a row whose columns disagree beyond the printed rounding was edited or
  // mangled (time and busbw swapped, say), and storing it would put a wrong figure in history.
  // Older layouts computed algbw of some collectives from another size (the DGX-2 allgather log
  // prints size x 11/12), so they are not checked.
  void checkAlgbw(const Line& line, uint64_t size, std::string_view timeText, double timeUs,
                  double algbw, double algbwUnit, const std::string& placement) {
    if (!(timeUs > 0)) return;
    const double expected = static_cast<double>(size) / (timeUs * 1e3);  // GB/s
    // Both columns are rounded to their last printed digit (printedUnit): half of algbw's unit,
    // and the time's relative rounding carried into algbw.
    const double tolerance =
        0.51 * algbwUnit + expected * 1.05 * 0.5 * printedUnit(timeText) / timeUs + 1e-9;
    if (std::fabs(algbw - expected) > tolerance) {
      importer::failParse(
          options_, line,
          fmt::format("{} algbw {:.2f} is not size / time = {:.2f} GB/s: "
                      "columns out of order or edited",
                      placement == "in" ? "in-place" : "out-of-place", algbw, expected));
    }
  }

  // The current layout prints busbw = algbw x the collective's factor at the world size
  // (2(n-1)/n for allreduce...). Both have two decimals, so rows below 1 GB/s are not judged; a
  // row past the rounding was edited or mangled (busbw and time swapped, a column cut out).
  void checkBusbw(const Section& sec, const std::string& coll, int n) const {
    auto factor = importer::busFactor(coll, n);
    if (!factor) return;
    for (size_t i = 0; i < sec.results.size() && i < sec.resultLines.size(); ++i) {
      const ResultRecord& r = sec.results[i];
      if (!r.algbw || !r.busbw || !(*r.algbw >= 1)) continue;
      const double expected = *r.algbw * *factor;
      const auto [algbwUnit, busbwUnit] =
          i < sec.bwUnits.size() ? sec.bwUnits[i] : std::pair<double, double>{0.01, 0.01};
      if (std::fabs(*r.busbw - expected) >
          0.51 * (busbwUnit + algbwUnit * *factor) + 1e-3 * expected) {
        importer::fail(options_, sec.resultLines[i],
                       fmt::format("busbw {:.2f} is not algbw {:.2f} x {:.3f} ({} on {} ranks): "
                                   "columns out of order or edited",
                                   *r.busbw, *r.algbw, *factor, coll, n));
      }
    }
  }

  void checkColumn(const Line& line, std::string_view v, bool errorColumn, ResultRecord& x) {
    if (v == "N/A") return;  // not checked: wrong stays unset
    auto value = importer::toDouble(v);
    if (!value || *value < 0) importer::failParse(options_, line, "#wrong must be a count or N/A");
    if (!errorColumn) {
      x.wrong = std::llround(*value);
      if (x.wrong > 0) {
        x.status = ResultStatus::kFailed;
        x.message = fmt::format("{} wrong elements", *x.wrong);
      }
      return;
    }
    double tolerance = toleranceFor(x.dtype);
    if (*value > tolerance) {
      x.wrong = 1;
      x.status = ResultStatus::kFailed;
      x.message = fmt::format(
          "max abs error {} exceeds the {} tolerance {:g} (old 'error' column; "
          "wrong=1 means at least one element)",
          v, x.dtype, tolerance);
    } else {
      x.wrong = 0;
      if (*value > 0) {
        x.message =
            fmt::format("max abs error {} (within the {} tolerance {:g})", v, x.dtype, tolerance);
      }
    }
  }

  void closeSection(int lastLine) {
    if (!current_) return;
    Section sec = std::move(*current_);
    current_.reset();
    if (!sec.table) {
      if (!sec.started()) return;
      importer::fail(options_, sec.firstLine,
                     "nccl-tests output without a result table (the test did not start?)");
    }
    if (sec.results.empty()) {
      importer::fail(options_, sec.table->headerLine, "nccl-tests table has no result rows");
    }
    ImportedRun run;
    run.notes = std::move(sec.notes);
    for (const auto& [kind, count, first] : sec.skipped) {
      run.notes.push_back(fmt::format("skipped {} {} (first on line {})", count, kind, first));
    }
    if (!sec.rcclLibrary.empty()) run.notes.push_back("library: RCCL " + sec.rcclLibrary);
    std::string stated;
    if (!sec.binary.empty()) stated = importer::normalizeCollective(sec.binary);
    // World size and hosts from the device lines (one per rank).
    std::set<int> ranks;
    std::vector<std::string> hosts;
    for (const auto& d : sec.devices) {
      ranks.insert(d.rank);
      if (std::find(hosts.begin(), hosts.end(), d.host) == hosts.end()) hosts.push_back(d.host);
    }
    int statedRanks = static_cast<int>(ranks.size());
    bool worldUnknown = sec.devicesTruncated || sec.devices.empty();
    // A publisher who kept only some device lines ("Rank 71" of 72, ranks 0, 7, 8 and 15 of 16)
    // leaves a list that is not ranks 0..k-1: it does not give the world size.
    if (!ranks.empty() && (*ranks.begin() != 0 || *ranks.rbegin() + 1 != statedRanks)) {
      worldUnknown = true;
      run.notes.push_back(fmt::format(
          "the device lines name {} of the ranks (highest {}): a cut list, not the world size",
          statedRanks, *ranks.rbegin()));
    }
    if (worldUnknown) statedRanks = 0;
    int n = importer::resolveWorldSize(statedRanks, options_, sec.table->headerLine);
    const std::string coll = sectionCollective(sec, stated, worldUnknown, n, run);

    if (sec.table->root >= 0 && n > 1) checkBusbw(sec, coll, n);

    std::string variant = sec.algo.empty() ? "nccl" : "nccl:" + sec.algo;
    bool anyFailed = false;
    for (auto& r : sec.results) {
      r.collective = coll;
      r.variant = variant;
      if (n > 0) r.nranks = n;  // 0: the log does not say
      anyFailed = anyFailed || r.status == ResultStatus::kFailed;
    }
    setRunRecord(sec, n, hosts, anyFailed, lastLine, run);
    json env = sectionEnvironment(sec, lastLine);
    run.results = std::move(sec.results);
    importer::finishImportedRun(run, options_, "nccl-tests", std::move(env));
    runs_.push_back(std::move(run));
  }

  // closeSection's stages, in its order.

  // The collective of a closed section: stated (by the binary, else --collective), or inferred
  // from the table; n, the world size (0: unknown), is inferred too where the devices do not
  // give it. The notes say what was inferred.
  std::string sectionCollective(const Section& sec, const std::string& stated, bool worldUnknown,
                                int& n, ImportedRun& run) {
    std::string coll;
    if (stated.empty() && !options_.collective) {
      // Old logs name no collective: infer it from the table (see inferCollective).
      Inferred inferred = inferCollective(sec, n);
      if (inferred.collective.empty()) {
        importer::fail(options_, sec.table->headerLine,
                       fmt::format("the log does not name the collective and the table does not "
                                   "tell it ({}); pass --collective NAME",
                                   inferred.how));
      }
      coll = inferred.collective;
      run.notes.push_back(fmt::format("collective {} inferred: {}", coll, inferred.how));
      if (n == 0 && inferred.worldSize > 0) {
        n = inferred.worldSize;
        worldUnknown = false;
        run.notes.push_back(fmt::format("world size {} inferred: {}", n, inferred.worldHow));
      }
    } else {
      coll = importer::resolveCollective(stated, options_, sec.table->headerLine, "");
      if (n == 0) {
        if (auto w = worldFromRatio(coll, sec)) {
          n = *w;
          worldUnknown = false;
          run.notes.push_back(fmt::format(
              "world size {} inferred from the busbw/algbw ratio of {} (no '# Rank' lines)", n,
              coll));
        }
      }
    }
    if (worldUnknown && n == 0) {
      run.notes.push_back(sec.devicesTruncated  ? "the device list is truncated ('...'): the world "
                                                  "size is not known"
                          : sec.devices.empty() ? "no '# Rank' device lines: the world size is not "
                                                  "known"
                                                : "the world size is not known");
    }
    if (stated.empty() && options_.collective) checkUserCollective(coll, n, sec);
    return coll;
  }

  // The run record: world, hosts, versions, start, and the status the rows and footers give.
  void setRunRecord(const Section& sec, int n, const std::vector<std::string>& hosts,
                    bool anyFailed, int lastLine, ImportedRun& run) {
    RunRecord& rec = run.run;
    rec.worldSize = n;
    for (const auto& h : hosts) rec.hosts += (rec.hosts.empty() ? "" : ",") + h;
    rec.ncclVersion =
        sec.ncclVersion.empty() ? importer::ncclVersionFromCode(sec.ncclLibrary) : sec.ncclVersion;
    rec.cudaVersion = sec.cudaVersion;
    if (!sec.firstTimestamp.empty()) {
      rec.startedAt = sec.firstTimestamp;
      run.notes.push_back(
          "startedAt is the first row's timestamp, local time of the benchmark "
          "host");
    }
    if (sec.outOfBounds && *sec.outOfBounds > 0 && !anyFailed) {
      run.notes.push_back(fmt::format(
          "the footer counts {} out-of-bounds values but no row shows one", *sec.outOfBounds));
    }
    if (sec.avgBusBwFailed) run.notes.push_back("the average bus bandwidth check FAILED");
    if (anyFailed || sec.outOfBoundsFailed || sec.avgBusBwFailed || sec.testFailure) {
      rec.status = RunStatus::kFailed;
    } else if (!sec.outOfBounds) {
      rec.status = RunStatus::kInterrupted;
      run.notes.push_back(fmt::format(
          "no '# Out of bounds values' footer before line {}: the test did not finish", lastLine));
    } else {
      rec.status = RunStatus::kOk;
    }
  }

  // The run's environment: the tool, its parameters and device lines, the footers, the lines.
  static json sectionEnvironment(const Section& sec, int lastLine) {
    json env = json::object();
    env["tool"] = "nccl-tests";
    if (!sec.toolVersion.empty()) env["toolVersion"] = sec.toolVersion;
    if (!sec.binary.empty()) env["binary"] = sec.binary;
    env["parameters"] = sec.params;
    json devices = json::array();
    for (const auto& d : sec.devices) {
      json j = {{"rank", d.rank},     {"pid", d.pid},     {"host", d.host},
                {"device", d.device}, {"busId", d.busId}, {"name", d.name}};
      if (d.group >= 0) j["group"] = d.group;
      devices.push_back(std::move(j));
    }
    env["devices"] = std::move(devices);
    if (sec.outOfBounds) env["outOfBounds"] = *sec.outOfBounds;
    if (sec.avgBusBw) env["avgBusBandwidth"] = *sec.avgBusBw;
    env["lines"] = {sec.firstLine, lastLine};
    return env;
  }

  struct Inferred {
    std::string collective, how;
    int worldSize = 0;
    std::string worldHow;
  };

  // busbw / algbw of the row with the largest algbw (both printed with two decimals, so only
  // large values give the ratio to 1%); nullopt below 1 GB/s.
  static std::optional<double> busRatio(const Section& sec) {
    const ResultRecord* best = nullptr;
    for (const auto& r : sec.results) {
      if (r.status == ResultStatus::kOk && (!best || r.algbw > best->algbw)) best = &r;
    }
    if (!best || !(best->algbw >= 1) || !best->busbw) return std::nullopt;
    return *best->busbw / *best->algbw;
  }

  // size / (count x element size) over the rows: 1 for allreduce, broadcast, reduce, sendrecv;
  // the world size for allgather and reduce_scatter. 0 when no row tells (or rows disagree).
  static uint64_t sizeFactor(const Section& sec) {
    uint64_t q = 0;
    for (const auto& r : sec.results) {
      size_t es = importer::dataTypeBytes(r.dtype);
      const uint64_t count = r.count.value_or(0);
      if (es == 0 || count == 0 || r.sizeBytes % (count * es) != 0) continue;
      uint64_t f = r.sizeBytes / (count * es);
      if (q != 0 && f != q) return 0;
      q = f;
    }
    return q;
  }

  // The world size a known collective's busbw/algbw ratio implies (2(n-1)/n for allreduce,
  // (n-1)/n for allgather, reduce_scatter, alltoall); nullopt when it does not depend on n.
  static std::optional<int> worldFromRatio(const std::string& coll, const Section& sec) {
    auto r = busRatio(sec);
    if (!r) return std::nullopt;
    double n = 0;
    if (coll == "allreduce" && *r < 1.99) n = 2 / (2 - *r);
    if ((coll == "allgather" || coll == "reduce_scatter" || coll == "alltoall") && *r < 0.995) {
      n = 1 / (1 - *r);
    }
    if (!(n >= 1.5) || n > 1e6) return std::nullopt;
    int rounded = static_cast<int>(std::lround(n));
    // Two-decimal rounding: accept only when the ratio of that n is within 2% of the log's.
    double expect = coll == "allreduce" ? 2.0 * (rounded - 1) / rounded
                                        : static_cast<double>(rounded - 1) / rounded;
    if (std::abs(expect - *r) > 0.02 * expect) return std::nullopt;
    return rounded;
  }

  // The collective of a table that does not name it, from what nccl-tests prints:
  //  * redop: a reduction prints its op, other collectives "none" (old logs omit the column
  //    for non-reductions); root: -1 unless rooted (broadcast, reduce);
  //  * size / (count x element size): the world size for allgather and reduce_scatter, else 1;
  //  * busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for allgather, reduce_scatter and
  //    alltoall, 1 for broadcast, reduce and sendrecv (checked when the world size is known);
  //  * else the file name (all_reduce, allgather, reduce_scatter, ...).
  Inferred inferCollective(const Section& sec, int n) const {
    Inferred out;
    const Table& tb = *sec.table;
    const ResultRecord& first = sec.results.front();
    const bool redopColumn = tb.redop >= 0;
    const bool reduction = redopColumn && first.op != "none";
    const bool rooted = tb.root >= 0 && first.root >= 0;
    const uint64_t q = sizeFactor(sec);
    std::vector<std::string> why;
    why.push_back(redopColumn ? fmt::format("redop {}", first.op) : "no redop column");
    if (tb.root >= 0) why.push_back(fmt::format("root {}", first.root.value_or(-1)));
    if (q > 0) why.push_back(fmt::format("size = count x elsize x {}", q));
    std::string coll;
    if (reduction && rooted) {
      coll = "reduce";
    } else if (reduction) {
      coll = q == 1 ? "allreduce" : q > 1 ? "reduce_scatter" : "";
    } else if (rooted) {
      coll = "broadcast";
    } else if (q > 1 && tb.root < 0 && !sec.redopBlank) {
      coll = "allgather";  // the only non-reduction table of the old layouts with size = count x n
    } else if (q > 1) {
      // The current layout prints alltoall like allgather (size = count x n, the same busbw
      // factor), and so does the old one with a blank redop: only the file name or --collective
      // can tell them apart.
      why.push_back("allgather or alltoall");
    }
    int world = q > 1 ? static_cast<int>(q) : 0;
    auto ratio = busRatio(sec);
    if (ratio) why.push_back(fmt::format("busbw/algbw {:.3f}", *ratio));
    // The ratio must agree with the collective at the world size (when it is known).
    int knownN = n > 0 ? n : world;
    // size = count x elsize x n with n the number of device lines is structural evidence; old
    // nccl-tests printed busbw = algbw for allgather, so the ratio does not veto it.
    const bool structural = q > 1 && (n == 0 || static_cast<int>(q) == n);
    if (!coll.empty() && ratio && knownN > 1 && !structural) {
      double expect = coll == "allreduce" ? 2.0 * (knownN - 1) / knownN
                      : coll == "allgather" || coll == "reduce_scatter" ? (knownN - 1.0) / knownN
                                                                        : 1.0;
      if (std::abs(expect - *ratio) > 0.03 * expect) {
        why.push_back(fmt::format("which contradicts {} on {} ranks", coll, knownN));
        coll.clear();
      }
    }
    if (coll.empty()) {
      std::string fromName = collectiveFromFileName(options_.path);
      if (!fromName.empty()) {
        out.collective = fromName;
        out.how = fmt::format("from the file name ({})", fmt::join(why, ", "));
      } else {
        out.how = fmt::format("{}", fmt::join(why, ", "));
      }
    } else {
      out.collective = coll;
      out.how = fmt::format("from the table: {}", fmt::join(why, ", "));
    }
    if (out.collective.empty()) return out;
    if (world > 1 && (out.collective == "allgather" || out.collective == "reduce_scatter")) {
      out.worldSize = world;
      out.worldHow = fmt::format("size = count x elsize x {}", world);
    } else if (auto w = worldFromRatio(out.collective, sec)) {
      out.worldSize = *w;
      out.worldHow = fmt::format("from the busbw/algbw ratio of {}", out.collective);
    }
    return out;
  }

  static std::string collectiveFromFileName(const std::string& path) {
    std::string name = toLower(path.substr(path.find_last_of('/') + 1));
    std::erase(name, '_');
    std::erase(name, '-');
    // Longest names first: "reducescatter" and "allreduce" contain "reduce".
    static constexpr std::pair<const char*, const char*> kNames[] = {
        {"reducescatter", "reduce_scatter"},
        {"allreduce", "allreduce"},
        {"allgather", "allgather"},
        {"alltoall", "alltoall"},
        {"broadcast", "broadcast"},
        {"bcast", "broadcast"},
        {"sendrecv", "sendrecv"},
        {"reduce", "reduce"}};
    for (const auto& [token, coll] : kNames) {
      if (name.find(token) != std::string::npos) return coll;
    }
    return "";
  }

  // A --collective given for a log that does not name one must at least fit the table: nccl-tests
  // prints size = count x elsize for allreduce, broadcast, reduce and sendrecv, and
  // count x elsize x nranks for allgather, reduce_scatter, alltoall, gather and scatter.
  void checkUserCollective(const std::string& coll, int n, const Section& sec) {
    static const std::set<std::string> kWhole = {"allreduce", "broadcast", "reduce", "sendrecv"};
    static const std::set<std::string> kTimesN = {"allgather", "reduce_scatter", "alltoall",
                                                  "gather", "scatter"};
    if (!kWhole.count(coll) && !kTimesN.count(coll)) return;
    for (const auto& r : sec.results) {
      size_t es = importer::dataTypeBytes(r.dtype);
      const uint64_t count = r.count.value_or(0);
      if (es == 0 || count == 0) continue;
      uint64_t perCount = count * es;
      bool ok =
          kWhole.count(coll) ? r.sizeBytes == perCount : (n <= 0 || r.sizeBytes == perCount * n);
      if (!ok) {
        importer::fail(
            options_, sec.table->headerLine,
            fmt::format("--collective {} does not fit this table: size {} B for {} x {} B "
                        "elements{}",
                        coll, r.sizeBytes, count, es,
                        kWhole.count(coll)
                            ? fmt::format(" ({} expects size = count x elsize)", coll)
                            : fmt::format(" ({} expects size = count x elsize x "
                                          "{} ranks)",
                                          coll, n)));
      }
      return;  // one row with a known type is enough
    }
  }

  const ImportOptions& options_;
  std::optional<Section> current_;
  std::vector<ImportedRun> runs_;
  int lastLine_ = 0;

  static inline const std::regex kNcclChatter{
      R"(^\S+:\d+:\d+\s+\[\d+\]\s+NCCL\s+(INFO|WARN|TRACE|ABORT)\b(.*)$)"};
  static inline const std::regex kNcclAlgo{R"(NCCL_ALGO set by environment to\s+(\S+))"};
  static inline const std::regex kNcclVersion{
      R"(NCCL version\s+([0-9][0-9.]*[0-9])(?:\S*?\+cuda([0-9.]+))?)"};
  static inline const std::regex kVersionLine{
      R"(^#\s*nccl-tests version\s+(\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?)"};
  static inline const std::regex kStarting{R"(^#\s*Collective test starting:\s*(\S+))"};
  static inline const std::regex kConcluded{R"(^#\s*Collective test concluded:\s*(\S+))"};
  static inline const std::regex kParamsLine{R"(^#\s*nThread\s+\d+)"};
  static inline const std::regex kParamPair{
      R"((nThread|nGpus|minBytes|maxBytes)\s+(\S+)|(warmup iters|agg iters|iters|validation|graph|unalign|step):\s*(\S+))"};
  static inline const std::regex kRankNew{
      R"(^#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)"};
  static inline const std::regex kRankOld{
      R"(^#\s+Rank\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)"};
  static inline const std::regex kRankAny{R"(^#\s+Rank\s+\d)"};
  static inline const std::regex kOutOfBounds{
      R"(^#\s*Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?)"};
  static inline const std::regex kAvgBusBw{R"(^#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?)"};
  static inline const std::regex kJsonOutput{R"(^#\s*Writing JSON output to\s+(.*)$)"};
  static inline const std::regex kErrorLine{R"(^#\s*error:\s*(.*)$)"};
  static inline const std::regex kTestFailure{R"(Test (?:NCCL |CUDA )?failure)"};
  static inline const std::regex kUsingDevices{R"(^#\s*Using devices\s*$)"};
  static inline const std::regex kColumnLines{
      R"(^#\s*(size\s+count\s|\(B\)\s+\(elements\)|out-of-place\s+in-place\s*$))"};
  static inline const std::regex kNcclBanner{
      R"(^NCCL version\s+([0-9][0-9.]*[0-9])(?:\S*?\+cuda([0-9.]+))?\S*\s*$)"};
  static inline const std::regex kRcclTests{R"(^rccl-tests:\s*Version\s+(\S+))"};
  static inline const std::regex kRcclBlock{
      R"(^(RCCL version|HIP version|ROCm version|Hostname|Librccl path)\s*:\s*(.*)$)"};
  // "$ kubectl logs ...", "mpirun -np 8 ...", "/opt/.../all_reduce_perf", "srun ...".
  static inline const std::regex kCommandLine{
      R"(^(\$\s|(\S*/)?(mpirun|mpiexec|srun|sbatch|kubectl|torchrun|docker|python3?|bash|sh)(\s|$)|/\S+(\s|$)|\S*_perf(\s|$)))"};
  static inline const std::regex kAssignment{R"(^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=\S*$)"};
};

}  // namespace

std::vector<ImportedRun> parseNcclTestsText(std::string_view text, const ImportOptions& options) {
  return NcclTestsParser(options).parse(text);
}

}  // namespace cb
