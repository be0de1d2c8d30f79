// The points of one sweep, laid out once from the options and the world size. The engine measures
// them in this order, the progress line shows them, the memory check sizes the largest, and the
// option checks run once, when a checked plan is made (SweepPlan::checked) before the run is begun.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/Sweep.h"
#include "core/Collective.h"

namespace cb {

struct PlannedPoint {
  int cycle = 0;
  CollArgs args;       // the count from the requested size, rounded down as nccl-tests does
  uint64_t bytes = 0;  // nccl-tests' S of the point
  const VariantInfo* variant = nullptr;  // as registered; null: the memcpy reference (--reference)
  Placement placement = Placement::kOut;
  bool endsGroup = false;  // the last point of its (cycle, collective, dtype, op) group
};

class SweepPlan {
 public:
  // The layout alone, for a world of `nranks`: no checks (the progress line, the memory estimate
  // and tests).
  SweepPlan(const SweepOptions& o, int nranks);
  // Checks the options against this world (root in range, variants and transport known, ops valid
  // for the dtypes, one size that splits; variants named explicitly are asked whether they can run
  // with this team; throws UsageError or EnvironmentError), then lays out the points. Collective.
  static SweepPlan checked(Team& team, const SweepOptions& o);

  const SweepOptions& options() const { return o_; }
  int nranks() const { return nranks_; }
  const std::vector<uint64_t>& sizes() const { return sizes_; }
  const std::vector<PlannedPoint>& points() const { return points_; }
  // The variants of collective c that run, as registered (selectedVariants).
  const std::vector<const VariantInfo*>& variants(Collective c) const;
  // The largest send or receive side of any point, in bytes: nccl-tests' buffer size (it
  // allocates -e bytes for each side), and the size -R 2 registers its windows at.
  uint64_t largestSide() const { return largestSide_; }

 private:
  SweepOptions o_;
  int nranks_;
  std::vector<uint64_t> sizes_;
  std::vector<std::vector<const VariantInfo*>> variants_;  // per entry of o_.collectives
  std::vector<PlannedPoint> points_;
  uint64_t largestSide_ = 0;
};

}  // namespace cb
