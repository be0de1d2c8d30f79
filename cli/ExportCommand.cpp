// `collbench export runs|results|samples`: the database as CSV or JSON for other tools
// (spreadsheets, pandas, dashboards), all runs or one.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/Command.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

struct ExportArgs {
  std::string what;
  std::string db = "collbench.db";
  std::string run;
  std::string format = "csv";
  std::string output;
  bool perRank = false;
};

// RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled.
std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csvField(fields[i]);
  }
  return line + "\n";
}

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

std::vector<RunRecord> selectRuns(const Store& store, const std::string& run) {
  if (run.empty()) {
    std::vector<RunRecord> runs = store.listRuns();
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
    "status", "message", "iterations", "statistic", "time_us", "median_us", "mean_us",
    "min_us", "max_us",  "p99_us",     "cv",        "algbw",   "busbw",     "wrong"};

std::vector<std::string> resultTail(const ResultRecord& r) {
  return {r.status,          r.message,      text(r.iterations), r.statistic,   text(timeOf(r)),
          text(medianOf(r)), text(r.meanUs), text(r.minUs),      text(r.maxUs), text(r.p99Us),
          text(r.cv),        text(r.algbw),  text(r.busbw),      text(r.wrong)};
}

std::string exportText(const ExportArgs& a, const Store& store) {
  const bool csv = a.format == "csv";
  std::vector<RunRecord> runs = selectRuns(store, a.run);
  std::string out;
  nlohmann::json rows = nlohmann::json::array();
  auto header = [&](std::vector<std::string> columns) {
    if (csv) out += csvLine(columns);
  };
  if (a.what == "runs") {
    header(kRunHeader);
    for (const RunRecord& r : runs) {
      if (csv) {
        out += csvLine(runFields(r));
      } else {
        rows.push_back(runJson(r));
      }
    }
  } else if (a.what == "results") {
    std::vector<std::string> columns = kCaseHeader;
    columns.insert(columns.end(), kResultTail.begin(), kResultTail.end());
    header(columns);
    for (const RunRecord& run : runs) {
      for (const ResultRecord& r : store.results(run.id, false)) {
        if (csv) {
          std::vector<std::string> fields = caseFields(r);
          std::vector<std::string> tail = resultTail(r);
          fields.insert(fields.end(), tail.begin(), tail.end());
          out += csvLine(fields);
        } else {
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
                                 {"busbw", r.busbw}}) {
            j[name] = value(v);
          }
          j["wrong"] = value(r.wrong);
          rows.push_back(std::move(j));
        }
      }
    }
  } else {
    // samples: CSV one row per iteration (rank empty for the combined time, the rank number
    // for per-rank times with --per-rank); JSON one object per result with arrays.
    std::vector<std::string> columns = kCaseHeader;
    columns.insert(columns.end(), {"rank", "iteration", "time_us"});
    header(columns);
    for (const RunRecord& run : runs) {
      std::vector<ResultRecord> results =
          a.perRank ? store.results(run.id, true) : store.resultsWithSamples(run.id);
      for (const ResultRecord& r : results) {
        const int n = r.nranks.value_or(0);
        size_t perRank = n > 0 ? r.rankSamplesUs.size() / static_cast<size_t>(n) : 0;
        if (csv) {
          std::vector<std::string> fields = caseFields(r);
          auto row = [&](const std::string& rank, size_t i, double t) {
            std::vector<std::string> f = fields;
            f.insert(f.end(), {rank, std::to_string(i), num(t)});
            out += csvLine(f);
          };
          for (size_t i = 0; i < r.samplesUs.size(); ++i) row("", i, r.samplesUs[i]);
          for (size_t k = 0; a.perRank && k < r.rankSamplesUs.size(); ++k) {
            row(std::to_string(k / perRank), k % perRank, r.rankSamplesUs[k]);
          }
        } else {
          if (r.samplesUs.empty() && r.rankSamplesUs.empty()) continue;
          nlohmann::json j = caseJson(r);
          j["samples_us"] = r.samplesUs;
          if (a.perRank) {
            nlohmann::json ranks = nlohmann::json::array();
            for (size_t k = 0; perRank > 0 && k < r.rankSamplesUs.size(); k += perRank) {
              ranks.push_back(std::vector<double>(r.rankSamplesUs.begin() + k,
                                                  r.rankSamplesUs.begin() + k + perRank));
            }
            j["rank_samples_us"] = ranks;
          }
          rows.push_back(std::move(j));
        }
      }
    }
  }
  if (!csv) out = rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return out;
}

int doExport(const ExportArgs& a) {
  if (a.what != "runs" && a.what != "results" && a.what != "samples") {
    throw UsageError(fmt::format("export '{}': expected runs, results or samples", a.what));
  }
  if (a.format != "csv" && a.format != "json") {
    throw UsageError(fmt::format("--format '{}' is not one of csv, json", a.format));
  }
  if (a.perRank && a.what != "samples") throw UsageError("--per-rank applies to samples only");
  const bool toFile = !a.output.empty() && a.output != "-";
  if (toFile) checkOutputPath(a.output, "-o");
  Store store = Store::open(a.db, false);
  store.reapDeadRuns();
  std::string text = exportText(a, store);
  if (a.output.empty() || a.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  writeOutputFile(a.output, text, "-o");
  return 0;
}

}  // namespace

void setupExportCommand(CLI::App& app, Action& action) {
  auto a = std::make_shared<ExportArgs>();
  auto* sub = app.add_subcommand("export", "Write runs, results or raw samples as CSV or JSON");
  sub->add_option("WHAT", a->what, "runs, results or samples")->required();
  sub->add_option("--db", a->db, "SQLite database")->capture_default_str();
  sub->add_option("--run", a->run, "Only this run (id or last); default: every run");
  sub->add_option("--format", a->format, "csv or json")->capture_default_str();
  sub->add_option("-o,--output", a->output, "Write to FILE (default: stdout)");
  sub->add_flag("--per-rank", a->perRank, "samples: also every rank's own times");
  sub->callback([a, &action] { action = [a] { return doExport(*a); }; });
}

}  // namespace cb::cli
