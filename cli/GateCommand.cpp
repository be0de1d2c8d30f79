// `collbench gate --baseline ... --candidate ...`: the CI form of compare. Decides pass,
// regression or inconclusive by the rule of results/Compare.h, writes the report as text
// (colour on a terminal), Markdown (pull-request comments), JSON or JUnit XML, and exits
// 0 pass, 1 regression, 2 usage or environment error (including nothing comparable),
// 3 inconclusive (1 with --fail-on-inconclusive).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <tuple>

#include "adapters/CompareSides.h"
#include "adapters/ComparisonReport.h"
#include "cli/Command.h"
#include "cli/CompareFlags.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "results/CpuLoadDetail.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

constexpr int kExitPass = 0, kExitRegression = 1, kExitInconclusive = 3;

struct GateArgs {
  std::string baseline, candidate = "last";
  CompareFlags flags;
  std::string format = "text";
  std::string output;
  bool failOnInconclusive = false;
  bool all = false;
  bool calibrate = false;
  bool candidateGiven = false;
  int lookback = 50;
};

// The lookback window: stored runs of the environment both sides share, finished ok, not on
// either side, not started after the newest run of the comparison, newest first, at most
// `lookback`; and the newest calibration whose runs the window no longer holds. A stored run
// whose CPUs were placed apart differently from every run of both sides (its round trip
// kRoundTripApart beyond theirs, as `load` holds them) measured another machine and is left out,
// as is one whose CPUs moved while it measured (its round trips before and after its sweep
// kRoundTripApart apart); `note` says how many.
History loadHistory(const Store& store, const LoadedRuns& runs, const SidesLoad& load, int lookback,
                    std::string& note) {
  History h;
  if (lookback <= 0 || runs.cand.runs.empty()) return h;
  const std::string fp = runs.cand.runs.front().fingerprint;
  std::set<int64_t> inComparison;
  std::string newest;
  for (const RunSet* side : {&runs.base, &runs.cand}) {
    for (const RunRecord& r : side->runs) {
      if (r.fingerprint != fp || fp.empty()) return h;  // no one environment to look back on
      inComparison.insert(r.id);
      newest = std::max(newest, r.startedAt);
    }
  }
  double lo = -1, hi = -1;  // the sides' round trips, widened by kRoundTripApart
  for (const auto* side : {&load.base, &load.cand}) {
    for (const RunCpuState& r : *side) {
      const double rt = r.roundTripNs;
      if (rt <= 0) continue;
      lo = lo < 0 ? rt : std::min(lo, rt);
      hi = std::max(hi, rt);
    }
  }
  lo /= kRoundTripApart;
  hi *= kRoundTripApart;
  RunFilter filter;
  filter.fingerprint = fp;
  std::vector<RunRecord> stored = store.listRuns(filter);
  std::set<int64_t> window;
  int apart = 0, moved = 0;
  for (const RunRecord& r : stored) {
    if (static_cast<int>(h.runs.runs.size()) >= lookback) break;
    if (r.status != RunStatus::kOk || inComparison.contains(r.id) || r.startedAt > newest) continue;
    const auto [rt, after] = storedRoundTrips(store, r.id);
    if (placedApart(rt, after)) {  // its CPUs moved while it measured: two machines' figures
      ++moved;
      continue;
    }
    if (hi > 0 && rt > 0 && (rt < lo || rt > hi)) {
      ++apart;
      continue;
    }
    window.insert(r.id);
    h.runs.runs.push_back(r);
  }
  if (apart > 0) {
    note = fmt::format(
        "# history: {} stored run(s) left out: their ranks' CPUs were placed apart differently "
        "from the sides' (a cache line's round trip outside {:.0f}-{:.0f} ns)\n",
        apart, lo, hi);
  }
  if (moved > 0) {
    note += fmt::format(
        "# history: {} stored run(s) left out: their ranks' CPUs moved while they measured (round "
        "trips {}x apart before and after the sweep)\n",
        moved, kRoundTripApart);
  }
  for (const RunRecord& r : h.runs.runs) {
    std::vector<ResultRecord> results = store.resultsWithSamples(r.id);
    h.runs.results.insert(h.runs.results.end(), std::make_move_iterator(results.begin()),
                          std::make_move_iterator(results.end()));
  }
  for (const RunRecord& r : stored) {
    std::optional<std::string> doc = store.runDetail(r.id, kCalibrationDetail);
    if (!doc) continue;
    std::optional<LearnedNoise> learned = parseLearnedNoise(*doc);
    if (!learned) continue;
    const bool overlaps =
        std::any_of(learned->runIds.begin(), learned->runIds.end(),
                    [&](int64_t id) { return window.contains(id) || inComparison.contains(id); });
    if (!overlaps) h.learned.push_back(std::move(*learned));
    break;  // the newest calibration only
  }
  return h;
}

