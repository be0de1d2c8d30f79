// Intel MPI Benchmarks (IMB-MPI1) logs: the standard-mode tables of every benchmark, grouped into
// one run per world size ("# #processes = N"), since a run has one world size; a file that ran
// PingPong on 2 and Allreduce on 2 and 4 processes gives a 2-rank run and a 4-rank run.
//
// Names: PingPong (half round trip, like osu_latency) is stored as "latency", Uniband as "bw",
// Biband as "bibw"; the others keep IMB's name in collbench's spelling (Bcast -> broadcast,
// Allreduce -> allreduce, ...).
//
// Units: IMB's "Mbytes/sec" is 2^20 bytes/s up to IMB 4.x (IMB_output.c: MEGA = 1.0/1048576)
// and 1e6 bytes/s from IMB 2018 on (MEGA = 1.0/1e6). The year-numbered version picks the unit;
// the largest PingPong/PingPing row, whose throughput is size / t, confirms it and wins (with a
// note) if it disagrees. Collective tables print t_min/t_max/t_avg: timeUs = t_avg, algbw = S /
// t_avg and busbw by the brief's table (IMB's own Mbytes/sec for Sendrecv/Exchange counts both
// directions and is not kept).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <regex>

#include "core/Text.h"
#include "results/import/Import.h"
#include "results/import/ImportSupport.h"

namespace cb {
namespace {

using importer::Line;
using json = nlohmann::ordered_json;

constexpr double kMiB = 1048576.0;
constexpr double kMB = 1e6;

struct Columns {
  int bytes = -1, reps = -1, t = -1, tMin = -1, tMax = -1, tAvg = -1, mbps = -1, msgRate = -1,
      defects = -1;
  size_t count = 0;
};

// The IMB columns read, by their header names.
constexpr importer::NamedColumn<Columns> kImbColumns[] = {
    {"#bytes", &Columns::bytes},     {"#repetitions", &Columns::reps},
    {"t[usec]", &Columns::t},        {"t_min[usec]", &Columns::tMin},
    {"t_max[usec]", &Columns::tMax}, {"t_avg[usec]", &Columns::tAvg},
    {"Mbytes/sec", &Columns::mbps},  {"Msg/sec", &Columns::msgRate},
    {"defects", &Columns::defects}};

struct Block {
  int line = 0;  // "# Benchmarking" line
  std::string name;
  int processes = 0;
  std::optional<Columns> columns;
  struct Row {
    int line;
    uint64_t size;
    int64_t reps;
    double t, tMin, tMax, tAvg, mbps, defects;
    std::string failure;  // "out-of-mem." etc.
  };
  std::vector<Row> rows;
};

class ImbParser {
 public:
  explicit ImbParser(const ImportOptions& options) : options_(options) {}

  std::vector<ImportedRun> parse(std::string_view text) {
    importer::LineReader reader(text);
    Line line;
    while (reader.next(line)) handle(line);
    if (blocks_.empty()) importer::fail(options_, 0, "no '# Benchmarking' table found");
    return build();
  }

 private:
  void handle(const Line& line) {
    std::string_view t = trim(line.text);
    if (t.empty()) return;
    std::string s(t);
    std::smatch m;
    if (t.front() == '#' && !t.starts_with("#bytes") && !t.starts_with("#repetitions")) {
      if (expectCalling_ && s.size() > 1 && !trim(t.substr(1)).empty()) {
        calling_ = std::string(trim(t.substr(1)));
        expectCalling_ = false;
      }
      if (std::regex_search(s, m, kVersion)) {
        version_ = std::string(trim(m[1].str()));
        part_ = m[2].str();
      } else if (std::regex_search(s, m, kDate)) {
        date_ = m[1].str();
      } else if (std::regex_search(s, m, kMpiVersion)) {
        mpiStandard_ = m[1].str();
      } else if (std::regex_search(s, kCalling)) {
        expectCalling_ = true;
      } else if (std::regex_search(s, m, kReduceType)) {
        reduceType_ = importer::mpiTypeName(m[1].str());
      } else if (std::regex_search(s, m, kDatatype)) {
        dataType_ = importer::mpiTypeName(m[1].str());
      } else if (std::regex_search(s, m, kOp)) {
        op_ = toLower(m[1].str());
        if (op_.starts_with("mpi_")) op_ = op_.substr(4);
      } else if (std::regex_search(s, m, kBenchmarking)) {
        if (m[1].matched) {
          importer::fail(options_, line.number,
                         "IMB multiple mode ('Benchmarking Multi-...') is not supported");
        }
        blocks_.push_back(Block{});
        blocks_.back().line = line.number;
        blocks_.back().name = m[2].str();
      } else if (std::regex_search(s, m, kProcesses)) {
        if (blocks_.empty()) importer::failParse(options_, line, "#processes before a benchmark");
        blocks_.back().processes = static_cast<int>(
            importer::boundedInt(options_, line.number, m[1].str(), 1, 1 << 24, "#processes"));
      } else if (std::regex_search(s, m, kWaiting)) {
        notes_.push_back(fmt::format("{}: {} more processes waited in MPI_Barrier",
                                     blocks_.empty() ? "" : blocks_.back().name, m[1].str()));
      }
      return;  // other comments (separators, message lengths, benchmark lists) are fine
    }
    if (t.starts_with("#bytes") || t.starts_with("#repetitions")) return parseHeader(line);
    if (blocks_.empty() || !blocks_.back().columns) importer::failParse(options_, line);
    parseRow(line);
  }

