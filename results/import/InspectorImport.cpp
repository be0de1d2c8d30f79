// NCCL Inspector's JSON output (plugins/profiler/inspector in NVIDIA/nccl, output format v4.0):
// a stream of JSON objects, one per completed collective per communicator, each
//   {"header": {"id", "comm_name", "rank", "n_ranks", "nnodes"},
//    "metadata": {"inspector_output_format_version", "rec_mechanism", "dump_timestamp_us",
//                 "hostname", "pid", ...},
//    "coll_perf": {"coll", "coll_sn", "coll_msg_size_bytes", "coll_exec_time_us",
//                  "coll_timing_source", "coll_algobw_gbs", "coll_busbw_gbs", ...}}
// written one per line by the plugin (its README shows them pretty-printed; both are read).
// P2P records ("p2p_perf") are counted and left out: collbench's p2p results are per pair.
//
// One run per file: a result per (collective, size, ranks) with every call's time as a sample,
// so compare and gate judge production calls as they judge benchmark iterations. Sizes follow
// nccl-tests' S as collbench stores it: Inspector's coll_msg_size_bytes is NCCL's count x type
// size, which for AllGather and ReduceScatter is one rank's part, so S = msg x n_ranks there
// (Inspector's own algbw uses the same traffic size).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "core/Collective.h"
#include "core/Stats.h"
#include "core/Text.h"
#include "results/import/Import.h"
#include "results/import/ImportSupport.h"

namespace cb {
namespace {

using json = nlohmann::json;

// Line numbers of record starts, counted on from the previous one (a single pass over the text).
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  int at(size_t pos) {
    line_ += static_cast<int>(std::count(text_.begin() + last_, text_.begin() + pos, '\n'));
    last_ = pos;
    return line_;
  }

