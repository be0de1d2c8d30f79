// Host tests of the defects a first GPU node would hit (issue 22), each with the CUDA or NCCL
// calls counted behind the interface the code uses, so they fail without the fix on a machine
// with no driver:
//   A: a local world of thread ranks needs one GPU per rank: refused up front with the counts;
//   C: selecting a device never switches a thread to device 0 it did not choose (each
//      cudaSetDevice creates that device's context, ~0.5 GB);
//   D: NCCL's run-time refusal of a forced column is remembered: later points of the column are
//      unsupported without a new communicator;
//   F: -R 2 windows are allocated and registered once per run at the largest size and shared by
//      every prepared collective on the communicator;
//   and isNcclRefusal no longer takes any invalid usage on a forced column as a refusal.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/NcclVariantPlan.h"
#include "collectives/nccl/NcclVariants.h"
#include "collectives/nccl/NcclWindows.h"
#include "collectives/transport/LocalWorld.h"

namespace cb {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(GpuFirstContact, LocalWorldNeedsOneGpuPerThreadRank) {
  // 4 thread ranks, one GPU: before the fix every rank got device 0.
  for (int rank = 0; rank < 4; ++rank) {
    auto c = pickDevice(rank, 4, 1);
    EXPECT_EQ(c.device, -1) << rank;
    EXPECT_TRUE(contains(c.reason,
                         "4 ranks in one process need 4 GPUs (one per rank), this host "
                         "has 1 visible"))
        << c.reason;
  }
  // Enough GPUs: rank r takes GPU r, distinct across the world.
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(pickDevice(rank, 4, 8).device, rank);
  // One rank per process (MPI) seeing one GPU: that GPU is its own, whatever its local rank.
  EXPECT_EQ(pickDevice(5, 1, 1).device, 0);
  EXPECT_EQ(pickDevice(0, 1, 1).device, 0);
}

std::mutex setMutex;
std::vector<int> setCalls;
int countingSetDevice(int device) {
  std::lock_guard lock(setMutex);
  setCalls.push_back(device);
  return 0;
}

class CountedSetDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    setCalls.clear();
    previous_ = exchangeSetDeviceForTesting(&countingSetDevice);
  }
  void TearDown() override { exchangeSetDeviceForTesting(previous_); }
  SetDeviceFn previous_ = nullptr;
};

TEST_F(CountedSetDevice, AThreadThatChoseNothingIsNeverSwitchedToDeviceZero) {
  // A verification worker or a destructor on a fresh thread touches the rank's GPU 3 only.
  std::thread([] {
    { ScopedDevice on(3); }
    { ScopedDevice again(3); }  // already current on this thread: no call
    EXPECT_EQ(threadDevice(), 3);
  }).join();
  EXPECT_EQ(setCalls, std::vector<int>{3});
}

TEST_F(CountedSetDevice, ARankThreadSetsItsDeviceOnceAndIsRestoredAfterAnother) {
  std::thread([] {
    setThreadDevice(2);
    setThreadDevice(2);
    for (int i = 0; i < 5; ++i) ScopedDevice on(2);
    { ScopedDevice other(5); }  // back to the rank's device afterwards
    EXPECT_EQ(threadDevice(), 2);
  }).join();
  EXPECT_EQ(setCalls, (std::vector<int>{2, 5, 2}));
}

NcclCallError refusal() {
  // NCCL 2.28.9, src/enqueue.cc, once NCCL_ALGO/NCCL_PROTO are restored after init.
  std::string last =
      "Error : no algorithm/protocol available for function AllReduce with datatype "
      "ncclFloat32. NCCL_ALGO was set to Ring and NCCL_PROTO was set to LL.";
  return NcclCallError(ncclErrorMessage(ncclInternalError, "ncclAllReduce", last),
                       ncclInternalError, last);
}

