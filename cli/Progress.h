// The progress line of `collbench run` on a terminal: points done of the planned total, the case
// being measured now, elapsed time and the time left, redrawn in place on stderr after every
// point.
// Nothing at all is written when stderr is not a terminal (logs and pipes stay clean). Whatever
// else prints calls clear() first, so the line never mixes with the tables.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/SweepPlan.h"

namespace cb::cli {

class ProgressLine {
 public:
  // `enabled`: this rank prints (rank 0); the line still shows only on a terminal.
  ProgressLine(const SweepPlan& plan, bool enabled);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void clear();      // erases the line, if shown
  void pointDone();  // one more point finished: redraw with the next case
  size_t planned() const { return plan_.size(); }

  // The plan's points as shown (exposed for tests).
  struct Planned {
    std::string text;  // "allreduce float sum 1 MiB ring out"
    double weight;     // relative cost: grows with the size
  };
  static std::vector<Planned> plan(const SweepPlan& plan);

 private:
  void draw();

  std::vector<Planned> plan_;
  bool enabled_;
  bool shown_ = false;
  size_t done_ = 0;
  double doneWeight_ = 0, totalWeight_ = 0;
  double start_ = 0;
  double budget_ = 0;  // --time-budget per point, 0 when none
};

// "42 s", "3m05s", "1h02m".
std::string formatEta(double seconds);

// What a sweep with --time-budget will take before it starts: points x budget (0 without a
// budget, whose iteration counts say nothing of the time before the first point is measured).
double expectedSweepSeconds(const SweepPlan& plan);
// The header line stating it when it is more than a minute, else "".
std::string expectedSweepLine(const SweepPlan& plan);

}  // namespace cb::cli
