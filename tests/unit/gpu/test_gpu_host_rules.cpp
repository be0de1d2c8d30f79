// Host-side tests of the GPU path's rules, none of which needs a device: device selection, the
// NCCL communicator cache, which plan columns are refused, NCCL's TUNING lines and its version.
// The TUNING lines in tests/unit/data/nccl_2.28_tuning_info.log are composed from NCCL 2.28.9's
// format strings (src/enqueue.cc, src/scheduler/symmetric_sched.cc, src/debug.cc), not captured
// from a GPU.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/Versions.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/NcclTuning.h"
#include "collectives/nccl/NcclVariantPlan.h"
#include "collectives/transport/LocalWorld.h"
#include "common/Lines.h"

namespace cb {
namespace {

TEST(GpuDeviceChoice, OneVisibleDevicePerRankIsDeviceZero) {
  // Slurm --gpus-per-task=1: every rank sees its own GPU as device 0.
  for (int local : {0, 1, 7}) EXPECT_EQ(pickDevice(local, 1, 1).device, 0) << local;
  // All GPUs visible: the local rank's index.
  EXPECT_EQ(pickDevice(0, 1, 8).device, 0);
  EXPECT_EQ(pickDevice(5, 1, 8).device, 5);
  auto bad = pickDevice(3, 1, 2);
  EXPECT_EQ(bad.device, -1);
  EXPECT_NE(bad.reason.find("local rank 3 needs GPU 3, but only 2"), std::string::npos)
      << bad.reason;
  EXPECT_EQ(pickDevice(0, 1, 0).device, -1);
}

// A sweep asks the pool for every NCCL variant at every size: each distinct setting must be
// initialized once, not once per point.
TEST(NcclCommPoolCache, CountsOneInitPerSettingAcrossASweep) {
  std::mutex m;
  std::vector<size_t> created;
  LocalWorld::run(2, [&](Communicator& comm) {
    NcclCommPool pool([](Communicator& c, int device, const NcclEnv& env, Deadline) {
      return std::make_shared<NcclComm>(NcclComm::Placeholder{}, c.rank(), c.size(), device, env);
    });
    auto plan = ncclVariantPlan("Ring,Tree,NVLS", "LL,LL128,Simple");  // 9 columns
    ASSERT_EQ(plan.size(), 9u);
    for (int size = 0; size < 6; ++size) {
      pool.acquire(comm, 0, {}, Deadline::after(30));  // the "nccl" column
      for (const auto& spec : plan) pool.acquire(comm, 0, spec.env, Deadline::after(30));
    }
    std::lock_guard lock(m);
    created.push_back(pool.created());
  });
  EXPECT_EQ(created, (std::vector<size_t>{10, 10}));
}

TEST(NcclCommPoolCache, EvictsTheLeastRecentlyUsedBeyondItsCapacity) {
  LocalWorld::run(2, [&](Communicator& comm) {
    NcclCommPool pool([](Communicator& c, int device, const NcclEnv& env, Deadline) {
      return std::make_shared<NcclComm>(NcclComm::Placeholder{}, c.rank(), c.size(), device, env);
    });
    const size_t n = NcclCommPool::kMaxEntries + 1;
    auto env = [](size_t i) { return NcclEnv{{"NCCL_TEST_SETTING", std::to_string(i)}}; };
    for (size_t i = 0; i < n; ++i) pool.acquire(comm, 0, env(i), Deadline::after(30));
    EXPECT_EQ(pool.size(), NcclCommPool::kMaxEntries);
    EXPECT_EQ(pool.created(), n);
    pool.acquire(comm, 0, env(n - 1), Deadline::after(30));  // cached
    EXPECT_EQ(pool.created(), n);
    pool.acquire(comm, 0, env(0), Deadline::after(30));  // was evicted
    EXPECT_EQ(pool.created(), n + 1);
  });
}

TEST(NcclPlan, ProtocolAloneLeavesTheAlgorithmToNccl) {
  auto plan = ncclVariantPlan("", "LL");
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].name, "nccl:auto/LL");
  EXPECT_EQ(ncclEnvText(plan[0].env), "NCCL_PROTO=LL");
}