constexpr const char* kRule =
    "Decision rule (docs/ARCHITECTURE.md argues it):\n"
    "  1. The unit of replication is the run (or one cycle of a -N sweep): each gives one value\n"
    "     per case, its fastest iteration (--run-value, default min: interference only adds\n"
    "     time). K baseline runs are compared with M candidate runs on the logarithm of\n"
    "     these values (changes are ratios).\n"
    "  2. Whole run: each run's level (its median deviation over the cases) is compared by a\n"
    "     Student t-test, K against M: a change common to every case. Runs a busy machine\n"
    "     disturbed as a whole (modified z-score > 6 within their side) are set aside first\n"
    "     and counted.\n"
    "  3. Confined: each case and each series (a case without its size), net of its own run's\n"
    "     level, is compared the same way: a regression confined to one size or variant stands\n"
    "     out of its run. Holm's method holds every series and case together to alpha/2; the\n"
    "     whole-run test takes the other alpha/2.\n"
    "  4. --threshold is the change the gate must be able to see. A test regresses when\n"
    "     significant AND worse than half the threshold; a case or series also when it is\n"
    "     itself worse than half the threshold, not only against the rest of its run (whose\n"
    "     other cases may have sped up). Not significant with a minimum\n"
    "     detectable change (alpha, --power, these runs) above the threshold is inconclusive,\n"
    "     and names the runs per side that would reach it.\n"
    "  5. History (--lookback N, default 50): stored runs of the same fingerprint, grouped by\n"
    "     label (one build each), add their within-label spread to every test's variance, so 3\n"
    "     runs per side are judged against the machine's known noise (unless the sides' own\n"
    "     runs spread clearly more: an F test at 0.02); a stored run whose ranks' CPUs were\n"
    "     2x nearer or farther apart than every run of the sides' (the round trip `run`\n"
    "     probes before and after its sweep), or whose CPUs moved while it measured (its two\n"
    "     probes 2x apart), measured another machine and is left out. A side's run that moved\n"
    "     so, or that sat 2x from its side's median before and after its sweep, is left out of\n"
    "     its side (a warning names it); sides 2x apart, or a side with a run 2x from its\n"
    "     side's median by its first probe alone (runs of older builds), measured two\n"
    "     machines and are inconclusive. A test whose values fall in two modes (one side's\n"
    "     runs in both while fewer than 8 builds are stored, or the runs of two stored builds\n"
    "     and a quarter of them) is inconclusive unless most runs of each side sit in the same\n"
    "     mode:\n"
    "     'this case has two modes (X and Y GB/s)', or the runs were interleaved and the same\n"
    "     build visits the candidate's mode too rarely for all its runs to land there by\n"
    "     chance (then it is a change). A case flagged through its series or the\n"
    "     whole run says so beside its own p. A point whose run value is over 4x its fastest\n"
    "     iteration, or whose fastest is 4x its side's median for the case (unless most of\n"
    "     its run is), waited for a CPU and is left out; a case left out so in most runs of\n"
    "     a side is not tested.\n"
    "  5c. As measured: with 4 stored builds of a case or more, the case's own values (not\n"
    "     net of its run) are also tested, against the runs' spread plus the spread of the\n"
    "     stored builds' means of the case net of their runs (a state of the machine that\n"
    "     lasts a build), in the Holm family of step 3. A run's level follows the cases that\n"
    "     scatter; the steady cases show a slowdown of every case that the whole-run test left\n"
    "     inconclusive. This test only flags cases, 2 or more the same way, and not while\n"
    "     the whole runs have two modes.\n"
    "  6. Fewer than 4 runs in all decide nothing (inconclusive); imported logs without\n"
    "     samples are then compared on the threshold alone, labelled so. A case that fails in\n"
    "     the candidate only, or a failed candidate run, always regresses. Baselines must have\n"
    "     finished ok; a run on both sides is refused.\n"
    "Sides: a run id, ids (12,13,14), last, label:NAME (every finished run with the label) or\n"
    "label:NAME@last-K (the newest K).\n"
    "--calibrate: with only --baseline (same-build runs, at least 3), prints their run-to-run\n"
    "noise and the runs per side a gate needs to detect --threshold, and stores that noise\n"
    "and the modes it found with the newest run (detail gate-calibration) for later gates.\n"
    "Exit: 0 pass, 1 regression, 2 usage or environment error (also: nothing comparable),\n"
    "3 inconclusive (1 with --fail-on-inconclusive).\n"
    "Example: collbench gate --baseline label:main@last-8 --candidate label:pr@last-8 \\\n"
    "           --sizes 1K-4M --format junit -o gate.xml";

