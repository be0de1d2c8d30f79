// The sweep plan is the one layout of a sweep's points: the engine measures exactly its points in
// its order, the progress line shows the same list, the memory estimate sizes only what runs, and
// the options are checked once, when a checked plan is made.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/MemoryFit.h"
#include "bench/Sweep.h"
#include "bench/SweepPlan.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"

namespace cb {
namespace {

SweepOptions mixedSweep() {
  SweepOptions o;
  o.collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kBroadcast};
  o.variants = {"ring", "binomial"};
  o.dtypes = {DataType::kFloat, DataType::kInt32};
  o.ops = {RedOp::kSum, RedOp::kMax};
  o.minBytes = 64;
  o.maxBytes = 1024;
  o.stepFactor = 4;
  o.iterations = 2;
  o.warmup = 0;
  o.checkRounds = 1;
  o.cycles = 2;
  o.reference = true;
  o.timeoutSeconds = 30;
  o.variantOptions.schedule.transport = "local";
  return o;
}

std::string key(std::string_view c, std::string_view t, std::string_view op, uint64_t bytes,
                const std::string& variant, std::string_view p) {
  return fmt::format("{} {} {} {} {} {}", c, t, op, bytes, variant, p);
}

// A planned point's key as its record names it: op "none" where the collective reduces nothing.
std::string key(const PlannedPoint& p, const std::string& variant) {
  const std::string_view op = hasReduction(p.args.coll) ? redOpName(p.args.op) : "none";
  return key(collectiveName(p.args.coll), dataTypeName(p.args.dtype), op, p.bytes, variant,
             placementName(p.placement));
}

TEST(SweepPlan, TheEngineMeasuresThePlansPointsInItsOrder) {
  const SweepOptions o = mixedSweep();
  const SweepPlan plan(o, 3);
  std::vector<std::string> planned;
  int groupEnds = 0;
  for (const auto& p : plan.points()) {
    const std::string variant = p.variant ? p.variant->name + "/local" : "memcpy";
    planned.push_back(key(p, variant));
    groupEnds += p.endsGroup ? 1 : 0;
  }
  // allreduce: 2 dtypes x 2 ops; allgather and broadcast (no reduction): 2 dtypes; two cycles.
  EXPECT_EQ(groupEnds, 2 * (4 + 2 + 2));
  // The reference, then ring out/in (allreduce, allgather) and binomial (broadcast) per size.
  EXPECT_EQ(plan.sizes(), (std::vector<uint64_t>{64, 256, 1024}));
  ASSERT_FALSE(plan.points().empty());

  std::vector<std::string> measured;
  int sinkGroupEnds = 0;
  LocalWorld::run(3, [&](Communicator& comm) {
    SweepSink sink;
    sink.onPoint = [&](const ResultRecord& r) {
      measured.push_back(key(r.collective, r.dtype, r.op, r.sizeBytes, r.variant, r.placement));
      EXPECT_TRUE(r.ok()) << r.variant << ": " << r.message;
      if (r.variant != "memcpy") {
        EXPECT_EQ(r.wrong, 0);
      }
    };
    sink.onGroupEnd = [&] { ++sinkGroupEnds; };
    Team team(comm);
    runSweep(team, SweepPlan::checked(team, o), sink);
  });
  EXPECT_EQ(measured, planned);
  EXPECT_EQ(sinkGroupEnds, groupEnds);
}

TEST(SweepPlan, TheProgressAndMemoryReadOnlyWhatRuns) {
  SweepOptions o;
  o.collectives = {Collective::kAllReduce, Collective::kAllToAll};
  o.variants = {"oneshot"};  // allreduce only: alltoall has no point
  o.maxBytes = 1 << 20;
  const SweepPlan plan(o, 4);
  EXPECT_TRUE(plan.variants(Collective::kAllToAll).empty());
  for (const auto& p : plan.points()) EXPECT_EQ(p.args.coll, Collective::kAllReduce);
  EXPECT_GE(sweepMemoryPerRank(plan).scratch, 3u << 20);  // one-shot gathers every rank's input
  // A collective none of whose variants runs needs no buffers.
  SweepOptions none = o;
  none.collectives = {Collective::kAllToAll};
  EXPECT_TRUE(SweepPlan(none, 4).points().empty());
  EXPECT_EQ(sweepMemoryPerRank(none, 4).perRank(), 0u);
}

TEST(SweepPlan, ACheckedPlanRefusesBadOptionsBeforeAnyPoint) {
  SweepOptions o = mixedSweep();
  o.root = 5;
  LocalWorld::run(2, [&](Communicator& comm) {
    Team team(comm);
    EXPECT_THROW(SweepPlan::checked(team, o), UsageError);
    SweepOptions bad = mixedSweep();
    bad.variants = {"no-such-algorithm"};
    EXPECT_THROW(SweepPlan::checked(team, bad), UsageError);
  });
}

}  // namespace
}  // namespace cb