TEST(NcclPlan, ColumnsThatWouldRepeatAnotherAreRefused) {
  auto ring = ncclVariantPlan("Ring", "LL")[0];
  auto pat = ncclVariantPlan("PAT", "")[0];
  auto nvlsTree = ncclVariantPlan("NVLSTree", "")[0];
  using enum Collective;
  // Point-to-point: NCCL_ALGO/NCCL_PROTO are ignored.
  for (Collective c : {kAllToAll, kSendRecv}) {
    auto why = ncclPlanRefusal(ring, c, DataType::kFloat, RedOp::kSum, 0, false);
    ASSERT_TRUE(why) << collectiveName(c);
    EXPECT_NE(why->find("point-to-point"), std::string::npos) << *why;
  }
  auto tree = ncclVariantPlan("Tree", "")[0];
  auto nvlsLL = ncclVariantPlan("NVLS", "LL")[0];
  auto nvls = ncclVariantPlan("NVLS", "Simple")[0];
  using enum DataType;
  struct Case {
    const NcclVariantSpec& spec;
    Collective coll;
    DataType dtype;
    RedOp op;
    int registration;  // -R
    bool oneHost;
    bool refused;
  };
  const Case cases[] = {
      // -R 2: symmetric kernels where NCCL 2.28 has them.
      {ring, kAllReduce, kHalf, RedOp::kSum, 2, false, true},
      {ring, kAllGather, kInt32, RedOp::kSum, 2, false, true},
      {ring, kReduceScatter, kBFloat16, RedOp::kSum, 2, false, true},
      {ring, kAllReduce, kDouble, RedOp::kSum, 2, false, false},
      {ring, kAllReduce, kFloat, RedOp::kMax, 2, false, false},
      {ring, kBroadcast, kFloat, RedOp::kSum, 2, false, false},
      {ring, kAllReduce, kFloat, RedOp::kSum, 1, false, false},
      // NCCL 2.28's matrix.
      {tree, kBroadcast, kFloat, RedOp::kSum, 0, false, true},
      {tree, kAllGather, kFloat, RedOp::kSum, 0, false, true},
      {tree, kAllReduce, kFloat, RedOp::kSum, 0, false, false},
      {pat, kAllReduce, kFloat, RedOp::kSum, 0, false, true},
      {pat, kAllGather, kFloat, RedOp::kSum, 0, false, false},
      {nvlsLL, kAllReduce, kFloat, RedOp::kSum, 0, false, true},
      {nvls, kAllReduce, kFloat, RedOp::kSum, 0, false, false},
      // Multi-node algorithms on one host.
      {pat, kAllGather, kFloat, RedOp::kSum, 0, true, true},
      {nvlsTree, kAllReduce, kFloat, RedOp::kSum, 0, true, true},
      {nvlsTree, kAllReduce, kFloat, RedOp::kSum, 0, false, false},
      {ring, kAllReduce, kFloat, RedOp::kSum, 0, true, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ncclPlanRefusal(c.spec, c.coll, c.dtype, c.op, c.registration, c.oneHost).has_value(),
              c.refused)
        << c.spec.name << " " << collectiveName(c.coll) << " " << dataTypeName(c.dtype) << " "
        << redOpName(c.op) << " -R " << c.registration << (c.oneHost ? " one host" : "");
  }
}

std::vector<std::string> recordedTuningLines() {
  return test::readLines(std::string(CB_SOURCE_DIR) + "/tests/unit/data/nccl_2.28_tuning_info.log");
}

TEST(NcclTuning, ParsesNccl228Lines) {
  auto lines = recordedTuningLines();
  ASSERT_EQ(lines.size(), 9u);
  auto ring = parseNcclTuningLine(lines[2]);
  ASSERT_TRUE(ring);
  EXPECT_EQ(ring->func, "AllReduce");
  EXPECT_EQ(ring->bytes, 1048576u);
  EXPECT_EQ(ring->algo, "Ring");
  EXPECT_EQ(ring->proto, "LL128");
  auto sym = parseNcclTuningLine(lines[5]);
  ASSERT_TRUE(sym);
  EXPECT_EQ(sym->func, "AllReduce");
  EXPECT_EQ(sym->bytes, 1024u);
  EXPECT_EQ(sym->kernel, "AllReduce_AGxLL_R");
  EXPECT_FALSE(parseNcclTuningLine(lines[0]));
  EXPECT_FALSE(parseNcclTuningLine(lines[8]));
  EXPECT_FALSE(parseNcclTuningLine("AllReduce: 12 Bytes -> Algo Ring proto LL"));  // no prefix
}

TEST(NcclTuning, ChoicePerPointAndTheForcedSettingChecked) {
  auto lines = recordedTuningLines();
  using enum Collective;
  EXPECT_EQ(ncclChoiceFor(lines, kAllReduce, 1048576), "Ring/LL128");
  EXPECT_EQ(ncclChoiceFor(lines, kAllGather, 1048576), "Ring/Simple");
  EXPECT_EQ(ncclChoiceFor(lines, kAllReduce, 1024), "symmetric kernel AllReduce_AGxLL_R");
  EXPECT_EQ(ncclChoiceFor(lines, kReduceScatter, 65536), "Ring/LL, Tree/LL");
  EXPECT_EQ(ncclChoiceFor(lines, kAllReduce, 8), "");
  EXPECT_EQ(ncclChoiceFor(lines, kAllToAll, 1048576), "");

  EXPECT_EQ(ncclChoiceNote("Ring/LL128", "", ""), "NCCL ran Ring/LL128");
  EXPECT_EQ(ncclChoiceNote("Ring/LL128", "Ring", ""), "NCCL ran Ring/LL128");
  EXPECT_EQ(ncclChoiceNote("Ring/LL128", "Tree", "LL"),
            "NCCL ran Ring/LL128; NOT the forced Tree/LL");
  EXPECT_EQ(ncclChoiceNote("Ring/LL128", "", "LL"), "NCCL ran Ring/LL128; NOT the forced auto/LL");
  EXPECT_EQ(ncclChoiceNote("Ring/LL, Tree/LL", "Ring", ""),
            "NCCL ran Ring/LL, Tree/LL; NOT the forced Ring/auto");
  EXPECT_EQ(ncclChoiceNote("symmetric kernel AllReduce_AGxLL_R", "Ring", ""),
            "NCCL ran symmetric kernel AllReduce_AGxLL_R; NOT the forced Ring/auto");
  EXPECT_EQ(ncclChoiceNote("", "Ring", ""), "");
}

TEST(NcclVersion, RuntimeCodesFormatAsReleases) {
  EXPECT_EQ(ncclVersionText(22809), "2.28.9");
  EXPECT_EQ(ncclVersionText(21903), "2.19.3");
  EXPECT_EQ(ncclVersionText(2708), "2.7.8");
  // The build links NCCL 2.28.9: the version recorded is the loaded library's.
  EXPECT_FALSE(libraryVersions().nccl.empty());
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