int doCalibrate(const GateArgs& a) {
  CompareOptions options = toCompareOptions(a.flags);
  Store store = Store::open(a.flags.db, false);
  std::string name;
  RunSet runs = loadSide(store, a.baseline, name);
  Calibration cal = calibrate(runs, options, options.threshold);
  const double t = options.threshold * 100;
  auto runsText = [](int n) {
    return n > kRunsNeededCap ? fmt::format("more than {}", kRunsNeededCap) : std::to_string(n);
  };
  fmt::print("# calibration from {}: {} replicates, {} cases in {} series\n", name, cal.replicates,
             cal.cases, cal.series);
  fmt::print("# {}, alpha {:g}, power {:g}%\n", metricName(options.metric), options.alpha,
             options.power * 100);
  fmt::print(
      "whole run: run-to-run noise {:.1f}%: {} runs per side detect a uniform change of "
      "{:g}%\n",
      cal.wholeSdPct, runsText(cal.runsWhole), t);
  if (cal.disturbed > 0) {
    fmt::print(
        "disturbed: {} of {} replicates moved as a whole far beyond that noise (modified z-score "
        "> {:g}); gates set such runs aside, so the count above allows for as many\n",
        cal.disturbed, cal.replicates, kDisturbedZ);
  }
  if (cal.twoGroups) {
    fmt::print(
        "two groups: over a quarter of the runs sit far from the others (a busy machine switching "
        "between modes); the noise above counts them all\n");
  }
  if (cal.twoGroups || cal.disturbed > 0) {
    fmt::print(
        "hint: local-world runs (--np) keep their rank threads on separate cores with --bind auto; "
        "unbound, two threads sharing a core make such slow runs\n");
  }
  if (cal.cases >= 2) {
    fmt::print(
        "one case : noise net of its run {:.1f}% (median case): {} runs per side detect "
        "{:g}% confined to it\n",
        cal.caseSdPct, runsText(cal.runsCaseMedian), t);
    fmt::print("worst    : {:.1f}% ({}): {} runs per side\n", cal.worstCaseSdPct,
               cal.worstCase.toString(), runsText(cal.runsCaseWorst));
  }
  int recommended = std::max({cal.runsWhole, cal.runsCaseMedian, 2});
  fmt::print("recommended: {} runs per side (baseline and candidate) for --threshold {:g}%\n",
             runsText(recommended), t);
  for (const auto& [key, m] : cal.learned.modes) {
    fmt::print(
        "two modes: {} ({:.3g} and {:.3g} {}, {:.0f}% apart net of their runs); pin ranks with "
        "--bind or interleave runs\n",
        key, m.a, m.b, metricUnit(options.metric), std::expm1(m.gap) * 100);
  }
  // Kept with the newest of these runs: later gates of this environment pool this noise even
  // when their lookback window no longer holds the runs.
  int64_t newest = 0;
  std::string newestAt;
  for (const RunRecord& r : runs.runs) {
    if (std::tie(r.startedAt, r.id) > std::tie(newestAt, newest)) {
      newestAt = r.startedAt;
      newest = r.id;
    }
  }
  store.setRunDetail(newest, kCalibrationDetail, learnedNoiseJson(cal.learned));
  fmt::print("stored: the noise and modes above, as detail '{}' of run {}\n", kCalibrationDetail,
             newest);
  return 0;
}

