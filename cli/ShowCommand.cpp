// `collbench show RUN`: one stored run, its header (every field that is set) and its results as
// tables grouped by collective, dtype and op, in nccl-tests units (bytes, us, GB/s); with
// --samples also the per-iteration times, combined and per rank; with --format nccl-tests the
// results as nccl-tests prints them (one table per variant, as `run --format nccl-tests`).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <string>

#include "adapters/PeakJudge.h"
#include "adapters/RunResolution.h"
#include "adapters/TextTable.h"
#include "bench/Report.h"
#include "bench/Sweep.h"
#include "cli/Command.h"
#include "core/Error.h"
#include "core/PeakModel.h"
#include "results/Store.h"
#include "topology/Placement.h"

namespace cb::cli {
namespace {

struct ShowOptions {
  std::string run;
  std::string db = "collbench.db";
  bool samples = false;
  std::string format = "collbench";
};

void printHeader(const RunRecord& r) {
  auto field = [](std::string_view key, const std::string& value) {
    if (!value.empty()) fmt::print("# {:<12}: {}\n", key, value);
  };
  fmt::print("# run {}\n", r.id);
  field("status", std::string(runStatusName(r.status)));
  field("started", r.startedAt);
  field("finished", r.finishedAt);
  field("label", r.label);
  field("source", r.source);
  field("command", r.commandLine);
  field("world",
        r.worldSize > 0 || !r.worldKind.empty()
            ? fmt::format("{}{}{} ranks", r.worldKind, r.worldKind.empty() ? "" : ", ", r.worldSize)
            : "");
  field("hosts", r.hosts);
  field("collbench", r.collbenchVersion);
  field("mpi", r.mpiVersion);
  field("ucx", r.ucxVersion);
  field("cuda", r.cudaVersion);
  field("nccl", r.ncclVersion);
  field("fingerprint", r.fingerprint);
  field("process", r.pid > 0 ? fmt::format("pid {} on {}", r.pid, r.host) : r.host);
  field("environment", r.environmentJson == "{}" ? "" : r.environmentJson);
}

std::string fixed(double v) { return fmt::format("{:.2f}", v); }
// An unknown value (NULL in the store) prints as "-".
std::string fixed(const std::optional<double>& v) { return v ? fixed(*v) : "-"; }
template <typename T>
std::string whole(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "-";
}

std::string joinValues(const double* begin, const double* end) {
  return fmt::format("{:.2f}", fmt::join(begin, end, " "));
}

// Results in the order measured, grouped by (collective, dtype, op) in order of first appearance.
std::vector<std::vector<const ResultRecord*>> groupResults(const std::vector<ResultRecord>& all) {
  std::vector<std::vector<const ResultRecord*>> groups;
  for (const ResultRecord& r : all) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g[0]->collective == r.collective && g[0]->dtype == r.dtype && g[0]->op == r.op;
    });
    if (it == groups.end()) {
      groups.push_back({&r});
    } else {
      it->push_back(&r);
    }
  }
  return groups;
}

void printGroup(const std::vector<const ResultRecord*>& group, bool withSamples) {
  const ResultRecord& first = *group[0];
  std::vector<std::string> statistics;
  bool anyRoot = false;
  for (const ResultRecord* r : group) {
    if (std::find(statistics.begin(), statistics.end(), r->statistic) == statistics.end()) {
      statistics.push_back(r->statistic);
    }
    anyRoot = anyRoot || r->root.has_value();
  }
  fmt::print("#\n# {}  {}  {}   time = {} over iterations\n", first.collective,
             first.dtype.empty() ? "dtype?" : first.dtype, first.op.empty() ? "op?" : first.op,
             fmt::join(statistics, "/"));
  using A = TextTable::Align;
  std::vector<TextTable::Column> columns{
      {"size", A::kRight}, {"count", A::kRight}, {"variant"}, {"place"}};
  if (anyRoot) columns.push_back({"root", A::kRight});
  const bool anyPeak = std::any_of(group.begin(), group.end(),
                                   [](const ResultRecord* r) { return r->peakGBps.has_value(); });
  for (const char* title : {"time(us)", "algbw", "busbw", "#wrong", "iters", "cv"}) {
    columns.push_back({title, A::kRight});
  }
  if (anyPeak) {
    columns.push_back({"peak", A::kRight});
    columns.push_back({"%peak", A::kRight});
  }
  columns.push_back({"note"});
  TextTable table(std::move(columns));
  for (const ResultRecord* r : group) {
    bool ok = r->status == ResultStatus::kOk;
    std::vector<std::string> row{std::to_string(r->sizeBytes), whole(r->count), r->variant,
                                 r->placement};
    if (anyRoot) row.push_back(whole(r->root));
    row.push_back(ok && r->timeKnown ? fixed(r->timeUs) : "-");
    row.push_back(ok ? fixed(r->algbw) : "-");
    row.push_back(ok ? fixed(r->busbw) : "-");
    row.push_back(whole(r->wrong));
    row.push_back(whole(r->iterations));
    row.push_back(ok && r->cv ? fmt::format("{:.1f}%", *r->cv * 100) : "-");
    if (anyPeak) {
      row.push_back(fixed(r->peakGBps));
      // One rank: algbw out of place (core/PeakModel.h, judgedFigure).
      auto figure = r->busbw && r->algbw ? judgedFigure(r->nranks.value_or(0), r->placement == "in",
                                                        *r->algbw, *r->busbw)
                                         : std::nullopt;
      row.push_back(ok && figure && r->peakGBps ? percentOfPeak(*figure, *r->peakGBps) : "-");
    }
    const std::string status(resultStatusName(r->status));
    row.push_back(ok ? "" : r->message.empty() ? status : status + ": " + r->message);
    table.addRow(std::move(row));
  }
  fmt::print("{}", table.render("# "));
  if (!withSamples) return;
  fmt::print("# samples (us per iteration; combined over ranks, then each rank)\n");
  for (const ResultRecord* r : group) {
    if (r->samplesUs.empty() && r->rankSamplesUs.empty()) continue;
    fmt::print("{} {} {}: {}\n", r->sizeBytes, r->variant, r->placement,
               joinValues(r->samplesUs.data(), r->samplesUs.data() + r->samplesUs.size()));
    const int n = r->nranks.value_or(0);
    if (n <= 0 || r->rankSamplesUs.empty()) continue;
    size_t perRank = r->rankSamplesUs.size() / static_cast<size_t>(n);
    for (int rank = 0; rank < n; ++rank) {
      const double* row = r->rankSamplesUs.data() + rank * perRank;
      fmt::print("  rank {}: {}\n", rank, joinValues(row, row + perRank));
    }
  }
}