TEST(GpuFirstContact, ARefusedColumnIsRememberedAndNotRebuiltAtEveryPoint) {
  NcclRefusals::process().clear();
  auto plan = ncclVariantPlan("Ring", "LL");
  ASSERT_EQ(plan.size(), 1u);
  const auto& spec = plan[0];
  std::vector<size_t> created;
  std::mutex m;
  LocalWorld::run(2, [&](Communicator& comm) {
    NcclCommPool pool([](Communicator& c, int device, const NcclEnv& env, Deadline) {
      return std::make_shared<NcclComm>(NcclComm::Placeholder{}, c.rank(), c.size(), device, env);
    });
    int unsupported = 0;
    for (size_t count : {1, 256, 65536, 1 << 20, 1 << 24}) {
      CollArgs args{Collective::kAllReduce, DataType::kFloat, RedOp::kSum, 0, count};
      if (auto why = ncclPlanColumnUnsupported(spec, args, 0, true)) {
        EXPECT_TRUE(contains(*why, "NCCL refused NCCL_ALGO=Ring NCCL_PROTO=LL")) << *why;
        ++unsupported;
        continue;
      }
      pool.acquire(comm, 0, spec.env, Deadline::after(30));
      comm.barrier(Deadline::after(30));  // both ranks looked before either remembers
      auto why = ncclRefusalReason(spec.env, args, 0, refusal());
      ASSERT_TRUE(why);
      EXPECT_EQ(why->rfind("unsupported: NCCL refused", 0), 0u) << *why;
      comm.barrier(Deadline::after(30));
    }
    EXPECT_EQ(unsupported, 4);
    std::lock_guard lock(m);
    created.push_back(pool.created());
  });
  EXPECT_EQ(created, (std::vector<size_t>{1, 1}));
  // Another type of the same column is NCCL's to decide again.
  CollArgs other{Collective::kAllReduce, DataType::kHalf, RedOp::kSum, 0, 256};
  EXPECT_EQ(ncclPlanColumnUnsupported(spec, other, 0, true), std::nullopt);
  NcclRefusals::process().clear();
}

TEST(GpuFirstContact, OnlyNcclsWordsAboutForcedSettingsAreARefusal) {
  CollArgs args{Collective::kAllReduce, DataType::kFloat, RedOp::kSum, 0, 256};
  NcclEnv env{{"NCCL_ALGO", "Ring"}};
  // A bare invalid usage on a forced column is a failure to look into, not "unsupported".
  NcclCallError bare("ncclAllReduce: invalid usage", ncclInvalidUsage, "");
  EXPECT_EQ(ncclRefusalReason(env, args, 0, bare), std::nullopt);
  EXPECT_FALSE(isNcclRefusal(ncclInvalidUsage, "Invalid config blocking attribute value -1"));
  EXPECT_TRUE(isNcclRefusal(ncclInvalidUsage, "Invalid NCCL_ALGO value NVLSTree"));
  EXPECT_TRUE(isNcclRefusal(ncclInvalidArgument, "NCCL_PROTO: unknown protocol LL256"));
  // Unforced calls are never refusals.
  EXPECT_EQ(ncclRefusalReason({}, args, 0, refusal()), std::nullopt);
  NcclRefusals::process().clear();
}

struct WindowCounts {
  int allocations = 0, frees = 0, registrations = 0, deregistrations = 0;
  size_t lastBytes = 0;
};

WindowOps countedOps(WindowCounts* c) {
  static char arena[4][16];
  WindowOps ops;
  ops.allocate = [c](size_t bytes) -> void* {
    c->lastBytes = bytes;
    return arena[c->allocations++ % 4];
  };
  ops.release = [c](void*) { ++c->frees; };
  ops.enroll = [c](void* p, size_t) -> void* {
    ++c->registrations;
    return p;
  };
  ops.withdraw = [c](void*) { ++c->deregistrations; };
  return ops;
}

TEST(GpuFirstContact, WindowsAreRegisteredOncePerRunAtTheLargestSize) {
  WindowCounts c;
  {
    SymmetricWindows windows(countedOps(&c));
    const size_t largest = size_t{1} << 30;
    // A sweep's points, each with a -G checker instance on the same communicator.
    for (size_t bytes = 8; bytes <= largest; bytes *= 4) {
      auto a = windows.ensure(bytes, largest);
      auto b = windows.ensure(bytes, largest);  // the checker
      EXPECT_EQ(a.a, b.a);
      EXPECT_EQ(a.bytes, largest);
    }
    EXPECT_EQ(windows.registrations(), 2u);
  }
  EXPECT_EQ(c.allocations, 2);
  EXPECT_EQ(c.registrations, 2);
  EXPECT_EQ(c.lastBytes, size_t{1} << 30);
  EXPECT_EQ(c.deregistrations, 2);
  EXPECT_EQ(c.frees, 2);
}

TEST(GpuFirstContact, WindowsWithoutAHintGrowOnlyForLargerSizes) {
  WindowCounts c;
  {
    SymmetricWindows windows(countedOps(&c));
    windows.ensure(1024, 0);
    windows.ensure(512, 0);
    windows.ensure(4096, 0);  // regrow: deregister, free, allocate, register
    windows.abandon();        // the communicator failed: no NCCL call on it
  }
  EXPECT_EQ(c.registrations, 4);
  EXPECT_EQ(c.deregistrations, 2);
  EXPECT_EQ(c.frees, 4);
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
