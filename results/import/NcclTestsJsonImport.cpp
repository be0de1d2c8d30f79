// nccl-tests JSON reports (-J / --output_file), layout versions 1 to 3 (nccl-tests 2.17 on).
//
// The writer's quirks (src/util.cu): booleans are the strings "true"/"false", doubles are %lf
// and NaN is the string "nan", root is a width-6 padded string, nwrong is a double or null
// (N/A), the time key is "cpu_time" under -C 1, out_of_place is null in trace-replay mode, and an
// aborted run leaves the file without out_of_bounds/end_time. With per-iteration timing (version
// 2+) each placement has a *_per_iter object whose times_us become the result's samples.
//
// World size: the device list holds the first device line of each process only, so the number
// of ranks is processes x nthreads x ngpus.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/Text.h"
#include "results/import/Import.h"
#include "results/import/ImportSupport.h"

namespace cb {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

class JsonReport {
 public:
  JsonReport(std::string_view text, const ImportOptions& options) : options_(options) {
    try {
      doc_ = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
      int line = 1;
      for (size_t i = 0; i < e.byte && i < text.size(); ++i) line += text[i] == '\n';
      // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 9: ...".
      std::string what = e.what();
      if (auto colon = what.find("parse error"); colon != std::string::npos) {
        what = what.substr(colon);
      }
      importer::fail(options_, line,
                     fmt::format("not a complete nccl-tests JSON report ({}); a run aborted "
                                 "under JSON layout version 1 leaves a truncated file",
                                 what));
    }
  }

  ImportedRun parse() {
    if (!doc_.is_object()) fail("", "the top level is not an object");
    int version = intAt(doc_, "version", "");
    if (version < 1 || version > 3) {
      fail("version", fmt::format("unsupported JSON layout version {} (known: 1, 2, 3)", version));
    }
    const json& config = objectAt(doc_, "config", "");
    const json& results = member(doc_, "results", "");
    if (!results.is_array()) fail("results", "is not a list");

    ImportedRun run;
    std::string coll = collective(results);
    Devices devices = devicesOf(config);
    if (devices.statedRanks == 0)
      run.notes.push_back("no device list: the world size is not known");
    int n = importer::resolveWorldSize(devices.statedRanks, options_, 0);
    ojson ncclEnv = ojson::object();
    std::string variant = ncclEnvironment(ncclEnv);

    int64_t iterations = config.contains("iterations") ? intAt(config, "iterations", "config") : 0;
    bool anyFailed = false;
    for (size_t i = 0; i < results.size(); ++i) {
      std::string where = fmt::format("results[{}]", i);
      const json& row = results[i];
      if (!row.is_object()) fail(where, "is not an object");
      const ResultRecord r = rowRecord(row, where, coll, variant, n, iterations);
      for (const char* placement : {"out_of_place", "in_place"}) {
        if (auto x = placementRecord(row, where, placement, r, anyFailed)) {
          run.results.push_back(std::move(*x));
        }
      }
    }
    if (run.results.empty()) fail("results", "holds no measurement");

    std::optional<int64_t> outOfBounds = setRunRecord(run, n, devices.hosts, anyFailed);
    ojson env = ojson::object();
    env["tool"] = "nccl-tests";
    env["jsonVersion"] = version;
    if (!binary_.empty()) env["binary"] = binary_;
    if (auto it = doc_.find("args"); it != doc_.end()) env["args"] = ojson::parse(it->dump());
    ojson cfg = ojson::parse(config.dump());
    cfg.erase("devices");
    env["parameters"] = std::move(cfg);
    env["devices"] = std::move(devices.list);
    env["ncclEnvironment"] = std::move(ncclEnv);
    if (outOfBounds) env["outOfBounds"] = *outOfBounds;
    if (auto it = doc_.find("end_time"); it != doc_.end() && it->is_string()) {
      env["endTime"] = it->get<std::string>();
    }
    importer::finishImportedRun(run, options_, "nccl-tests-json", std::move(env));
    return run;
  }

