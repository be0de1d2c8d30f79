// `collbench export runs|results|samples`: the database as CSV, JSON or JSON
// lines for other tools (spreadsheets, pandas, scripts), and results in the
// formats of the tools clusters already run: Prometheus (a textfile for
// node_exporter, or one scrape with --listen), NCCL's example tuner plugin,
// ASTRA-sim and SimAI networks fitted from the measurements (results/export/).
// The rows and formats are written by adapters/ExportTables, the scrape served
// by adapters/MetricsScrape; this file keeps the flags, their checks and where
// the text goes.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/ExportTables.h"
#include "adapters/MetricsScrape.h"
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
  RunFilterFlags select;
  int limit = 0;
  int listenPort = -1;  // --listen: serve /metrics once on 127.0.0.1
  double listenTimeout = 60;
};

// "prometheus, nccl-tuner, ...": the tool formats as help and errors name them.
std::string toolFormatList() {
  std::string list;
  for (const std::string& f : exportToolFormats()) list += (list.empty() ? "" : ", ") + f;
  return list;
}

// Every bad flag is refused here, before the database is opened.
void checkExportArgs(const ExportArgs& a) {
  if (a.what != "runs" && a.what != "results" && a.what != "samples") {
    throw UsageError(fmt::format("export '{}': expected runs, results or samples", a.what));
  }
  const bool tool = isExportToolFormat(a.format);
  if (!isExportTableFormat(a.format) && !tool) {
    throw UsageError(fmt::format("--format '{}' is not one of csv, json, jsonl, {}", a.format,
                                 toolFormatList()));
  }
  if (tool && a.what != "results") {
    throw UsageError(fmt::format(
        "--format {} exports results: collbench export results --format {}", a.format, a.format));
  }
  if (a.perRank && a.what != "samples") throw UsageError("--per-rank applies to samples only");
  if (a.listenPort >= 0 && a.format != "prometheus") {
    throw UsageError("--listen serves the prometheus format only (--format prometheus)");
  }
  if (a.listenPort > 65535) throw UsageError(fmt::format("--listen {}: not a port", a.listenPort));
  if (a.listenPort >= 0 && !a.output.empty())
    throw UsageError("--listen and -o exclude each other");
  if (!(a.listenTimeout > 0)) throw UsageError("--listen-timeout must be positive");
  if (!a.run.empty() && (a.select.any() || a.limit > 0)) {
    throw UsageError(
        "--run names one run; --label, --since, --until, --fingerprint and --limit "
        "select among all of them");
  }
  if (a.limit < 0) throw UsageError(fmt::format("--limit {}: must be positive", a.limit));
}

ExportSelection selectionOf(const ExportArgs& a) {
  ExportSelection selection;
  selection.run = a.run;
  selection.filter = a.select.filter(a.limit);
  return selection;
}

void writeStdout(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

int doExport(const ExportArgs& a) {
  checkExportArgs(a);
  const bool toFile = !a.output.empty() && a.output != "-";
  if (toFile) checkOutputPath(a.output, "-o");
  Store store = Store::openForReading(a.db);
  const std::vector<RunRecord> runs = selectExportRuns(store, selectionOf(a));
  if (isExportToolFormat(a.format)) {
    std::vector<std::string> leftOut;
    const std::string text = exportToolText(store, runs, a.format, &leftOut);
    for (const std::string& line : leftOut) fmt::print(stderr, "# export: {}\n", line);
    if (a.listenPort >= 0) {
      serveMetricsOnce(text, a.listenPort, a.listenTimeout);
    } else if (toFile) {
      writeOutputFile(a.output, text, "-o");
    } else {
      writeStdout(text);
    }
    return 0;
  }
  const ExportTableOptions options{a.what, a.format, a.perRank};
  if (!toFile) {
    // To stdout, rows leave as they are made; -o files are written whole (core/OutputFile).
    writeExportTable(store, runs, options, writeStdout);
    return 0;
  }
  std::string text;
  writeExportTable(store, runs, options, [&](std::string_view t) { text += t; });
  writeOutputFile(a.output, text, "-o");
  return 0;
}

}  // namespace

void setupExportCommand(CLI::App* sub, Action& action) {
  auto a = std::make_shared<ExportArgs>();
  sub->add_option("WHAT", a->what, "runs, results or samples")->required();
  addDbOption(sub, a->db);
  sub->add_option("--run", a->run, "Only this run (id or last); default: every run");
  a->select.add(sub);
  sub->add_option("--limit", a->limit, "Only the newest N runs of the selection");
  sub->add_option("--format", a->format,
                  "csv, json, jsonl (one object per line), or for results: " + toolFormatList())
      ->capture_default_str();
  sub->add_option("-o,--output", a->output, "Write to FILE (default: stdout)");
  sub->add_flag("--per-rank", a->perRank, "samples: also every rank's own times");
  sub->add_option("--listen", a->listenPort,
                  "prometheus: serve GET /metrics once on 127.0.0.1:PORT (0: any free port, "
                  "printed on stderr), then exit");
  addDurationOption(sub, "--listen-timeout", a->listenTimeout,
                    "--listen: how long to wait for the scrape, in seconds or with a unit (exit 2 "
                    "past it)");
  runOnParse(sub, action, a, doExport);
}

}  // namespace cb::cli
