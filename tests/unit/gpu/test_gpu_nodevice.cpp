// The GPU path on a machine without a usable GPU (the build machine): every NCCL and CUDA-schedule
// variant reports the one-line reason as "unsupported", and prepare/allocation throw
// EnvironmentError with it. The device tests at the end need GPUs and skip with the reason here.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "bench/Verify.h"
#include "collectives/Registry.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/nccl/CudaSchedule.h"
#include "collectives/nccl/GpuBuffers.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/NcclVariants.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"

namespace cb {
namespace {

CollArgs argsFor(Collective c, size_t count = 1024) {
  CollArgs a;
  a.coll = c;
  a.dtype = DataType::kFloat;
  a.op = RedOp::kSum;
  a.count = count;
  return a;
}

TEST(GpuNoDevice, ReasonMatchesWhatTheRuntimeSays) {
  auto reason = gpuUnavailableReason();
  if (!reason) GTEST_SKIP() << "a CUDA device is present: the no-device path cannot be exercised";
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  cudaGetLastError();
  EXPECT_EQ(reason, gpuUnavailableReasonFor(e, e == cudaSuccess ? n : 0));
  EXPECT_EQ(reason->find('\n'), std::string::npos);
  EXPECT_TRUE(reason->rfind("no usable CUDA device", 0) == 0 ||
              reason->rfind("no CUDA devices", 0) == 0)
      << *reason;
  EXPECT_EQ(gpuUnavailableReason(), reason);  // cached, stable
  try {
    gpuDeviceCount();
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& err) {
    EXPECT_EQ(err.what(), *reason);
  }
}

TEST(GpuNoDevice, EveryGpuVariantIsUnsupportedWithTheReason) {
  auto reason = gpuUnavailableReason();
  if (!reason) GTEST_SKIP() << "a CUDA device is present: the no-device path cannot be exercised";
  Registry r;
  registerNcclVariants(r);
  registerNcclPlanVariants(r, ncclVariantPlan("Ring,NVLS", "all"));
  for (const AlgorithmInfo& algo : algorithms()) {
    if (!r.find(algo.coll, std::string("cuda:") + algo.name)) {
      r.add(makeCudaScheduleVariant(algo, std::string("cuda:") + algo.name));
    }
  }
  ASSERT_GT(r.all().size(), allCollectives().size() * 7);
  LocalWorld::run(2, [&](Communicator& comm) {
    Team team(comm);
    VariantOptions o;
    for (const VariantInfo& v : r.all()) {
      auto args = argsFor(v.coll);
      EXPECT_EQ(v.memory, MemoryKind::kDevice);
      EXPECT_EQ(v.unsupported(team, args, o), reason) << v.name;
      // Even an op NCCL lacks reports the missing GPU first: one reason for the whole run.
      args.dtype = DataType::kInt32;
      args.op = RedOp::kBxor;
      EXPECT_EQ(v.unsupported(team, args, o), reason) << v.name;
    }
    auto choice = chooseDevice(comm);
    EXPECT_EQ(choice.device, -1);
    EXPECT_EQ(choice.reason, *reason);
  });
}

TEST(GpuNoDevice, PrepareAndAllocationThrowEnvironmentError) {
  auto reason = gpuUnavailableReason();
  if (!reason) GTEST_SKIP() << "a CUDA device is present: the no-device path cannot be exercised";
  Registry r;
  registerNcclVariants(r);
  LocalWorld::run(2, [&](Communicator& comm) {
    Team team(comm);
    auto expectReason = [&](auto&& fn, const char* what) {
      try {
        fn();
        ADD_FAILURE() << what << ": expected EnvironmentError";
      } catch (const EnvironmentError& e) {
        EXPECT_EQ(e.what(), *reason) << what;
      }
    };
    for (Collective c : allCollectives()) {
      const VariantInfo* v = r.find(c, "nccl");
      ASSERT_NE(v, nullptr);
      expectReason([&] { v->prepare(team, argsFor(c), {}); }, "prepare");
      expectReason([&] { v->allocator(comm); }, "allocator");
    }
    expectReason(
        [&] {
          prepareNccl(comm, argsFor(Collective::kAllReduce), {}, {{"NCCL_ALGO", "Ring"}});
        },
        "prepareNccl with NCCL_ALGO");
    auto args = argsFor(Collective::kAllReduce, 100);
    expectReason(
        [&] { prepareCudaSchedule(comm, args, ringAllReduce(comm.rank(), comm.size(), args, {})); },
        "prepareCudaSchedule");
    expectReason([&] { makeGpuAllocator(comm, MemoryKind::kDevice); }, "device allocator");
    expectReason([&] { deviceForRank(comm); }, "deviceForRank");
    // Pageable host memory needs no GPU.
    EXPECT_EQ(makeGpuAllocator(comm, MemoryKind::kHost)->allocate(64)->kind(), MemoryKind::kHost);
  });
  // Direct construction reaches the runtime, which reports its own error as a CudaError.
  EXPECT_THROW(DeviceBuffer(0, 64), CudaError);
}

// ---- device tests: these need GPUs and skip with the reason on machines without them ----

int devicesOrSkipReason(std::string& reason) {
  if (auto why = gpuUnavailableReason()) {
    reason = *why;
    return 0;
  }
  return gpuDeviceCount();
}

// Runs `variant` for allreduce on min(devices, 4) ranks with integer data, out of place and in
// place, and checks every element against the verification pattern.
void expectCorrectOnDevices(
    const std::function<std::unique_ptr<PreparedCollective>(Communicator&, const CollArgs&)>&
        prepare,
    Collective coll) {
  std::string reason;
  int devices = devicesOrSkipReason(reason);
  if (devices == 0) GTEST_SKIP() << reason;
  int n = std::min(devices, 4);
  LocalWorld::run(n, [&](Communicator& comm) {
    for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 20}) {
      CollArgs args = argsFor(coll, count);
      args.dtype = DataType::kInt32;
      auto prepared = prepare(comm, args);
      auto alloc = makeGpuAllocator(comm, MemoryKind::kDevice);
      size_t sb = sendCount(args, n) * 4, rb = recvCount(args, n) * 4;
      auto send = alloc->allocate(sb);
      auto recv = alloc->allocate(rb);
      std::vector<std::byte> host(std::max(sb, rb)), expected(rb), got(rb);
      fillInput(args, comm.rank(), n, 7, host.data());
      send->upload(0, host.data(), sb);
      prepared->run(send->data(), recv->data(), Deadline::after(60));
      ASSERT_TRUE(prepared->lastDeviceSeconds().has_value());
      EXPECT_GT(*prepared->lastDeviceSeconds(), 0.0);
      recv->download(0, got.data(), rb);
      if (expectedOutput(args, comm.rank(), n, 7, expected.data())) {
        EXPECT_EQ(countWrong(args.dtype, got.data(), expected.data(), recvCount(args, n)), 0)
            << "count " << count << " rank " << comm.rank();
      }
    }
  });
}

TEST(GpuDevice, NcclAllReduceIsCorrect) {
  expectCorrectOnDevices(
      [](Communicator& comm, const CollArgs& args) { return prepareNccl(comm, args, {}); },
      Collective::kAllReduce);
}

TEST(GpuDevice, NcclAllToAllIsCorrectInAGraph) {
  VariantOptions o;
  o.gpu.graphLaunches = 5;  // out of place, so five calls leave the result of one
  expectCorrectOnDevices(
      [o](Communicator& comm, const CollArgs& args) { return prepareNccl(comm, args, o); },
      Collective::kAllToAll);
}

TEST(GpuDevice, CudaScheduleRingAllReduceIsCorrect) {
  expectCorrectOnDevices(
      [](Communicator& comm, const CollArgs& args) {
        return prepareCudaSchedule(comm, args, ringAllReduce(comm.rank(), comm.size(), args, {}));
      },
      Collective::kAllReduce);
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
