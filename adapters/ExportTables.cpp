#include "adapters/ExportTables.h"
#include "core/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/Error.h"
#include "results/export/Export.h"

namespace cb {
namespace {

const std::vector<std::string> kToolFormats{"prometheus", "nccl-tuner", "nccl-tuner-conf",
                                            "sim-fit",    "astra-sim",  "simai-busbw"};

// Shortest text that reads back to the same double.
std::string num(double v) { return fmt::format("{}", v); }

// Unknown values (NULL in the store): an empty CSV field, JSON null.
std::string text(const std::optional<double>& v) { return v ? num(*v) : ""; }
template <typename T>
std::string text(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "";
}
template <typename T>
nlohmann::json value(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json value(const std::string& v) {
  return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
}
std::optional<double> timeOf(const ResultRecord& r) {
  return r.timeKnown ? std::optional<double>(r.timeUs) : std::nullopt;
}
std::optional<double> medianOf(const ResultRecord& r) {
  return r.medianKnown ? std::optional<double>(r.medianUs) : std::nullopt;
}

const std::vector<std::string> kRunHeader{
    "id",          "started_at",  "finished_at",     "label",
    "status",      "source",      "command_line",    "collbench_version",
    "mpi_version", "ucx_version", "cuda_version",    "nccl_version",
    "hosts",       "world_size",  "world_kind",      "fingerprint",
    "pid",         "host",        "environment_json"};

std::vector<std::string> runFields(const RunRecord& r) {
  return {std::to_string(r.id),
          r.startedAt,
          r.finishedAt,
          r.label,
          std::string(runStatusName(r.status)),
          r.source,
          r.commandLine,
          r.collbenchVersion,
          r.mpiVersion,
          r.ucxVersion,
          r.cudaVersion,
          r.ncclVersion,
          r.hosts,
          std::to_string(r.worldSize),
          r.worldKind,
          r.fingerprint,
          std::to_string(r.pid),
          r.host,
          r.environmentJson};
}

nlohmann::json runJson(const RunRecord& r) {
  nlohmann::json env = nlohmann::json::parse(r.environmentJson, nullptr, false);
  if (env.is_discarded()) env = r.environmentJson;  // keep what is there, as text
  return {{"id", r.id},
          {"started_at", r.startedAt},
          {"finished_at", r.finishedAt},
          {"label", r.label},
          {"status", runStatusName(r.status)},
          {"source", r.source},
          {"command_line", r.commandLine},
          {"collbench_version", r.collbenchVersion},
          {"mpi_version", r.mpiVersion},
          {"ucx_version", r.ucxVersion},
          {"cuda_version", r.cudaVersion},
          {"nccl_version", r.ncclVersion},
          {"hosts", r.hosts},
          {"world_size", r.worldSize},
          {"world_kind", r.worldKind},
          {"fingerprint", r.fingerprint},
          {"pid", r.pid},
          {"host", r.host},
          {"environment", env}};
}

const std::vector<std::string> kCaseHeader{"result_id", "run_id",    "collective", "variant",
                                           "dtype",     "op",        "root",       "size_bytes",
                                           "count",     "placement", "nranks"};

std::vector<std::string> caseFields(const ResultRecord& r) {
  return {std::to_string(r.id),
          std::to_string(r.runId),
          r.collective,
          r.variant,
          r.dtype,
          r.op,
          text(r.root),
          std::to_string(r.sizeBytes),
          text(r.count),
          r.placement,
          text(r.nranks)};
}

nlohmann::json caseJson(const ResultRecord& r) {
  return {{"result_id", r.id},        {"run_id", r.runId},         {"collective", r.collective},
          {"variant", r.variant},     {"dtype", value(r.dtype)},   {"op", value(r.op)},
          {"root", value(r.root)},    {"size_bytes", r.sizeBytes}, {"count", value(r.count)},
          {"placement", r.placement}, {"nranks", value(r.nranks)}};
}

const std::vector<std::string> kResultTail{
    "status", "message", "iterations", "statistic", "time_us", "median_us", "mean_us",  "min_us",
    "max_us", "p99_us",  "cv",         "algbw",     "busbw",   "wrong",     "peak_gbps"};

std::vector<std::string> resultTail(const ResultRecord& r) {
  return {std::string(resultStatusName(r.status)),
          r.message,
          text(r.iterations),
          r.statistic,
          text(timeOf(r)),
          text(medianOf(r)),
          text(r.meanUs),
          text(r.minUs),
          text(r.maxUs),
          text(r.p99Us),
          text(r.cv),
          text(r.algbw),
          text(r.busbw),
          text(r.wrong),
          text(r.peakGBps)};
}

nlohmann::json resultJson(const ResultRecord& r) {
  nlohmann::json j = caseJson(r);
  for (size_t i = 0; i < kResultTail.size(); ++i) j[kResultTail[i]] = resultTail(r)[i];
  // Numbers as numbers.
  j["iterations"] = value(r.iterations);
  for (auto [name, v] : {std::pair{"time_us", timeOf(r)},
                         {"median_us", medianOf(r)},
                         {"mean_us", r.meanUs},
                         {"min_us", r.minUs},
                         {"max_us", r.maxUs},
                         {"p99_us", r.p99Us},
                         {"cv", r.cv},
                         {"algbw", r.algbw},
                         {"busbw", r.busbw},
                         {"peak_gbps", r.peakGBps}}) {
    j[name] = value(v);
  }
  j["wrong"] = value(r.wrong);
  return j;
}

// One document being written: the CSV header and rows, or JSON objects (one per line for
// jsonl, else collected into the array finish() writes).
class TableWriter {
 public:
  TableWriter(const std::string& format, const std::function<void(std::string_view)>& sink)
      : csv_(format == "csv"), lines_(format == "jsonl"), array_(format == "json"), sink_(sink) {}
  bool csv() const { return csv_; }
  void header(const std::vector<std::string>& columns) {
    if (csv_) sink_(exportCsvLine(columns));
  }
  void csvRow(const std::vector<std::string>& fields) { sink_(exportCsvLine(fields)); }
  void jsonRow(nlohmann::json j) {
    if (lines_) {
      sink_(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } else {
      rows_.push_back(std::move(j));
    }
  }
  void finish() {
    if (array_) {
      sink_(rows_.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
  }

 private:
  bool csv_;
  bool lines_;
  bool array_;
  const std::function<void(std::string_view)>& sink_;
  nlohmann::json rows_ = nlohmann::json::array();
};

void writeRuns(TableWriter& w, const std::vector<RunRecord>& runs) {
  w.header(kRunHeader);
  for (const RunRecord& r : runs) {
    if (w.csv()) {
      w.csvRow(runFields(r));
    } else {
      w.jsonRow(runJson(r));
    }
  }
}

void writeResults(TableWriter& w, const Store& store, const std::vector<RunRecord>& runs) {
  std::vector<std::string> columns = kCaseHeader;
  columns.insert(columns.end(), kResultTail.begin(), kResultTail.end());
  w.header(columns);
  for (const RunRecord& run : runs) {
    for (const ResultRecord& r : store.results(run.id, false)) {
      if (w.csv()) {
        std::vector<std::string> fields = caseFields(r);
        std::vector<std::string> tail = resultTail(r);
        fields.insert(fields.end(), tail.begin(), tail.end());
        w.csvRow(fields);
      } else {
        w.jsonRow(resultJson(r));
      }
    }
  }
}

// CSV one row per iteration (rank empty for the combined time, the rank number for per-rank
// times with perRank); JSON one object per result with arrays.
void writeSamples(TableWriter& w, const Store& store, const std::vector<RunRecord>& runs,
                  bool withRanks) {
  std::vector<std::string> columns = kCaseHeader;
  columns.insert(columns.end(), {"rank", "iteration", "time_us"});
  w.header(columns);
  for (const RunRecord& run : runs) {
    std::vector<ResultRecord> results =
        withRanks ? store.results(run.id, true) : store.resultsWithSamples(run.id);
    for (const ResultRecord& r : results) {
      const int n = r.nranks.value_or(0);
      size_t perRank = n > 0 ? r.rankSamplesUs.size() / static_cast<size_t>(n) : 0;
      if (w.csv()) {
        std::vector<std::string> fields = caseFields(r);
        auto row = [&](const std::string& rank, size_t i, double t) {
          std::vector<std::string> f = fields;
          f.insert(f.end(), {rank, std::to_string(i), num(t)});
          w.csvRow(f);
        };
        for (size_t i = 0; i < r.samplesUs.size(); ++i) row("", i, r.samplesUs[i]);
        for (size_t k = 0; withRanks && k < r.rankSamplesUs.size(); ++k) {
          row(std::to_string(k / perRank), k % perRank, r.rankSamplesUs[k]);
        }
      } else {
        if (r.samplesUs.empty() && r.rankSamplesUs.empty()) continue;
        nlohmann::json j = caseJson(r);
        j["samples_us"] = r.samplesUs;
        if (withRanks) {
          nlohmann::json ranks = nlohmann::json::array();
          for (size_t k = 0; perRank > 0 && k < r.rankSamplesUs.size(); k += perRank) {
            ranks.push_back(std::vector<double>(r.rankSamplesUs.begin() + k,
                                                r.rankSamplesUs.begin() + k + perRank));
          }
          j["rank_samples_us"] = ranks;
        }
        w.jsonRow(std::move(j));
      }
    }
  }
}

}  // namespace

bool isExportTableFormat(const std::string& format) {
  return format == "csv" || format == "json" || format == "jsonl";
}

const std::vector<std::string>& exportToolFormats() { return kToolFormats; }

bool isExportToolFormat(const std::string& format) {
  return std::find(kToolFormats.begin(), kToolFormats.end(), format) != kToolFormats.end();
}

std::string exportCsvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csvField(fields[i]);
  }
  return line + "\n";
}

std::vector<RunRecord> selectExportRuns(const Store& store, const ExportSelection& selection) {
  const std::string& run = selection.run;
  if (run.empty()) {
    std::vector<RunRecord> runs = store.listRuns(selection.filter);
    std::reverse(runs.begin(), runs.end());  // oldest first, as ids grow
    return runs;
  }
  if (run == "last" || run == "latest") {
    RunFilter newest;
    newest.limit = 1;
    std::vector<RunRecord> runs = store.listRuns(newest);
    if (runs.empty()) throw UsageError(fmt::format("no runs in '{}'", store.path()));
    return runs;
  }
  int64_t id = 0;
  auto [end, ec] = std::from_chars(run.data(), run.data() + run.size(), id);
  if (ec != std::errc() || end != run.data() + run.size() || id <= 0) {
    throw UsageError(fmt::format("--run '{}' is not a run id (a positive number, or last)", run));
  }
  std::optional<RunRecord> r = store.findRun(id);
  if (!r) throw UsageError(fmt::format("no run {} in '{}'", id, store.path()));
  return {*r};
}

void writeExportTable(const Store& store, const std::vector<RunRecord>& runs,
                      const ExportTableOptions& options,
                      const std::function<void(std::string_view)>& sink) {
  TableWriter w(options.format, sink);
  if (options.what == "runs") {
    writeRuns(w, runs);
  } else if (options.what == "results") {
    writeResults(w, store, runs);
  } else {
    writeSamples(w, store, runs, options.perRank);
  }
  w.finish();
}

std::string exportToolText(const Store& store, const std::vector<RunRecord>& records,
                           const std::string& format, std::vector<std::string>* leftOut) {
  std::vector<ExportRun> runs;
  for (const RunRecord& r : records) runs.push_back(loadExportRun(store, r));
  if (format == "prometheus") return prometheusText(runs);
  if (format == "nccl-tuner") return ncclTunerData(runs);
  if (format == "nccl-tuner-conf") return ncclTunerConf(runs);
  std::vector<AlphaBetaFit> fits = fitAlphaBeta(runs, leftOut);
  if (format == "sim-fit") return fitsCsv(fits);
  if (format == "astra-sim") return astraSimNetworkYaml(fits);
  return simaiBusbwYaml(fits);
}

}  // namespace cb