  void parseHeader(const Line& line) {
    if (blocks_.empty() || blocks_.back().processes == 0) {
      importer::failParse(options_, line, "table header before '# Benchmarking' and '#processes'");
    }
    Columns c;
    auto tok = importer::splitWhitespace(line.text);
    for (size_t i = 0; i < tok.size(); ++i) {
      int idx = static_cast<int>(i);
      std::string_view n = tok[i];
      if (int Columns::*column = importer::columnNamed(kImbColumns, n)) {
        c.*column = idx;
      } else {
        importer::failParse(options_, line,
                            fmt::format("unsupported IMB column '{}' (overlap tables of IMB-NBC "
                                        "are not imported)",
                                        n));
      }
    }
    c.count = tok.size();
    if (c.reps < 0 || (c.t < 0 && c.tAvg < 0 && c.mbps < 0)) {
      importer::failParse(options_, line, "no time or bandwidth column");
    }
    blocks_.back().columns = c;
  }

  void parseRow(const Line& line) {
    Block& b = blocks_.back();
    const Columns& c = *b.columns;
    auto tok = importer::splitWhitespace(line.text);
    Block::Row row{line.number, 0, 0, 0, 0, 0, 0, 0, 0, ""};
    // "  262144 time-out.; ..." / "out-of-mem.; needed ..." / "int-overflow.; ...": a sample IMB
    // could not run.
    if (c.bytes == 0 && tok.size() >= 2 && !importer::toDouble(tok[1])) {
      auto size = importer::toUnsigned(tok[0]);
      std::string_view rest = trim(std::string_view(line.text).substr(
          static_cast<size_t>(tok[1].data() - line.text.data())));
      if (size && (rest.starts_with("out-of-mem") || rest.starts_with("int-overflow") ||
                   rest.starts_with("time-out"))) {
        row.size = *size;
        row.failure = std::string(rest);
        b.rows.push_back(std::move(row));
        return;
      }
    }
    if (tok.size() != c.count) {
      importer::failParse(options_, line,
                          fmt::format("{} fields, the header has {}", tok.size(), c.count));
    }
    auto number = [&](int col) -> double {
      if (col < 0) return 0;
      auto v = importer::toDouble(tok[col]);
      if (!v) importer::failParse(options_, line, fmt::format("'{}' is not a number", tok[col]));
      return *v;
    };
    if (c.bytes >= 0) {
      auto size = importer::toUnsigned(tok[c.bytes]);
      if (!size) importer::failParse(options_, line, "#bytes must be an integer");
      row.size = *size;
    }
    auto reps = importer::toUnsigned(tok[c.reps]);
    if (!reps) importer::failParse(options_, line, "#repetitions must be an integer");
    row.reps = static_cast<int64_t>(*reps);
    row.t = number(c.t);
    row.tMin = number(c.tMin);
    row.tMax = number(c.tMax);
    row.tAvg = number(c.tAvg);
    row.mbps = number(c.mbps);
    row.defects = number(c.defects);
    number(c.msgRate);
    b.rows.push_back(std::move(row));
  }

