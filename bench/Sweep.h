// The measurement engine. Every rank calls runSweep() with the same options; rank 0 gets the
// results through the sink, point by point (so the CLI prints and commits each as it finishes).
//
// Per point (collective x variant x dtype x op x size x placement):
//   allocate and fault in buffers; warm up (-w); time -n iterations with the loop of --timing
//   (bench/TimingLoops.h; default: barrier (outside the timer) -> t0 -> one call -> t1, every
//   rank timing its own call);
//   gather per-rank samples; the iteration time combines ranks (max by default, -a);
//   then -c check rounds with a fresh integer pattern each, #wrong summed over ranks.
// A run-time error of a point makes that point failed (unsupported for an EnvironmentError) on
// every rank and the sweep goes on; a timeout or an interrupt ends the sweep.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/TimingLoops.h"
#include "collectives/Registry.h"
#include "core/Collective.h"
#include "core/Communicator.h"
#include "core/Result.h"
#include "core/Stats.h"

namespace cb {

// How per-rank times of one iteration combine (nccl-tests -a: 0 rank0, 1 avg, 2 min, 3 max).
enum class RankCombine : uint8_t { kRank0 = 0, kAvg = 1, kMin = 2, kMax = 3 };
std::string_view rankCombineName(RankCombine c);

enum class Placement : uint8_t { kOut, kIn };
std::string_view placementName(Placement p);  // "out" | "in"

struct SweepOptions {
  std::vector<Collective> collectives{Collective::kAllReduce, Collective::kAllGather};
  std::vector<std::string> variants;  // empty or {"all"}: every usable variant
  std::vector<DataType> dtypes{DataType::kFloat};
  std::vector<RedOp> ops{RedOp::kSum};
  int root = 0;
  uint64_t minBytes = 8;
  uint64_t maxBytes = 64ull << 20;
  double stepFactor = 2;         // -f
  uint64_t stepBytes = 0;        // -i (overrides -f when > 0)
  int iterations = 20;           // -n
  int warmup = 5;                // -w
  int checkRounds = 1;           // -c (0: no verification)
  int cycles = 1;                // -N: repeat the whole sweep
  double timeoutSeconds = 300;   // -T: deadline for any single blocking wait
  double timeBudgetSeconds = 0;  // adaptive mode: time per point picks the iteration count
  RankCombine combine = RankCombine::kMax;   // -a
  TimingMode timing = TimingMode::kPerCall;  // --timing: whose loop times the calls
  Statistic statistic = Statistic::kMedian;
  bool outOfPlace = true;
  bool inPlace = true;
  VariantOptions variantOptions;
  // The variants to choose from (null: Registry::builtin()); the CLI passes an extended registry
  // when the user asks for NCCL algorithm/protocol plan variants.
  const Registry* registry = nullptr;
  // Also measure, at every size, what plain memcpy of the rank's buffer achieves on every rank at
  // once (variant "memcpy", busbw = aggregate copy bandwidth of all ranks): the hardware
  // reference the collectives can be judged against.
  bool reference = false;
  // Test hook (documented): add this many microseconds to every timed call of variants whose
  // name matches injectDelayVariant ("" = all), to prove that regressions are caught.
  double injectDelayUs = 0;
  std::string injectDelayVariant;
  uint64_t injectDelaySize = 0;  // 0 = every size
  // Or a share of each call's own time (--inject-delay 30%): a slowdown of every size alike.
  double injectDelayFraction = 0;
};

std::vector<uint64_t> sweepSizes(const SweepOptions& o);

// Called on rank 0 only.
struct SweepSink {
  std::function<void(const ResultRecord&)> onPoint;
  // After each (collective, dtype, op) group of sizes completes.
  std::function<void()> onGroupEnd;
};

struct SweepSummary {
  int64_t wrongTotal = 0;
  int points = 0, unsupported = 0, failed = 0;
  bool interrupted = false;
};

// Which variants a sweep runs, the one rule the engine, the progress line, the memory check and
// the option checks share: every variant when `variants` is empty or holds "all", else those
// named; looked up in o.registry, else Registry::builtin().
const Registry& sweepRegistry(const SweepOptions& o);
bool runsEveryVariant(const SweepOptions& o);
bool variantSelected(const SweepOptions& o, std::string_view name);
// The selected variants of collective c in registry order, as registered (before --transport
// moves a hand-written one to its device twin: variantOnTransport).
std::vector<const VariantInfo*> selectedVariants(const SweepOptions& o, Collective c);
// True when every variant asked for by name runs on a GPU (nccl, its plan columns, or the
// hand-written algorithms with --transport cuda): the local world then defaults to one rank per
// visible GPU instead of one per core, since two ranks can't share a GPU. `registry`: the
// sweep's (its NCCL plan columns included).
bool onlyGpuVariants(const SweepOptions& sweep, const Registry& registry);

// The one rule for -f of every sweep of sizes (run's and p2p's, the CLI's check and the
// engine's): a finite factor above 1, or exactly 1 for one size (-b = -e). Throws UsageError.
void checkStepFactor(double factor, uint64_t minBytes, uint64_t maxBytes);
void checkStepFactor(const SweepOptions& s);

class SweepPlan;
// Collective over the team: measures the plan's points in its order (bench/SweepPlan.h; make it
// with SweepPlan::checked, the one check of the options, before the run is begun in the
// database). Variants that can't run here are reported as unsupported points. Transports come
// from the team's cache: a sweep sets each up at most once (on its first point).
SweepSummary runSweep(Team& team, const SweepPlan& plan, const SweepSink& sink);
// The same from the options: checks them (throws UsageError, EnvironmentError) and plans.
SweepSummary runSweep(Team& team, const SweepOptions& o, const SweepSink& sink);

}  // namespace cb