 private:
  std::string_view text_;
  size_t last_ = 0;
  int line_ = 1;
};

std::string isoFromMicroseconds(uint64_t us) {
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The end of the JSON object starting at text[pos] == '{' (one past its closing brace), braces
// in strings skipped; npos when it does not close. Records are found this way so a large file is
// parsed record by record, never copied.
size_t valueEnd(std::string_view text, size_t pos) {
  if (text[pos] != '{') return pos + 1;  // not an object: json::parse names what it is
  int depth = 0;
  bool inString = false;
  for (size_t i = pos; i < text.size(); ++i) {
    const char ch = text[i];
    if (inString) {
      if (ch == '\\') {
        ++i;
      } else if (ch == '"') {
        inString = false;
      }
    } else if (ch == '"') {
      inString = true;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if ((ch == '}' || ch == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Inspector's coll_msg_size_bytes is one rank's part for these (traffic = msg x n_ranks).
bool perRankCollective(const std::string& c) {
  return c == "allgather" || c == "reduce_scatter" || c == "allgatherv";
}

struct Group {
  std::vector<double> times;
  std::set<std::string> comms;
};

// What the records of a file add up to.
struct Tally {
  // (collective, S, n_ranks) -> calls
  std::map<std::tuple<std::string, uint64_t, int>, Group> groups;
  std::set<std::string> hosts, versions, mechanisms, timingSources;
  std::map<std::string, int64_t> skipped;  // why -> records left out
  int maxRanks = 0, maxNodes = 0;
  uint64_t firstDump = 0;
  int64_t records = 0;
};

// The record starting at text[pos] (line `line`), parsed; pos moves past it.
json readRecord(std::string_view text, size_t& pos, int line, const ImportOptions& options) {
  const size_t end = valueEnd(text, pos);
  if (end == std::string_view::npos) {
    importer::fail(options, line, "an NCCL Inspector record is not closed (a truncated file?)");
  }
  json j;
  try {
    std::string_view value = text.substr(pos, end - pos);
    j = json::parse(value.begin(), value.end());
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (auto at = what.find("parse error"); at != std::string::npos) what = what.substr(at);
    importer::fail(options, line, fmt::format("not an NCCL Inspector JSON record ({})", what));
  }
  pos = end;
  return j;
}

// A record's metadata: host, format version, mechanism, the earliest dump time.
void addMetadata(const json& meta, Tally& t) {
  if (!meta.is_object()) return;
  if (meta.contains("hostname") && meta["hostname"].is_string()) t.hosts.insert(meta["hostname"]);
  if (meta.contains("inspector_output_format_version") &&
      meta["inspector_output_format_version"].is_string()) {
    t.versions.insert(meta["inspector_output_format_version"]);
  }
  if (meta.contains("rec_mechanism") && meta["rec_mechanism"].is_string()) {
    t.mechanisms.insert(meta["rec_mechanism"]);
  }
  if (meta.contains("dump_timestamp_us") && meta["dump_timestamp_us"].is_number_unsigned()) {
    uint64_t time = meta["dump_timestamp_us"];
    if (t.firstDump == 0 || time < t.firstDump) t.firstDump = time;
  }
}

// A collective record (header h, coll_perf c): its call time into its group, unless zero.
void addCollective(const json& h, const json& c, int line, const ImportOptions& options, Tally& t) {
  auto need = [&](const json& obj, const char* key, bool number) -> const json& {
    if (!obj.is_object() || !obj.contains(key) ||
        (number ? !obj[key].is_number() : !obj[key].is_string())) {
      importer::fail(
          options, line,
          fmt::format("\"{}\" is missing or not a {}", key, number ? "number" : "string"));
    }
    return obj[key];
  };
  const std::string coll = need(c, "coll", false).get<std::string>();
  const double execUs = need(c, "coll_exec_time_us", true).get<double>();
  const json& msg = need(c, "coll_msg_size_bytes", true);
  const json& nr = need(h, "n_ranks", true);
  if (!msg.is_number_unsigned() || !nr.is_number_integer() || nr.get<int64_t>() < 1 ||
      nr.get<int64_t>() > (1 << 24) || !(execUs >= 0)) {
    importer::fail(options, line, "coll_msg_size_bytes, n_ranks or coll_exec_time_us out of range");
  }
  const int nranks = nr.get<int>();
  t.maxRanks = std::max(t.maxRanks, nranks);
  if (h.contains("nnodes") && h["nnodes"].is_number_integer()) {
    t.maxNodes = std::max(t.maxNodes, h["nnodes"].get<int>());
  }
  if (c.contains("coll_timing_source") && c["coll_timing_source"].is_string()) {
    t.timingSources.insert(c["coll_timing_source"]);
  }
  std::string ours = importer::normalizeCollective(coll);
  uint64_t size = msg.get<uint64_t>();
  if (perRankCollective(ours)) {
    size *= static_cast<uint64_t>(nranks);
  }
  if (execUs <= 0) {
    t.skipped["zero time"]++;
    return;
  }
  Group& g = t.groups[{ours, size, nranks}];
  g.times.push_back(execUs);
  if (h.contains("id") && h["id"].is_string()) g.comms.insert(h["id"]);
}

// Every record of the text, tallied.
Tally readRecords(std::string_view text, const ImportOptions& options) {
  Tally t;
  size_t pos = 0;
  LineCounter lines(text);
  while (true) {
    pos = text.find_first_not_of(" \t\r\n", pos);
    if (pos == std::string_view::npos) break;
    const int line = lines.at(pos);
    const json j = readRecord(text, pos, line, options);
    ++t.records;
    if (!j.is_object() || !j.contains("header") || !j["header"].is_object()) {
      importer::fail(options, line, "an NCCL Inspector record has a \"header\" object");
    }
    addMetadata(j.value("metadata", json::object()), t);
    if (!j.contains("coll_perf")) {
      t.skipped[j.contains("p2p_perf") ? "p2p" : "other"]++;
      continue;
    }
    addCollective(j["header"], j["coll_perf"], line, options, t);
  }
  return t;
}

// The result of one (collective, size, ranks) group: every call's time a sample.
ResultRecord resultOf(const std::string& coll, uint64_t size, int nranks, const Group& g,
                      const ImportOptions& options) {
  ResultRecord res;
  res.collective = coll;
  res.variant = "nccl";  // NCCL's own choice of algorithm and protocol: Inspector's JSON omits it
  res.sizeBytes = size;
  res.dtype = options.dtype ? importer::normalizeDataType(*options.dtype) : "";
  if (!importer::isReduction(coll)) {
    res.op = "none";  // as collbench stores collectives without a reduction
  } else if (options.op) {
    res.op = toLower(*options.op);
  }
  // nccl-tests' count: Inspector's own message (one rank's part for AllGather/ReduceScatter).
  const uint64_t perRank = perRankCollective(coll) ? size / static_cast<uint64_t>(nranks) : size;
  if (size_t bytes = importer::dataTypeBytes(res.dtype); bytes > 0) res.count = perRank / bytes;
  res.placement = "out";
  res.nranks = nranks;
  res.iterations = static_cast<int64_t>(g.times.size());
  Summary s = summarize(g.times);
  res.statistic = "median";
  res.timeUs = res.medianUs = s.median;
  res.meanUs = s.mean;
  res.minUs = s.min;
  res.maxUs = s.max;
  res.p99Us = s.p99;
  res.cv = s.cv;
  res.algbw = static_cast<double>(size) / s.median * 1e-3;
  if (auto f = importer::busFactor(coll, nranks)) res.busbw = *res.algbw * *f;
  res.samplesUs = g.times;
  return res;
}

}  // namespace

bool looksLikeInspectorOutput(std::string_view head) {
  return head.find("\"coll_perf\"") != std::string_view::npos ||
         head.find("\"p2p_perf\"") != std::string_view::npos ||
         head.find("\"inspector_output_format_version\"") != std::string_view::npos;
}

std::vector<ImportedRun> parseNcclInspector(std::string_view text, const ImportOptions& options) {
  const Tally t = readRecords(text, options);
  if (t.records == 0) importer::fail(options, 0, "no NCCL Inspector record");
  if (t.groups.empty()) importer::fail(options, 0, "no collective record (coll_perf) with a time");

  ImportedRun run;
  RunRecord& r = run.run;
  r.worldSize = t.maxRanks;
  r.status = RunStatus::kOk;
  for (const std::string& h : t.hosts) r.hosts += (r.hosts.empty() ? "" : ",") + h;
  if (!t.hosts.empty()) r.host = *t.hosts.begin();
  if (t.firstDump > 0) r.startedAt = isoFromMicroseconds(t.firstDump);
  for (const auto& [key, g] : t.groups) {
    const auto& [coll, size, nranks] = key;
    run.results.push_back(resultOf(coll, size, nranks, g, options));
    if (g.comms.size() > 1) {
      run.notes.push_back(
          fmt::format("{} at {} B on {} ranks: {} calls from {} communicators pooled", coll, size,
                      nranks, g.times.size(), g.comms.size()));
    }
  }
  run.notes.push_back(options.dtype || options.op
                          ? "dtype and op are not in Inspector's records: as given to import"
                          : "dtype and op are not in Inspector's records (unknown: give --dtype "
                            "and --op to compare with benchmark runs)");
  run.notes.push_back("the variant is NCCL's own choice (Inspector's JSON does not name it)");
  for (const auto& [what, n] : t.skipped) {
    run.notes.push_back(fmt::format("{} {} record(s) left out", n, what));
  }
  nlohmann::ordered_json env;
  auto list = [](const std::set<std::string>& s) {
    return std::vector<std::string>(s.begin(), s.end());
  };
  env["inspector_output_format_version"] = list(t.versions);
  env["rec_mechanism"] = list(t.mechanisms);
  env["timing_source"] = list(t.timingSources);
  env["nnodes"] = t.maxNodes;
  env["records"] = t.records;
  importer::finishImportedRun(run, options, "nccl-inspector", std::move(env));
  return {std::move(run)};
}

}  // namespace cb
