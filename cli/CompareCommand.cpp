// `collbench compare BASE CAND`: every case both runs measured, side by side: medians of the
// metric, change, Mann-Whitney U p-value (Holm-corrected) and a verdict per case, grouped by
// series. Informational (exit 0); `collbench gate` is the pass/fail form for CI.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/Command.h"
#include "cli/ComparisonReport.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

struct CompareArgs {
  std::string base, cand;
  CompareFlags flags;
  bool onlyChanges = false;
};

int doCompare(const CompareArgs& a) {
  CompareOptions options = toCompareOptions(a.flags);
  Store store = Store::open(a.flags.db, false);
  store.reapDeadRuns();
  LoadedRuns runs = loadRuns(store, a.base, a.cand);
  Comparison c = compareRuns(runs.base, runs.cand, options);
  bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  fmt::print("{}", renderText(c, runs, !a.onlyChanges, colour));
  fmt::print("# {}\n", summaryLine(c));
  return 0;
}

}  // namespace

void setupCompareCommand(CLI::App& app, Action& action) {
  auto a = std::make_shared<CompareArgs>();
  auto* sub = app.add_subcommand(
      "compare", "Compare two runs case by case: medians, change, Mann-Whitney U test, verdict");
  sub->add_option("BASE", a->base, "Baseline: run id, last, label:NAME or label:NAME@last-K")
      ->required();
  sub->add_option("CAND", a->cand, "Candidate: run id or last")->required();
  addCompareFlags(*sub, a->flags);
  sub->add_flag("--only-changes", a->onlyChanges, "Hide the cases whose verdict is 'same'");
  sub->footer(
      "Verdicts: regression/improvement = significant (Holm-corrected p < alpha) AND beyond the "
      "threshold; same = not both; inconclusive = too few samples to ever reach alpha; not "
      "comparable = environment fingerprints differ or a side failed. See `collbench gate "
      "--help` for how cases add up to a pass/fail decision.");
  sub->callback([a, &action] { action = [a] { return doCompare(*a); }; });
}

}  // namespace cb::cli
