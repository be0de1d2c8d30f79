// `collbench compare BASE CAND`: every case both sides measured, side by side: the replicates'
// medians, change, the run-level tests of results/Compare.h and a verdict per case, grouped by
// series. Informational (exit 0); `collbench gate` is the pass/fail form for CI.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "adapters/ComparisonReport.h"
#include "cli/Command.h"
#include "cli/CompareFlags.h"
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
  Store store = Store::openForReading(a.flags.db);
  LoadedRuns runs = loadRuns(store, a.base, a.cand, false);
  Comparison c = compareRuns(runs.base, runs.cand, options);
  bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  fmt::print("{}", renderText(c, runs, !a.onlyChanges, colour));
  fmt::print("# {}\n", summaryLine(c));
  return 0;
}

}  // namespace

void setupCompareCommand(CLI::App* sub, Action& action) {
  auto a = std::make_shared<CompareArgs>();
  sub->add_option("BASE", a->base,
                  "Baseline: run id, ids (12,13), last, label:NAME or label:NAME@last-K")
      ->required();
  sub->add_option("CAND", a->cand, "Candidate: same forms as BASE")->required();
  addCompareFlags(*sub, a->flags);
  sub->add_flag("--only-changes", a->onlyChanges, "Hide the cases whose verdict is 'same'");
  sub->footer(
      "Verdicts: regression/improvement = significant AND beyond the threshold; same = neither, "
      "with a detectable change within the threshold; inconclusive = the runs at hand cannot "
      "detect the threshold (the runs needed are named); not comparable = environment "
      "fingerprints differ or a side failed. The rule is `collbench gate --help`'s.");
  runOnParse(sub, action, a, doCompare);
}

}  // namespace cb::cli
