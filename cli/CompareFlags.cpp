#include "cli/CompareFlags.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/Command.h"
#include "core/Error.h"

namespace cb::cli {

void addCompareFlags(CLI::App& sub, CompareFlags& f) {
  addDbOption(&sub, f.db);
  sub.add_option("--metric", f.metric,
                 "busbw (higher is better; one rank has none: its algbw) or time (lower is better)")
      ->capture_default_str();
  sub.add_option("--threshold", f.threshold,
                 "Change the gate must be able to detect (percent); significant changes from half "
                 "of it are flagged")
      ->capture_default_str();
  sub.add_option("--alpha", f.alpha,
                 "Family-wise false-alarm rate of the comparison (whole run, series and cases)")
      ->capture_default_str();
  sub.add_option("--sizes", f.sizes,
                 "Only these sizes: ranges and lists such as 1M-64M, 4K,1M, -64K, 1M-");
  sub.add_option("--run-value", f.runValue,
                 "What stands for a run: min (its fastest iteration: interference only adds "
                 "time, so the steadiest on a shared machine), p10 / p25 (low quantiles), or "
                 "median")
      ->capture_default_str();
  sub.add_option("--power", f.power,
                 "Probability of detecting a change of --threshold that the runs per side must "
                 "reach (below it: inconclusive)")
      ->capture_default_str();
  sub.add_flag("--allow-different-environment", f.allowDifferentEnvironment,
               "Compare runs whose environment fingerprints differ (marked in the output)");
}

CompareOptions toCompareOptions(const CompareFlags& f) {
  CompareOptions o;
  o.metric = parseMetric(f.metric);
  o.threshold = parseThreshold(f.threshold);
  o.alpha = checkAlpha(f.alpha);
  o.sizes = SizeFilter::parse(f.sizes);
  if (f.runValue == "median") {
    o.runQuantile = 0.5;
  } else if (f.runValue == "p25") {
    o.runQuantile = 0.25;
  } else if (f.runValue == "p10") {
    o.runQuantile = 0.1;
  } else if (f.runValue == "min") {
    o.runQuantile = 0;
  } else {
    throw UsageError(
        fmt::format("--run-value '{}' is not one of median, p25, p10, min", f.runValue));
  }
  if (!(f.power >= 0.5 && f.power <= 0.99)) {
    throw UsageError(fmt::format("--power {:g} is not between 0.5 and 0.99", f.power));
  }
  o.power = f.power;
  o.allowDifferentEnvironment = f.allowDifferentEnvironment;
  return o;
}

}  // namespace cb::cli
