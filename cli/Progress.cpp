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

std::vector<ProgressLine::Planned> ProgressLine::plan(const SweepOptions& o, int nranks) {
  const auto sizes = sweepSizes(o);
  const int iters = o.iterations + o.warmup + o.checkRounds;
  std::vector<Planned> out;
  // The engine's loops: cycle, collective, dtype, op, size, then the reference and each
  // variant with its placements.
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    for (Collective c : o.collectives) {
      std::vector<const VariantInfo*> variants = selectedVariants(o, c);
      if (variants.empty()) continue;
      for (DataType t : o.dtypes) {
        std::vector<RedOp> ops = hasReduction(c) ? o.ops : std::vector<RedOp>{RedOp::kSum};
        for (RedOp op : ops) {
          for (uint64_t requested : sizes) {
            size_t count = countForBytes(c, t, requested, nranks);
            uint64_t bytes = algBytes(CollArgs{c, t, op, 0, count}, nranks);
            std::string head = hasReduction(c)
                                   ? fmt::format("{} {} {} {}", collectiveName(c), dataTypeName(t),
                                                 redOpName(op), formatSize(bytes))
                                   : fmt::format("{} {} {}", collectiveName(c), dataTypeName(t),
                                                 formatSize(bytes));
            double w = weightOf(bytes, iters);
            if (o.reference) out.push_back({head + " memcpy", w});
            for (const auto* v : variants) {
              if (o.outOfPlace) out.push_back({head + " " + v->name + " out", w});
              if (o.inPlace && hasInPlace(c)) out.push_back({head + " " + v->name + " in", w});
            }
          }
        }
      }
    }
  }
  return out;
}

ProgressLine::ProgressLine(const SweepOptions& o, int nranks, bool enabled)
    : enabled_(enabled && stderrIsTerminal()) {
  if (!enabled_) return;
  plan_ = plan(o, nranks);
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
  std::string eta = "ETA ?";
  if (doneWeight_ > 0 && elapsed > 0.5) {
    eta = "ETA " + formatEta(elapsed * (totalWeight_ - doneWeight_) / doneWeight_);
  }
  std::string line = fmt::format("[{}/{}] {} | {} elapsed, {}", done_, plan_.size(),
                                 plan_[done_].text, formatEta(elapsed), eta);
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

}  // namespace cb::cli