  // Mbytes/sec unit: by version, confirmed by the data when a PingPong/PingPing row allows.
  double megabyte() {
    bool yearVersion = std::regex_search(version_, std::regex(R"(^20\d\d)"));
    double byVersion = yearVersion ? kMB : kMiB;
    const Block::Row* best = nullptr;
    for (const auto& b : blocks_) {
      if (b.name != "PingPong" && b.name != "PingPing") continue;
      for (const auto& r : b.rows) {
        if (r.failure.empty() && r.t >= 1 && r.mbps > 0 && (!best || r.size > best->size)) {
          best = &r;
        }
      }
    }
    if (!best || best->size < 1024) return byVersion;
    double perUs = static_cast<double>(best->size) / best->t;  // bytes/us = 1e6 B/s
    double ratio = best->mbps / perUs;
    double byData = std::abs(ratio - 1) < 0.02                ? kMB
                    : std::abs(ratio * kMiB / kMB - 1) < 0.02 ? kMiB
                                                              : 0;
    if (byData == 0) {
      notes_.push_back(
          fmt::format("line {}: Mbytes/sec matches neither 1e6 nor 2^20 B/s of "
                      "size / t; using {}",
                      best->line, byVersion == kMB ? "1e6" : "2^20"));
      return byVersion;
    }
    if (byData != byVersion) {
      notes_.push_back(fmt::format("IMB {} would print Mbytes/sec in {} B, but line {} shows {}",
                                   version_, byVersion == kMB ? "1e6" : "2^20", best->line,
                                   byData == kMB ? "1e6" : "2^20"));
    }
    return byData;
  }

  static std::string collectiveOf(const std::string& imbName) {
    if (imbName == "PingPong") return "latency";
    if (imbName == "Uniband") return "bw";
    if (imbName == "Biband") return "bibw";
    return importer::normalizeCollective(imbName);
  }

  std::vector<ImportedRun> build() {
    double mb = megabyte();
    std::vector<ImportedRun> runs;
    std::map<int, size_t> runOf;   // world size -> index in runs
    std::vector<bool> usedMbytes;  // per run: a Mbytes/sec column was read
    for (const auto& b : blocks_) {
      if (b.processes <= 0) importer::fail(options_, b.line, "benchmark without '#processes'");
      if (b.rows.empty()) {
        importer::fail(options_, b.line, fmt::format("benchmark {} has no result rows", b.name));
      }
      auto [it, inserted] = runOf.try_emplace(b.processes, runs.size());
      if (inserted) {
        runs.emplace_back();
        usedMbytes.push_back(false);
        runs.back().run.worldSize = importer::resolveWorldSize(b.processes, options_, b.line);
      }
      ImportedRun& run = runs[it->second];
      std::string coll = collectiveOf(b.name);
      if (options_.collective) importer::resolveCollective(coll, options_, b.line, "");
      bool reduction = importer::isReduction(coll);
      std::string dtype = reduction ? reduceType_ : dataType_;
      size_t es = importer::dataTypeBytes(dtype);
      bool throughputColumn =
          b.name == "PingPong" || b.name == "PingPing" || b.name == "Uniband" || b.name == "Biband";
      bool missingBw = false;
      for (const auto& row : b.rows) {
        ResultRecord r;
        r.medianKnown = false;  // IMB prints no median
        r.collective = coll;
        r.variant = "mpi";
        r.dtype = dtype;
        r.op = reduction ? op_ : "none";
        r.sizeBytes = row.size;
        if (es > 0) r.count = row.size / es;
        r.placement = "out";
        if (b.processes > 0) r.nranks = b.processes;
        r.iterations = row.reps;
        r.statistic = "mean";
        if (!row.failure.empty()) {
          r.status = ResultStatus::kSkipped;
          r.message = "IMB: " + row.failure;
          r.timeKnown = false;
          run.results.push_back(std::move(r));
          continue;
        }
        const Columns& c = *b.columns;
        // Columns the block does not have stay unset.
        r.timeKnown = c.tAvg >= 0 || c.t >= 0;
        r.timeUs = c.tAvg >= 0 ? row.tAvg : row.t;
        if (r.timeKnown) r.meanUs = r.timeUs;
        if (c.tMin >= 0) r.minUs = row.tMin;
        if (c.tMax >= 0) r.maxUs = row.tMax;
        if (throughputColumn && c.mbps >= 0) {
          usedMbytes[it->second] = true;
          r.algbw = r.busbw = row.mbps * mb / 1e9;
          if (c.t < 0 && c.tAvg < 0 && r.algbw > 0) {
            r.timeUs = static_cast<double>(row.size) / (*r.algbw * 1e3);
            r.meanUs = r.timeUs;
            r.timeKnown = true;
          }
        } else {
          auto bytes = importer::toolAlgBytes(coll, row.size, b.processes);
          auto factor = importer::busFactor(coll, b.processes);
          if (bytes && r.timeUs > 0) {
            r.algbw = *bytes / (r.timeUs * 1e3);
            if (factor) r.busbw = *r.algbw * *factor;
          }
          missingBw = missingBw || !bytes || !factor;
        }
        if (c.defects >= 0) {
          r.wrong = row.defects > 0 ? 1 : 0;
          if (r.wrong > 0) {
            r.status = ResultStatus::kFailed;
            r.message = fmt::format("IMB defects {:g} (wrong=1 means at least one)", row.defects);
          }
        }
        run.results.push_back(std::move(r));
      }
      if (coll != toLower(b.name)) {
        run.notes.push_back(fmt::format("IMB {} stored as '{}'", b.name, coll));
      }
      if (missingBw && coll != "barrier") {
        run.notes.push_back(
            fmt::format("no bus bandwidth convention for {}: busbw left unknown", coll));
      }
    }
    std::string when = importer::isoFromLocalTime(date_);
    for (size_t i = 0; i < runs.size(); ++i) finishRun(runs[i], when, usedMbytes[i], mb);
    return runs;
  }

