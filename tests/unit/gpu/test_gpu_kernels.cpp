// Device tests that exercise the GPU code one GPU can exercise (issue 22, G): on one GPU NCCL's
// one-rank path is a copy and the ring schedule is one copy, so these run the reduction and scale
// kernels of the CUDA executor against the host's reduction (the same functors, core/Reduce.h)
// for every type and every operator the type has, on sizes below one block, across blocks, and
// past the grid (grid-stride loops), and compare every byte; and every hand-written algorithm for
// several ranks through the executor's step code on the one GPU. They need a GPU and skip with
// the no-device line without one; on a GPU they must pass, not skip.
#if defined(COLLBENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/CudaSchedule.h"
#include "collectives/nccl/DeviceReduce.h"
#include "collectives/nccl/GpuBuffers.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/KernelLoops.h"
#include "common/AlgorithmCases.h"
#include "core/Collective.h"
#include "core/Reduce.h"

namespace cb {
namespace {

constexpr RedOp kOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin,
                          RedOp::kAvg, RedOp::kBand, RedOp::kBor, RedOp::kBxor};

// Sizes: one partial block, several blocks, and more elements than the grid has threads.
std::vector<size_t> kernelSizes() {
  return {1, 1000, size_t{kKernelThreads} * kKernelMaxBlocks + 12345};
}

// Rank r's verification pattern (integers that stay exact in every type).
std::vector<std::byte> pattern(DataType t, size_t count, int rank) {
  CollArgs args{Collective::kAllReduce, t, RedOp::kSum, 0, count};
  std::vector<std::byte> out(count * dataTypeSize(t));
  fillInput(args, rank, 2, 11, out.data());
  return out;
}

TEST(GpuDevice, ReductionKernelsEqualTheHostForEveryTypeAndOp) {
  if (auto why = gpuUnavailableReason()) GTEST_SKIP() << *why;
  setThreadDevice(0);
  for (DataType t : allDataTypes()) {
    for (size_t count : kernelSizes()) {
      const size_t bytes = count * dataTypeSize(t);
      auto a = pattern(t, count, 0), b = pattern(t, count, 1);
      DeviceBuffer da(0, bytes), db(0, bytes), dd(0, bytes);
      da.upload(0, a.data(), bytes);
      db.upload(0, b.data(), bytes);
      for (RedOp op : kOps) {
        if (!redOpValidFor(op, t)) continue;
        std::vector<std::byte> want(bytes), got(bytes);
        reduce(t, op, want.data(), a.data(), b.data(), count);
        deviceReduce(t, op, dd.data(), da.data(), db.data(), count, nullptr);
        if (op == RedOp::kAvg) {
          scaleForAvg(t, want.data(), count, 2);
          deviceScale(t, dd.data(), count, 2, nullptr);
        }
        checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        dd.download(0, got.data(), bytes);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), bytes), 0)
            << dataTypeName(t) << " " << redOpName(op) << " " << count << " elements";
      }
    }
  }
}

TEST(GpuDevice, InPlaceReductionAndScaleEqualTheHost) {
  if (auto why = gpuUnavailableReason()) GTEST_SKIP() << *why;
  setThreadDevice(0);
  // The executor reduces into its destination (dst aliases a) and scales an avg by the rank
  // count; 3 and 7 are not powers of two, so the division really rounds.
  for (DataType t : allDataTypes()) {
    const size_t count = 100003;
    const size_t bytes = count * dataTypeSize(t);
    auto a = pattern(t, count, 0), b = pattern(t, count, 1);
    DeviceBuffer da(0, bytes), db(0, bytes);
    for (int divisor : {3, 7}) {
      da.upload(0, a.data(), bytes);
      db.upload(0, b.data(), bytes);
      std::vector<std::byte> want = a, got(bytes);
      reduce(t, RedOp::kSum, want.data(), want.data(), b.data(), count);
      scaleForAvg(t, want.data(), count, divisor);
      deviceReduce(t, RedOp::kSum, da.data(), da.data(), db.data(), count, nullptr);
      deviceScale(t, da.data(), count, divisor, nullptr);
      checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      da.download(0, got.data(), bytes);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), bytes), 0)
          << dataTypeName(t) << " / " << divisor;
    }
  }
}

// Every hand-written algorithm's schedules for 2..5 ranks, run by the executor's own step code
// (enqueueLocalSteps, enqueueRecvReduces, planCudaPhase, staging offsets) on one GPU, the ranks'
// communication as device copies (runSchedulesOnOneDevice), checked element by element: what
// the CUDA executor does for several ranks, where NCCL would need one GPU per rank.
TEST(GpuDevice, CudaExecutorStepsForSeveralRanksOnOneDevice) {
  if (auto why = gpuUnavailableReason()) GTEST_SKIP() << *why;
  setThreadDevice(0);
  int checked = 0;
  test::forEachOneDeviceCase(
      {1, 1000, 65537}, {RedOp::kSum},
      [&](const AlgorithmInfo& algo, int n, const CollArgs& args, const AlgoOptions& opts) {
        const size_t es = dataTypeSize(args.dtype);
        std::vector<Schedule> schedules;
        std::vector<std::unique_ptr<DeviceBuffer>> owned;
        std::vector<DeviceSpans> spans;
        std::vector<char*> staging;
        auto device = [&](size_t elements) {
          owned.push_back(std::make_unique<DeviceBuffer>(0, std::max<size_t>(elements, 1) * es));
          return static_cast<char*>(owned.back()->data());
        };
        for (int r = 0; r < n; ++r) {
          schedules.push_back(algo.build(r, n, args, opts));
          const Schedule& sch = schedules.back();
          std::vector<std::byte> input(sendCount(args, n) * es);
          fillInput(args, r, n, 5, input.data());
          char* send = device(sch.sendCount);
          owned.back()->upload(0, input.data(), input.size());
          spans.push_back({send, device(sch.recvCount), device(sch.scratchCount), es});
          staging.push_back(device(cudaStagingCount(sch)));
        }
        runSchedulesOnOneDevice(schedules, spans, staging, args, nullptr);
        checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        for (int r = 0; r < n; ++r) {
          const size_t rb = recvCount(args, n) * es;
          std::vector<std::byte> expected(rb), got(rb);
          if (!expectedOutput(args, r, n, 5, expected.data())) continue;
          checkCuda(cudaMemcpy(got.data(), spans[r].recv, rb, cudaMemcpyDeviceToHost),
                    "cudaMemcpy");
          EXPECT_EQ(countWrong(args.dtype, got.data(), expected.data(), recvCount(args, n)), 0)
              << algo.name << " " << collectiveName(algo.coll) << " n=" << n
              << " count=" << args.count << " rank " << r;
        }
        ++checked;
      });
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