int doGate(const GateArgs& a) {
  if (a.calibrate) {
    if (a.candidateGiven) throw UsageError("--calibrate takes --baseline only (same-build runs)");
    return doCalibrate(a);
  }
  if (a.format != "text" && a.format != "markdown" && a.format != "json" && a.format != "junit") {
    throw UsageError(
        fmt::format("--format '{}' is not one of text, markdown, json, junit", a.format));
  }
  if (a.baseline.empty()) throw UsageError("--baseline is required");
  CompareOptions options = toCompareOptions(a.flags);
  if (a.lookback < 0) throw UsageError("--lookback must not be negative");
  if (!a.output.empty()) checkOutputPath(a.output, "--output");
  Store store = Store::openForReading(a.flags.db);
  LoadedRuns runs = loadRuns(store, a.baseline, a.candidate, true);
  SidesLoad load = sidesLoad(store, runs);
  std::vector<std::string> leftOut;
  const std::vector<std::string> mixed = leaveOutOtherPlacements(runs, load, leftOut);
  for (const std::string& line : leftOut) runs.warnings.push_back(line);
  for (const std::string& line : mixed) runs.warnings.push_back(line);
  std::string placementNote;
  Comparison c = compareRuns(runs.base, runs.cand, options,
                             loadHistory(store, runs, load, a.lookback, placementNote));
  const bool failedCases = std::any_of(c.cases.begin(), c.cases.end(),
                                       [](const CaseComparison& cc) { return cc.failed; });
  std::string moved = placementsDiffer(load);
  if (moved.empty() && !mixed.empty()) {
    // One side measured two machines: its runs do not estimate one build's figures (round 32: a
    // same-build gate whose baseline had a run of each placement regressed by 64%).
    moved = fmt::format(
        "{}: the machine moved during that side's runs, and its figures with it; interleave "
        "the sides' runs",
        mixed.front());
  }
  if (!moved.empty() && c.runProblems.empty() && !failedCases &&
      c.outcome != GateOutcome::kNothingComparable && c.tooFewNote.empty()) {
    // A confounded comparison decides nothing: the machine changed with the build or within a
    // side (seen: a same-build gate at -68.7% whose candidate ran at 220 ns, its baseline at
    // 110). That is also the reason to give when the tests were inconclusive anyway: more runs
    // taken so would not settle it.
    c.outcome = GateOutcome::kInconclusive;
    c.modesNote = moved;
  }

  std::string report;
  bool toTerminal = a.output.empty() && ::isatty(STDOUT_FILENO);
  if (a.format == "text") {
    report = renderText(c, runs, a.all, toTerminal && std::getenv("NO_COLOR") == nullptr);
  } else if (a.format == "markdown") {
    report = renderMarkdown(c, runs, a.all);
  } else if (a.format == "json") {
    report = renderJson(c, runs);
  } else {
    report = renderJunit(c, runs);
  }
  std::string line = fmt::format("gate: {}", summaryLine(c));
  if (a.format == "text") report += sidesLoadText(load) + placementNote;
  if (a.output.empty()) {
    fmt::print("{}", report);
    if (a.format == "text") fmt::print("{}\n", line);
  } else {
    writeOutputFile(a.output, report, "--output");
    fmt::print("{}\n", line);
  }
  std::fflush(stdout);
  switch (c.outcome) {
    case GateOutcome::kPass: return kExitPass;
    case GateOutcome::kRegression: return kExitRegression;
    case GateOutcome::kInconclusive:
      return a.failOnInconclusive ? kExitRegression : kExitInconclusive;
    case GateOutcome::kNothingComparable: break;
  }
  throw EnvironmentError(
      fmt::format("gate: {} vs {}: {}", runs.baseName, runs.candName, summaryLine(c)));
}

}  // namespace

void setupGateCommand(CLI::App* sub, Action& action) {
  auto a = std::make_shared<GateArgs>();
  sub->add_option("--baseline", a->baseline,
                  "Run id, ids (12,13), last, label:NAME (every finished run with that label) or "
                  "label:NAME@last-K (the K newest)")
      ->required();
  auto* cand = sub->add_option("--candidate", a->candidate, "Same forms as --baseline")
                   ->capture_default_str();
  addCompareFlags(*sub, a->flags);
  sub->add_option("--format", a->format, "text, markdown, json or junit")->capture_default_str();
  sub->add_option("-o,--output", a->output,
                  "Write the report to FILE (stdout then gets the one-line outcome)");
  sub->add_flag("--fail-on-inconclusive", a->failOnInconclusive,
                "Exit 1 instead of 3 when the outcome is inconclusive");
  sub->add_flag("--all", a->all, "List every case, not only those that are not 'same'");
  sub->add_flag("--calibrate", a->calibrate,
                "Measure the noise of the --baseline runs (same build) and print the runs per "
                "side a gate needs");
  sub->add_option("--lookback", a->lookback,
                  "Stored runs of the same environment (fingerprint) whose run-to-run noise, "
                  "within each label, joins the test, and whose modes are recognised; 0: only "
                  "the compared runs")
      ->capture_default_str();
  sub->footer(kRule);
  sub->callback([a, cand, &action] {
    a->candidateGiven = cand->count() > 0;
    action = [a] { return doGate(*a); };
  });
}

}  // namespace cb::cli