 private:
  // The stages of parse(), in its order.

  // The collective: a trace-replay experiment name, else the binary name (args[0]).
  std::string collective(const json& results) {
    std::string stated;
    if (auto it = doc_.find("args");
        it != doc_.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
      binary_ = (*it)[0].get<std::string>();
      stated = importer::normalizeCollective(binary_);
    }
    if (!results.empty() && results[0].is_object()) {
      if (auto it = results[0].find("experiment_name");
          it != results[0].end() && it->is_string() && !it->get<std::string>().empty()) {
        stated = importer::normalizeCollective(it->get<std::string>());
      }
    }
    return importer::resolveCollective(stated, options_, 0, "no binary in 'args'");
  }

  struct Devices {
    std::vector<std::string> hosts;
    ojson list = ojson::array();
    int statedRanks = 0;  // 0: no device list
  };

  // Devices: one entry per process.
  Devices devicesOf(const json& config) {
    Devices out;
    int nthreads = intAt(config, "nthreads", "config");
    int ngpus = intAt(config, "ngpus", "config");
    int processes = 0;
    if (auto it = config.find("devices"); it != config.end() && it->is_array()) {
      for (const auto& d : *it) {
        ++processes;
        if (auto h = d.find("hostname"); h != d.end() && h->is_string()) {
          std::string host = h->get<std::string>();
          if (std::find(out.hosts.begin(), out.hosts.end(), host) == out.hosts.end()) {
            out.hosts.push_back(host);
          }
        }
        out.list.push_back(ojson::parse(d.dump()));
      }
    }
    out.statedRanks = processes * nthreads * ngpus;
    return out;
  }

  // Environment: NCCL_ALGO picks the variant (returned); only NCCL_* variables are kept in
  // ncclEnv (env may hold secrets).
  std::string ncclEnvironment(ojson& ncclEnv) {
    std::string variant = "nccl";
    if (auto it = doc_.find("env"); it != doc_.end() && it->is_array()) {
      for (const auto& e : *it) {
        if (!e.is_string()) continue;
        std::string kv = e.get<std::string>();
        auto eq = kv.find('=');
        if (eq == std::string::npos || !kv.starts_with("NCCL_")) continue;
        ncclEnv[kv.substr(0, eq)] = kv.substr(eq + 1);
        if (kv.substr(0, eq) == "NCCL_ALGO" && eq + 1 < kv.size()) {
          variant = "nccl:" + toLower(kv.substr(eq + 1));
        }
      }
    }
    return variant;
  }

  // What a row's placements share: size, count, type, op, root, iterations.
  ResultRecord rowRecord(const json& row, const std::string& where, const std::string& coll,
                         const std::string& variant, int n, int64_t iterations) {
    ResultRecord r;
    r.medianKnown = false;  // unless the per-iteration statistics give p50
    r.collective = coll;
    r.variant = variant;
    if (n > 0) r.nranks = n;  // 0: the log does not say
    r.sizeBytes = unsignedAt(row, "size", where);
    r.count = unsignedAt(row, "count", where);
    r.dtype = importer::normalizeDataType(stringAt(row, "type", where));
    r.op = toLower(stringAt(row, "redop", where));
    std::string root(trim(stringAt(row, "root", where)));
    auto rootValue = importer::toSigned(root);
    if (!rootValue) fail(where + ".root", fmt::format("'{}' is not an integer", root));
    if (*rootValue >= 0) r.root = static_cast<int>(*rootValue);  // -1: not rooted
    int64_t iters =
        row.contains("actual_iterations") ? intAt(row, "actual_iterations", where) : iterations;
    if (iters > 0) r.iterations = iters;
    r.statistic = "mean";
    return r;
  }