void printNcclTests(const RunRecord& run, const std::vector<ResultRecord>& results) {
  ReportSet report(stdout, "nccl-tests", "busbw", run.worldSize);
  SweepSummary summary;
  std::vector<std::string> skipped;
  for (const auto& group : groupResults(results)) {
    // The placements this group holds, as stored (an imported sendrecv has in-place points).
    NcclTestsTableOptions placements{false, false, true};
    for (const ResultRecord* r : group)
      (r->placement == "in" ? placements.inPlace : placements.outOfPlace) = true;
    report.setPlacements(placements);
    for (const ResultRecord* r : group) {
      if (!ncclTestsPrintable(*r)) {
        if (std::find(skipped.begin(), skipped.end(), r->collective) == skipped.end()) {
          skipped.push_back(r->collective);
        }
        continue;
      }
      ++summary.points;
      if (r->status == ResultStatus::kUnsupported) ++summary.unsupported;
      if (r->status == ResultStatus::kFailed) ++summary.failed;
      if (r->wrong > 0) summary.wrongTotal += *r->wrong;
      report.add(*r);
    }
    report.endGroup();
  }
  report.finish(summary);
  for (const auto& name : skipped) {
    fmt::print("# {}: not a collective nccl-tests measures (use the default format)\n", name);
  }
}

int doShow(const ShowOptions& o) {
  if (o.format != "collbench" && o.format != "nccl-tests") {
    throw UsageError(fmt::format("--format '{}' is not one of collbench, nccl-tests", o.format));
  }
  Store store = Store::openForReading(o.db);
  int64_t id = resolveRun(store, o.run, o.db);
  std::optional<RunRecord> run = store.findRun(id);
  if (!run) throw UsageError(fmt::format("no run {} in '{}'", id, o.db));
  std::vector<ResultRecord> results = store.results(id, o.samples);
  if (o.format == "nccl-tests") {
    fmt::print("# collbench run {}{}{}\n#\n", run->id, run->label.empty() ? "" : ", label ",
               run->label);
    printNcclTests(*run, results);
    return 0;
  }
  printHeader(*run);
  std::string topology = store.runTopology(id);
  if (!topology.empty()) fmt::print("# topology\n{}", renderRunTopology(topology, "#   "));
  if (results.empty()) {
    fmt::print("#\n# no results\n");
    return 0;
  }
  for (const auto& group : groupResults(results)) printGroup(group, o.samples);
  fmt::print("{}", storedVerdictLines(store, *run));
  return 0;
}

}  // namespace

void setupShowCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<ShowOptions>();
  sub->add_option("RUN", o->run, "Run id (see `collbench runs`), or last")->required();
  addDbOption(sub, o->db);
  sub->add_flag("--samples", o->samples, "Also print every iteration's time, and per rank");
  sub->add_option("--format", o->format,
                  "collbench (grouped tables) or nccl-tests (nccl-tests' own table per variant, "
                  "as `run --format nccl-tests` prints it)")
      ->capture_default_str();
  runOnParse(sub, action, o, doShow);
}

}  // namespace cb::cli
