// `collbench gate --baseline ... --candidate ...`: the CI form of compare. Decides pass,
// regression or inconclusive by the rule of results/Compare.h, writes the report as text
// (colour on a terminal), Markdown (pull-request comments), JSON or JUnit XML, and exits
// 0 pass, 1 regression, 2 usage or environment error (including nothing comparable),
// 3 inconclusive (1 with --fail-on-inconclusive).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "cli/Command.h"
#include "cli/ComparisonReport.h"
#include "core/Error.h"
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
};

constexpr const char* kRule =
    "Decision rule:\n"
    "  1. Each case both runs measured (collective, variant, dtype, op, size, placement, world\n"
    "     size) is compared on its median and by a two-sided Mann-Whitney U test over the\n"
    "     per-iteration samples; p-values are Holm-corrected over all cases.\n"
    "  2. A case regresses when its corrected p < alpha AND its median is worse by more than\n"
    "     the threshold. With label:NAME@last-K the K baseline runs are pooled and the\n"
    "     threshold grows by their own run-to-run spread in that case.\n"
    "  3. A series (a case without its size) regresses when more than half of its tested sizes\n"
    "     regress and its median change is worse than the threshold, both counted beyond the\n"
    "     rest of the run's shift: the median change of the other series, when slower, up to\n"
    "     --drift (a shared machine makes whole runs 5-15% slower or faster). One noisy size\n"
    "     never fails a gate; a regression confined to some variants or sizes still does.\n"
    "  4. The whole run regresses when its median change over all cases is worse than --drift\n"
    "     and most cases regress. A case that fails or computes wrong results in the\n"
    "     candidate only always fails the gate. On a quiet dedicated machine, --drift 0\n"
    "     judges every change at the threshold.\n"
    "  5. Cases too small to reach alpha (e.g. 4 vs 4 iterations) are inconclusive; cases of\n"
    "     runs with different environment fingerprints are not comparable.\n"
    "Exit: 0 pass, 1 regression, 2 usage or environment error (also: nothing comparable),\n"
    "3 inconclusive (1 with --fail-on-inconclusive).\n"
    "Example: collbench gate --baseline label:main@last-5 --candidate last --sizes 1K-4M \\\n"
    "           --format junit --output gate.xml";

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw EnvironmentError(
        fmt::format("--output '{}': cannot write ({})", path, std::strerror(errno)));
  }
  out << text;
  out.close();
  if (!out) throw EnvironmentError(fmt::format("--output '{}': write failed", path));
}

int doGate(const GateArgs& a) {
  if (a.format != "text" && a.format != "markdown" && a.format != "json" && a.format != "junit") {
    throw UsageError(
        fmt::format("--format '{}' is not one of text, markdown, json, junit", a.format));
  }
  if (a.baseline.empty()) throw UsageError("--baseline is required");
  CompareOptions options = toCompareOptions(a.flags);
  Store store = Store::open(a.flags.db, false);
  store.reapDeadRuns();
  LoadedRuns runs = loadRuns(store, a.baseline, a.candidate);
  Comparison c = compareRuns(runs.base, runs.cand, options);

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
  if (a.output.empty()) {
    fmt::print("{}", report);
    if (a.format == "text") fmt::print("{}\n", line);
  } else {
    writeFile(a.output, report);
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

void setupGateCommand(CLI::App& app, Action& action) {
  auto a = std::make_shared<GateArgs>();
  auto* sub = app.add_subcommand(
      "gate",
      "CI gate: fail (exit 1) when the candidate run is significantly and practically slower "
      "than the baseline");
  sub->add_option("--baseline", a->baseline,
                  "Run id, last, label:NAME (newest run with that label) or label:NAME@last-K "
                  "(the K newest, pooled)")
      ->required();
  sub->add_option("--candidate", a->candidate, "Run id or last")->capture_default_str();
  addCompareFlags(*sub, a->flags);
  sub->add_option("--format", a->format, "text, markdown, json or junit")->capture_default_str();
  sub->add_option("--output", a->output,
                  "Write the report to FILE (stdout then gets the one-line outcome)");
  sub->add_flag("--fail-on-inconclusive", a->failOnInconclusive,
                "Exit 1 instead of 3 when the outcome is inconclusive");
  sub->add_flag("--all", a->all, "List every case, not only those that are not 'same'");
  sub->footer(kRule);
  sub->callback([a, &action] { action = [a] { return doGate(*a); }; });
}

}  // namespace cb::cli
