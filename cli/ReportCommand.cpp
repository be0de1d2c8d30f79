// `collbench report RUN... -o report.html [--compare BASE CAND] [--history-label L]`: one
// self-contained HTML page (works offline) with busbw and latency charts per run, two runs
// compared, and a history trend over the runs carrying a label. The page itself is built by
// results/HtmlReport; this file picks the runs from the database and writes the file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "adapters/ComparisonReport.h"
#include "adapters/PeakJudge.h"
#include "adapters/RunResolution.h"
#include "cli/Command.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "results/HtmlReport.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> runs;
  std::string db = "collbench.db";
  std::string output = "report.html";
  std::vector<std::string> compare;  // BASE CAND
  std::string historyLabel;
  std::string historySize;
  int historyLast = 30;
  std::string title = "collbench report";
};

ReportRun loadRun(const Store& store, int64_t id, const std::string& db) {
  std::optional<RunRecord> run = store.findRun(id);
  if (!run) throw UsageError(fmt::format("no run {} in '{}'", id, db));
  run->topologyJson = store.runTopology(id);
  return {*run, store.results(id, false), store.runDetail(id, "proxy"),
          store.runDetail(id, "replay"), storedVerdictLines(store, *run)};
}

int64_t newestRun(const RunSet& side) {
  return std::max_element(side.runs.begin(), side.runs.end(),
                          [](const auto& a, const auto& b) { return a.id < b.id; })
      ->id;
}

// The report's own command line for the page footer, rebuilt from the parsed options.
std::string commandText(const ReportOptions& o) {
  std::string text = fmt::format("collbench report {}", fmt::join(o.runs, " "));
  text += fmt::format(" --db {} -o {}", o.db, o.output);
  if (!o.compare.empty()) text += fmt::format(" --compare {}", fmt::join(o.compare, " "));
  if (o.title != ReportOptions{}.title) text += fmt::format(" --title {}", o.title);
  if (!o.historyLabel.empty()) {
    text += fmt::format(" --history-label {}", o.historyLabel);
    if (!o.historySize.empty()) text += fmt::format(" --history-size {}", o.historySize);
    text += fmt::format(" --history-last {}", o.historyLast);
  }
  return text;
}

int doReport(const ReportOptions& o) {
  if (o.runs.empty() && o.compare.empty() && o.historyLabel.empty()) {
    throw UsageError("report needs RUN ids, --compare BASE CAND or --history-label LABEL");
  }
  if (o.historyLast < 1)
    throw UsageError(fmt::format("--history-last {} is not >= 1", o.historyLast));
  if (o.historyLabel.empty() && !o.historySize.empty()) {
    throw UsageError("--history-size needs --history-label");
  }
  std::optional<uint64_t> historySize;
  if (!o.historySize.empty()) historySize = parseSize(o.historySize);
  if (historySize == uint64_t{0}) throw UsageError("--history-size 0: no point has size 0 B");

  checkOutputPath(o.output, "-o");
  Store store = Store::openForReading(o.db);
  HtmlReportInput input;
  input.title = o.title;
  input.generator = std::string("collbench ") + COLLBENCH_VERSION;
  input.generatedAt = utcTimestamp();
  input.commandLine = commandText(o);
  std::vector<int64_t> seen;
  for (const std::string& text : o.runs) {
    int64_t id = resolveRun(store, text, o.db);
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    seen.push_back(id);
    input.runs.push_back(loadRun(store, id, o.db));
  }
  if (!o.compare.empty()) {
    // The sides take compare's forms (ids, label:NAME@last-K); the page draws the newest run of
    // each side and colours only what compare's run-level test decides over all of them.
    LoadedRuns sides = loadRuns(store, o.compare[0], o.compare[1], false);
    Comparison c = compareRuns(sides.base, sides.cand, CompareOptions{});
    input.compare.emplace(loadRun(store, newestRun(sides.base), o.db),
                          loadRun(store, newestRun(sides.cand), o.db));
    HtmlReportInput::Verdicts verdicts;
    for (const CaseComparison& cc : c.cases) verdicts.cases.emplace(cc.key, cc);
    verdicts.sides = fmt::format("{} vs {}", sides.baseName, sides.candName);
    verdicts.summary = summaryLine(c);
    input.verdicts = std::move(verdicts);
  }
  if (!o.historyLabel.empty()) {
    RunFilter filter;
    filter.label = o.historyLabel;
    filter.limit = o.historyLast;
    std::vector<RunRecord> runs = store.listRuns(filter);  // newest first
    HtmlReportInput::History history;
    history.label = o.historyLabel;
    history.sizeBytes = historySize;
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      history.runs.push_back({*it, store.results(it->id, false)});
    }
    input.history = std::move(history);
  }
  writeOutputFile(o.output, renderHtmlReport(input), "-o");
  size_t charts = input.runs.size();
  fmt::print("wrote {} ({} run{}{}{})\n", o.output, charts, charts == 1 ? "" : "s",
             input.compare ? ", a comparison" : "",
             input.history ? fmt::format(", history of {} run{}", input.history->runs.size(),
                                         input.history->runs.size() == 1 ? "" : "s")
                           : "");
  return 0;
}

}  // namespace

void setupReportCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<ReportOptions>();
  sub->add_option("RUN", o->runs, "Run ids (see `collbench runs`), or last");
  addDbOption(sub, o->db);
  sub->add_option("-o,--output", o->output, "HTML file to write")->capture_default_str();
  sub->add_option("--compare", o->compare,
                  "Overlay two sides (run ids or label:NAME[@last-K], as compare) and tabulate "
                  "the changes; only what compare's run-level test decides is coloured")
      ->expected(2)
      ->type_name("RUN");
  sub->add_option("--history-label", o->historyLabel,
                  "Add the trend of busbw over the runs carrying this label");
  sub->add_option("--history-size", o->historySize,
                  "Size of the trend (e.g. 1M); default: each variant's largest size");
  sub->add_option("--history-last", o->historyLast, "Newest runs of the label to show")
      ->capture_default_str();
  sub->add_option("--title", o->title, "Page title")->capture_default_str();
  runOnParse(sub, action, o, doReport);
}

}  // namespace cb::cli
