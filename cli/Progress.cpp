#include "cli/Progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/Clock.h"
#include "core/Size.h"

namespace cb::cli {
namespace {

bool stderrIsTerminal() {
  if (!isatty(STDERR_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return !term || std::strcmp(term, "dumb") != 0;
}

// A point costs its fixed overhead plus its bytes (at ~1 GB/s): close enough to weigh the ETA
// toward the large sizes, where the time goes.
double weightOf(uint64_t bytes, int iterations) {
  return (iterations + 5) * (20e-6 + static_cast<double>(bytes) * 1e-9);
}

}  // namespace

std::vector<ProgressLine::Planned> ProgressLine::plan(const SweepPlan& plan) {
  const SweepOptions& o = plan.options();
  const int iters = o.iterations + o.warmup + o.checkRounds;
  std::vector<Planned> out;
  for (const PlannedPoint& p : plan.points()) {
    const CollArgs& a = p.args;
    std::string text =
        hasReduction(a.coll)
            ? fmt::format("{} {} {} {}", collectiveName(a.coll), dataTypeName(a.dtype),
                          redOpName(a.op), formatSize(p.bytes))
            : fmt::format("{} {} {}", collectiveName(a.coll), dataTypeName(a.dtype),
                          formatSize(p.bytes));
    if (!p.variant) {
      text += " memcpy";
    } else {
      text += fmt::format(" {} {}", p.variant->name, placementName(p.placement));
    }
    out.push_back({std::move(text), weightOf(p.bytes, iters)});
  }
  return out;
}

ProgressLine::ProgressLine(const SweepPlan& plan, bool enabled)
    : enabled_(enabled && stderrIsTerminal()) {
  if (!enabled_) return;
  plan_ = ProgressLine::plan(plan);
  budget_ = plan.options().timeBudgetSeconds;
  for (const auto& p : plan_) totalWeight_ += p.weight;
  start_ = nowSeconds();
  draw();
}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

void ProgressLine::pointDone() {
  if (!enabled_) return;
  if (done_ < plan_.size()) doneWeight_ += plan_[done_].weight;
  ++done_;
  draw();
}

void ProgressLine::draw() {
  if (!enabled_ || done_ >= plan_.size()) {
    clear();
    return;
  }
  const double elapsed = nowSeconds() - start_;
  const double remaining = static_cast<double>(plan_.size() - done_);
  // With a budget every point costs about the same: the budget until one is measured, then the
  // points' measured pace. Without one, the points weighed by their size.
  double left = -1;
  if (budget_ > 0) {
    left = done_ > 0 ? elapsed / static_cast<double>(done_) * remaining : remaining * budget_;
  } else if (doneWeight_ > 0 && elapsed > 0.5) {
    left = elapsed * (totalWeight_ - doneWeight_) / doneWeight_;
  }
  std::string line =
      fmt::format("[{}/{}] {} | {} elapsed, {} left", done_, plan_.size(), plan_[done_].text,
                  formatEta(elapsed), left < 0 ? std::string("?") : "about " + formatEta(left));
  std::fputs("\r\033[K", stderr);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

std::string formatEta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<long>(std::lround(seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

double expectedSweepSeconds(const SweepPlan& plan) {
  return static_cast<double>(plan.points().size()) * plan.options().timeBudgetSeconds;
}

std::string expectedSweepLine(const SweepPlan& plan) {
  const double seconds = expectedSweepSeconds(plan);
  if (seconds <= 60) return "";
  return fmt::format("# time  : about {} expected ({} points x --time-budget {:g} s)",
                     formatEta(seconds), plan.points().size(), plan.options().timeBudgetSeconds);
}

}  // namespace cb::cli