  // A run's status, start (when), notes and environment; usedMbytes: a Mbytes/sec column of mb
  // bytes was read.
  void finishRun(ImportedRun& run, const std::string& when, bool usedMbytes, double mb) {
    RunRecord& rec = run.run;
    bool failed = false;
    for (const auto& r : run.results) failed = failed || r.status == ResultStatus::kFailed;
    rec.status = failed ? RunStatus::kFailed : RunStatus::kOk;
    rec.startedAt = when;
    if (!when.empty()) {
      run.notes.push_back("startedAt is IMB's '# Date', local time of the benchmark host");
    }
    run.notes.insert(run.notes.end(), notes_.begin(), notes_.end());
    if (usedMbytes) {
      run.notes.push_back(
          fmt::format("Mbytes/sec read as {} bytes/s", mb == kMB ? "1e6" : "2^20 (1048576)"));
    }
    json env = json::object();
    env["tool"] = "imb";
    env["toolVersion"] = version_;
    if (!part_.empty()) env["part"] = part_;
    if (!date_.empty()) env["date"] = date_;
    if (!mpiStandard_.empty()) env["mpiStandard"] = mpiStandard_;
    if (!calling_.empty()) env["callingSequence"] = calling_;
    importer::finishImportedRun(run, options_, "imb", std::move(env));
  }

  const ImportOptions& options_;
  std::vector<Block> blocks_;
  std::vector<std::string> notes_;
  std::string version_, part_, date_, mpiStandard_, calling_;
  std::string dataType_ = "uint8", reduceType_ = "float", op_ = "sum";  // IMB's defaults
  bool expectCalling_ = false;

  static inline const std::regex kVersion{
      R"(Intel\s*\(R\)\s*MPI Benchmarks?(?:\s+Suite)?\s+(.*?),\s*(\S+)\s+part)"};
  static inline const std::regex kDate{R"(^#\s*Date\s*:\s*(.*\S))"};
  static inline const std::regex kMpiVersion{R"(^#\s*MPI Version\s*:\s*(\S+))"};
  static inline const std::regex kCalling{R"(^#\s*Calling sequence was:)"};
  static inline const std::regex kReduceType{R"(^#\s*MPI_Datatype for reductions\s*:\s*(\S+))"};
  static inline const std::regex kDatatype{R"(^#\s*MPI_Datatype\s*:\s*(\S+))"};
  static inline const std::regex kOp{R"(^#\s*MPI_Op\s*:\s*(\S+))"};
  static inline const std::regex kBenchmarking{R"(^#\s*Benchmarking\s+(Multi-)?(\S+))"};
  static inline const std::regex kProcesses{R"(^#\s*#processes\s*=\s*(\d+))"};
  static inline const std::regex kWaiting{R"(^#\s*\(\s*(\d+)\s+additional process)"};
};

}  // namespace

std::vector<ImportedRun> parseImb(std::string_view text, const ImportOptions& options) {
  return ImbParser(options).parse(text);
}

}  // namespace cb