  // The result of one placement of a row (r: what the row's placements share); nullopt when
  // the placement is null (trace replay: in-place only). anyFailed is set by wrong elements.
  std::optional<ResultRecord> placementRecord(const json& row, const std::string& where,
                                              const char* placement, const ResultRecord& r,
                                              bool& anyFailed) {
    auto it = row.find(placement);
    if (it == row.end()) fail(where, fmt::format("has no '{}'", placement));
    if (it->is_null()) return std::nullopt;
    std::string pw = where + "." + placement;
    if (!it->is_object()) fail(pw, "is not an object");
    ResultRecord x = r;
    x.placement = std::string(placement) == "out_of_place" ? "out" : "in";
    const char* timeKey = it->contains("cpu_time") ? "cpu_time" : "time";
    double time = doubleAt(*it, timeKey, pw);
    double algbw = doubleAt(*it, "alg_bw", pw);
    double busbw = doubleAt(*it, "bus_bw", pw);
    if (std::isnan(time) || std::isnan(algbw) || std::isnan(busbw)) {
      x.status = ResultStatus::kSkipped;  // nothing measured: the values stay unset
      x.timeKnown = false;
      x.message = "nccl-tests reported nan";
    } else {
      x.timeUs = time;
      x.meanUs = time;
      x.algbw = algbw;
      x.busbw = busbw;
    }
    const json& nwrong = member(*it, "nwrong", pw);
    if (!nwrong.is_null()) {  // null: not checked, wrong stays unset
      double w = numberOf(nwrong, pw + ".nwrong");
      if (!std::isnan(w)) x.wrong = std::llround(w);
      if (x.wrong > 0) {
        x.status = ResultStatus::kFailed;
        x.message = fmt::format("{} wrong elements", *x.wrong);
        anyFailed = true;
      }
    }
    readPerIteration(row, where, placement, x);
    return x;
  }

  // Version 2+: the placement's per-iteration statistics, and its times as samples.
  void readPerIteration(const json& row, const std::string& where, const char* placement,
                        ResultRecord& x) {
    auto pi = row.find(std::string(placement) + "_per_iter");
    if (pi == row.end() || !pi->is_object()) return;
    std::string piw = where + "." + placement + "_per_iter";
    auto stat = [&](const char* key, double divisor = 1) -> std::optional<double> {
      double v = doubleAt(*pi, key, piw);
      return std::isnan(v) ? std::nullopt : std::optional<double>(v / divisor);
    };
    x.minUs = stat("min_us");
    x.maxUs = stat("max_us");
    auto median = stat("p50_us");
    x.medianKnown = median.has_value();
    x.medianUs = median.value_or(0);
    x.p99Us = stat("p99_us");
    x.cv = stat("cv_pct", 100);
    if (auto t = pi->find("times_us"); t != pi->end() && t->is_array()) {
      for (size_t k = 0; k < t->size(); ++k) {
        double v = numberOf((*t)[k], fmt::format("{}.times_us[{}]", piw, k));
        if (!std::isnan(v)) x.samplesUs.push_back(v);
      }
    }
  }

  // The run record: world, hosts, versions, start, and the status the footer objects give;
  // returns the out-of-bounds count (nullopt: the test did not finish).
  std::optional<int64_t> setRunRecord(ImportedRun& run, int n,
                                      const std::vector<std::string>& hosts, bool anyFailed) {
    RunRecord& rec = run.run;
    rec.worldSize = n;
    for (const auto& h : hosts) rec.hosts += (rec.hosts.empty() ? "" : ",") + h;
    if (auto it = doc_.find("nccl_version"); it != doc_.end() && it->is_number_integer()) {
      rec.ncclVersion = importer::ncclVersionFromCode(it->get<long>());
    }
    if (auto it = doc_.find("start_time"); it != doc_.end() && it->is_string()) {
      rec.startedAt = importer::isoFromLocalTime(it->get<std::string>());
      if (!rec.startedAt.empty()) {
        run.notes.push_back(
            "startedAt is the report's start_time, local time of the benchmark "
            "host");
      }
    }
    std::optional<int64_t> outOfBounds;
    if (auto it = doc_.find("out_of_bounds"); it != doc_.end() && it->is_object()) {
      outOfBounds = intAt(*it, "count", "out_of_bounds");
    }
    bool bwCheckFailed = false;
    if (auto it = doc_.find("average_bus_bandwidth"); it != doc_.end() && it->is_object()) {
      if (auto ok = it->find("okay"); ok != it->end() && ok->is_string() && *ok == "false") {
        bwCheckFailed = true;
        run.notes.push_back("the average bus bandwidth check FAILED");
      }
    }
    if (auto it = doc_.find("errors"); it != doc_.end() && it->is_array()) {
      for (const auto& e : *it) {
        if (e.is_string() && !e.get<std::string>().empty()) {
          run.notes.push_back("nccl-tests reported: " + e.get<std::string>());
        }
      }
    }
    if (anyFailed || (outOfBounds && *outOfBounds > 0) || bwCheckFailed) {
      rec.status = RunStatus::kFailed;
    } else if (!outOfBounds) {
      rec.status = RunStatus::kInterrupted;
      run.notes.push_back("no 'out_of_bounds' object: the test did not finish");
    } else {
      rec.status = RunStatus::kOk;
    }
    return outOfBounds;
  }

  [[noreturn]] void fail(const std::string& where, std::string_view what) {
    importer::fail(options_, 0,
                   where.empty() ? std::string(what) : fmt::format("{}: {}", where, what));
  }

  const json& member(const json& obj, const char* key, const std::string& where) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(where, fmt::format("missing '{}'", key));
    }
    return *it;
  }

  const json& objectAt(const json& obj, const char* key, const std::string& where) {
    const json& v = member(obj, key, where);
    if (!v.is_object()) fail(path(where, key), "is not an object");
    return v;
  }

  static std::string path(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
  }

  // Doubles may be the string "nan" (the writer's NaN); anything else non-numeric is refused.
  double numberOf(const json& v, const std::string& where) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string() && v.get<std::string>() == "nan") return std::nan("");
    if (v.is_string()) fail(where, fmt::format("'{}' is not a number", v.get<std::string>()));
    fail(where, "is not a number");
  }

  double doubleAt(const json& obj, const char* key, const std::string& where) {
    return numberOf(member(obj, key, where), path(where, key));
  }

  int intAt(const json& obj, const char* key, const std::string& where) {
    const json& v = member(obj, key, where);
    if (!v.is_number_integer()) fail(path(where, key), "is not an integer");
    return v.get<int>();
  }

  uint64_t unsignedAt(const json& obj, const char* key, const std::string& where) {
    const json& v = member(obj, key, where);
    if (!v.is_number_unsigned()) fail(path(where, key), "is not a non-negative integer");
    return v.get<uint64_t>();
  }

  std::string stringAt(const json& obj, const char* key, const std::string& where) {
    const json& v = member(obj, key, where);
    if (!v.is_string()) fail(path(where, key), "is not a string");
    return v.get<std::string>();
  }

  const ImportOptions& options_;
  json doc_;
  std::string binary_;
};

}  // namespace

std::vector<ImportedRun> parseNcclTestsJson(std::string_view text, const ImportOptions& options) {
  std::vector<ImportedRun> runs;
  if (text.size() > kMaxImportJsonBytes) {
    importer::fail(options, 0,
                   fmt::format("a JSON report larger than {} MiB: not an nccl-tests report",
                               kMaxImportJsonBytes >> 20));
  }
  try {
    runs.push_back(JsonReport(text, options).parse());
  } catch (const nlohmann::json::exception& e) {
    // A number out of double's range (1e999), a field of another type than the layout's: the
    // file is not the report it claims to be. One line, never an internal error.
    std::string what = e.what();
    if (auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    importer::fail(options, 0, fmt::format("not a readable nccl-tests JSON report ({})", what));
  }
  return runs;
}

}  // namespace cb
