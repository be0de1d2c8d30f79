// Host-side logic of the GPU path: the kernels' shared element loops (the same code the GPU runs)
// against the host reductions, the CUDA executor's phase plans and schedule checks on every
// algorithm, the blocking-wait watchdog, scoped NCCL environment settings.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/nccl/CudaSchedule.h"
#include "collectives/nccl/KernelLoops.h"
#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/Watchdog.h"
#include "common/AlgorithmCases.h"
#include "core/Error.h"
#include "core/Reduce.h"

namespace cb {
namespace {

// Runs reduceStrided as a grid of `threads` threads would, one thread after the other.
template <class T, class Fn>
void gridReduce(T* dst, const T* a, const T* b, size_t n, size_t threads, Fn fn) {
  for (size_t t = 0; t < threads; ++t) reduceStrided(dst, a, b, n, t, threads, fn);
}

template <class T>
std::vector<T> pattern(size_t n, int salt) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    double x = static_cast<double>((i * 7 + salt * 13) % 23) - 11;  // small integers, some negative
    if constexpr (std::is_same_v<T, Half>) {
      v[i] = floatToHalf(static_cast<float>(x));
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      v[i] = floatToBf16(static_cast<float>(x));
    } else {
      v[i] = static_cast<T>(x);
    }
  }
  return v;
}

template <class T, class Fn>
void expectGridMatchesHost(DataType t, RedOp op, Fn fn) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{256}, size_t{1000}}) {
    for (size_t threads : {size_t{1}, size_t{3}, size_t{256}, size_t{4096}}) {
      auto a = pattern<T>(n, 1), b = pattern<T>(n, 2);
      std::vector<T> device(n), host(n);
      gridReduce(device.data(), a.data(), b.data(), n, threads, fn);
      reduce(t, op, host.data(), a.data(), b.data(), n);
      EXPECT_EQ(std::memcmp(device.data(), host.data(), n * sizeof(T)), 0)
          << dataTypeName(t) << " " << redOpName(op) << " n=" << n << " threads=" << threads;
    }
  }
}

TEST(GpuKernelLoops, GridStrideReductionsEqualTheHostReductions) {
  expectGridMatchesHost<float>(DataType::kFloat, RedOp::kSum, SumFn<float>{});
  expectGridMatchesHost<Half>(DataType::kHalf, RedOp::kSum, SumFn<Half>{});
  expectGridMatchesHost<BFloat16>(DataType::kBFloat16, RedOp::kMax, MaxFn<BFloat16>{});
  expectGridMatchesHost<int8_t>(DataType::kInt8, RedOp::kProd, ProdFn<int8_t>{});
  expectGridMatchesHost<uint8_t>(DataType::kUint8, RedOp::kSum, SumFn<uint8_t>{});
  expectGridMatchesHost<int64_t>(DataType::kInt64, RedOp::kMin, MinFn<int64_t>{});
  expectGridMatchesHost<uint32_t>(DataType::kUint32, RedOp::kBxor, BxorFn<uint32_t>{});
  expectGridMatchesHost<double>(DataType::kDouble, RedOp::kProd, ProdFn<double>{});
}

TEST(GpuKernelLoops, EveryElementIsVisitedExactlyOnce) {
  for (size_t n : {size_t{1}, size_t{255}, size_t{257}, size_t{1} << 20, (size_t{1} << 20) + 3}) {
    size_t threads = size_t{kernelBlocks(n)} * kKernelThreads;
    std::vector<uint32_t> visits(n, 0), ones(n, 1);
    gridReduce(visits.data(), visits.data(), ones.data(), n, threads, SumFn<uint32_t>{});
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(visits[i], 1u) << "n=" << n << " i=" << i;
  }
  EXPECT_EQ(kernelBlocks(0), 1u);
  EXPECT_EQ(kernelBlocks(256), 1u);
  EXPECT_EQ(kernelBlocks(257), 2u);
  EXPECT_EQ(kernelBlocks(size_t{1} << 40), kKernelMaxBlocks);
}

TEST(GpuKernelLoops, ScaleEqualsTheHostAvgStep) {
  for (int divisor : {1, 3, 8}) {
    auto i32 = pattern<int32_t>(1000, 5), hostI32 = i32;
    for (size_t t = 0; t < 7; ++t) scaleStrided(i32.data(), i32.size(), divisor, t, 7);
    scaleForAvg(DataType::kInt32, hostI32.data(), hostI32.size(), divisor);
    EXPECT_EQ(i32, hostI32);
    auto h = pattern<Half>(1000, 5), hostH = h;
    for (size_t t = 0; t < 7; ++t) scaleStrided(h.data(), h.size(), divisor, t, 7);
    scaleForAvg(DataType::kHalf, hostH.data(), hostH.size(), divisor);
    EXPECT_EQ(std::memcmp(h.data(), hostH.data(), h.size() * sizeof(Half)), 0);
  }
}

TEST(CudaSchedulePlan, SplitsAPhaseTheWayTheExecutorRunsIt) {
  Phase p;
  p.steps = {copyStep({BufferRef::kSend, 0, 4}, {BufferRef::kRecv, 0, 4}),
             sendStep(1, {BufferRef::kRecv, 0, 4}),
             recvReduceStep(1, {BufferRef::kRecv, 4, 5}, {BufferRef::kRecv, 4, 5}),
             recvStep(2, {BufferRef::kScratch, 0, 2}),
             reduceStep({BufferRef::kScratch, 0, 2}, {BufferRef::kRecv, 9, 2}),
             recvReduceStep(3, {BufferRef::kSend, 0, 3}, {BufferRef::kRecv, 11, 3}),
             scaleStep({BufferRef::kRecv, 0, 14})};
  auto plan = planCudaPhase(p);
  ASSERT_EQ(plan.local.size(), 3u);
  EXPECT_EQ(plan.local[0].kind, StepKind::kCopy);
  EXPECT_EQ(plan.local[1].kind, StepKind::kReduce);
  EXPECT_EQ(plan.local[2].kind, StepKind::kScale);
  ASSERT_EQ(plan.sends.size(), 1u);
  EXPECT_EQ(plan.sends[0].peer, 1);
  ASSERT_EQ(plan.receives.size(), 3u);
  EXPECT_EQ(plan.receives[0].step.peer, 1);
  EXPECT_EQ(plan.receives[0].stagingOffset, 0u);
  EXPECT_EQ(plan.receives[1].step.kind, StepKind::kRecv);
  EXPECT_EQ(plan.receives[2].step.peer, 3);
  EXPECT_EQ(plan.receives[2].stagingOffset, 5u);  // after the first recv-reduce's 5 elements
  EXPECT_EQ(plan.stagingCount, 8u);
}

TEST(CudaSchedulePlan, EveryAlgorithmPassesTheDeviceChecks) {
  int checked = 0;
  for (const AlgorithmInfo& algo : algorithms()) {
    for (int n = 1; n <= 9; ++n) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{13}, size_t{1000}}) {
        CollArgs args;
        args.coll = algo.coll;
        args.count = count;
        args.root = n > 2 ? 2 : 0;
        AlgoOptions opts;
        if (algo.unsupported && algo.unsupported(n, args, opts)) continue;
        for (int rank = 0; rank < n; ++rank) {
          Schedule s = algo.build(rank, n, args, opts);
          EXPECT_NO_THROW(checkScheduleForDevice(s, args, n))
              << algo.name << " n=" << n << " count=" << count << " rank=" << rank;
          // Staging covers the largest phase's recv-reduce traffic.
          size_t most = 0;
          for (const auto& phase : s.phases) {
            size_t sum = 0;
            for (const auto& st : phase.steps) {
              if (st.kind == StepKind::kRecvReduce) sum += st.dst.count;
            }
            most = std::max(most, sum);
          }
          EXPECT_EQ(cudaStagingCount(s), most) << algo.name;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(CudaSchedulePlan, BrokenSchedulesAreRejected) {
  CollArgs args;
  args.count = 10;
  Schedule s;
  s.sendCount = s.recvCount = 10;
  s.phases.push_back({{sendStep(1, {BufferRef::kRecv, 8, 4})}});  // runs past the end
  EXPECT_THROW(checkScheduleForDevice(s, args, 2), InternalError);
  s.phases = {{{sendStep(2, {BufferRef::kRecv, 0, 4})}}};  // peer 2 of 2 ranks
  EXPECT_THROW(checkScheduleForDevice(s, args, 2), InternalError);
  s.phases = {{{copyStep({BufferRef::kSend, 0, 4}, {BufferRef::kRecv, 0, 3})}}};
  EXPECT_THROW(checkScheduleForDevice(s, args, 2), InternalError);
  s.phases = {{{copyStep({BufferRef::kScratch, 0, 1}, {BufferRef::kRecv, 0, 1})}}};  // no scratch
  EXPECT_THROW(checkScheduleForDevice(s, args, 2), InternalError);
  s.phases.clear();
  s.recvCount = 5;  // smaller than the collective's buffer
  EXPECT_THROW(checkScheduleForDevice(s, args, 2), InternalError);
}

// Plays orderForOneDevice's order on host arrays the way runSchedulesOnOneDevice plays it on the
// device (the same plans, staging offsets and step order; memcpy and the host reductions for the
// copies and kernels).
void playOnHost(const std::vector<Schedule>& schedules, const CollArgs& args,
                std::vector<std::vector<std::byte>>& send,
                std::vector<std::vector<std::byte>>& recv) {
  const int n = static_cast<int>(schedules.size());
  const size_t es = dataTypeSize(args.dtype);
  std::vector<std::vector<CudaPhasePlan>> plans(n);
  std::vector<std::vector<std::byte>> scratch(n), staging(n);
  for (int r = 0; r < n; ++r) {
    for (const auto& phase : schedules[r].phases) plans[r].push_back(planCudaPhase(phase));
    scratch[r].resize(schedules[r].scratchCount * es);
    staging[r].resize(cudaStagingCount(schedules[r]) * es);
  }
  auto at = [&](int r, const Span& sp) {
    std::byte* base = sp.buf == BufferRef::kSend   ? send[r].data()
                      : sp.buf == BufferRef::kRecv ? recv[r].data()
                                                   : scratch[r].data();
    return base + sp.offset * es;
  };
  for (const OneDeviceAction& a : orderForOneDevice(plans)) {
    const CudaPhasePlan& plan = plans[a.rank][a.phase];
    if (a.kind == OneDeviceAction::kEnter) {
      for (const Step& st : plan.local) {
        if (st.dst.count == 0) continue;
        if (st.kind == StepKind::kCopy && at(a.rank, st.src) != at(a.rank, st.dst)) {
          std::memcpy(at(a.rank, st.dst), at(a.rank, st.src), st.dst.count * es);
        } else if (st.kind == StepKind::kReduce) {
          reduce(args.dtype, args.op, at(a.rank, st.dst), at(a.rank, st.dst), at(a.rank, st.src),
                 st.dst.count);
        } else if (st.kind == StepKind::kScale) {
          scaleForAvg(args.dtype, at(a.rank, st.dst), st.dst.count, n);
        }
      }
    } else if (a.kind == OneDeviceAction::kTransfer) {
      const Step& from = plans[a.from][a.fromPhase].sends[a.send];
      const CudaPhasePlan::Receive& r = plan.receives[a.receive];
      if (r.step.dst.count == 0) continue;
      std::byte* into = r.step.kind == StepKind::kRecvReduce
                            ? staging[a.rank].data() + r.stagingOffset * es
                            : at(a.rank, r.step.dst);
      std::memcpy(into, at(a.from, from.src), r.step.dst.count * es);
    } else {
      for (const auto& r : plan.receives) {
        if (r.step.kind != StepKind::kRecvReduce || r.step.dst.count == 0) continue;
        reduce(args.dtype, args.op, at(a.rank, r.step.dst), at(a.rank, r.step.src),
               staging[a.rank].data() + r.stagingOffset * es, r.step.dst.count);
      }
    }
  }
}

// What GpuDevice.CudaExecutorStepsForSeveralRanksOnOneDevice runs on the GPU, on the host: every
// algorithm's schedules for 2..5 ranks in the one-device order give the expected result. (Its
// first run on an H100 failed on a rooted schedule whose messages cross phases.)
TEST(OneDeviceOrder, EveryAlgorithmGivesTheExpectedResult) {
  int checked = 0;
  test::forEachOneDeviceCase(
      {1, 1000, 4099}, {RedOp::kSum, RedOp::kAvg},
      [&](const AlgorithmInfo& algo, int n, const CollArgs& args, const AlgoOptions& opts) {
        const size_t es = dataTypeSize(args.dtype);
        std::vector<Schedule> schedules;
        std::vector<std::vector<std::byte>> send(n), recv(n);
        for (int r = 0; r < n; ++r) {
          schedules.push_back(algo.build(r, n, args, opts));
          send[r].resize(std::max(schedules[r].sendCount, sendCount(args, n)) * es);
          recv[r].resize(std::max(schedules[r].recvCount, recvCount(args, n)) * es);
          fillInput(args, r, n, 5, send[r].data());
        }
        ASSERT_NO_THROW(playOnHost(schedules, args, send, recv))
            << algo.name << " n=" << n << " count=" << args.count;
        for (int r = 0; r < n; ++r) {
          std::vector<std::byte> expected(recvCount(args, n) * es);
          if (!expectedOutput(args, r, n, 5, expected.data())) continue;
          EXPECT_EQ(countWrong(args, n, recv[r].data(), expected.data(), recvCount(args, n)), 0)
              << algo.name << " " << collectiveName(algo.coll) << " n=" << n
              << " count=" << args.count << " op=" << redOpName(args.op) << " rank " << r;
        }
        ++checked;
      });
  EXPECT_GT(checked, 100);
}

TEST(OneDeviceOrder, MessagesMatchAcrossPhasesAndMismatchesAreNamed) {
  // Rank 0 sends in phase 1 what rank 1 receives in phase 0: legal under rendezvous semantics.
  std::vector<std::vector<CudaPhasePlan>> plans(2);
  Phase idle, send0, recv1;
  send0.steps = {sendStep(1, {BufferRef::kSend, 0, 4})};
  recv1.steps = {recvStep(0, {BufferRef::kRecv, 0, 4})};
  plans[0] = {planCudaPhase(idle), planCudaPhase(send0)};
  plans[1] = {planCudaPhase(recv1)};
  auto order = orderForOneDevice(plans);
  auto t = std::find_if(order.begin(), order.end(),
                        [](const auto& a) { return a.kind == OneDeviceAction::kTransfer; });
  ASSERT_NE(t, order.end());
  EXPECT_EQ(t->from, 0);
  EXPECT_EQ(t->fromPhase, 1u);
  EXPECT_EQ(t->rank, 1);
  EXPECT_EQ(t->phase, 0u);
  // A size mismatch, a message never received and a deadlock are refused with the ranks named.
  Phase recv1Short;
  recv1Short.steps = {recvStep(0, {BufferRef::kRecv, 0, 3})};
  plans[1] = {planCudaPhase(recv1Short)};
  EXPECT_THROW(orderForOneDevice(plans), InternalError);
  plans[1] = {planCudaPhase(idle)};
  EXPECT_THROW(orderForOneDevice(plans), InternalError);
  Phase recv0;
  recv0.steps = {recvStep(1, {BufferRef::kRecv, 0, 4})};
  plans[0] = {planCudaPhase(recv0)};
  plans[1] = {planCudaPhase(recv1)};  // both only receive: nobody sends
  try {
    orderForOneDevice(plans);
    ADD_FAILURE() << "no deadlock reported";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
  }
}

TEST(Watchdog, FiresOncePastTheDeadline) {
  std::mutex m;
  std::condition_variable cv;
  int fired = 0;
  Watchdog w([&] {
    std::lock_guard lock(m);
    ++fired;
    cv.notify_all();
  });
  w.arm(Deadline::after(0.01));
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return fired > 0; }));
  }
  EXPECT_TRUE(w.disarm());
  // Re-armed with a far deadline and disarmed in time: no second call.
  w.arm(Deadline::after(3600));
  EXPECT_FALSE(w.disarm());
  w.arm(Deadline::never());
  EXPECT_FALSE(w.disarm());
  std::lock_guard lock(m);
  EXPECT_EQ(fired, 1);
}

TEST(Watchdog, DestroyedWhileArmedDoesNotFire) {
  std::atomic<int> fired{0};
  {
    Watchdog w([&] { ++fired; });
    w.arm(Deadline::after(3600));
  }  // the destructor stops the thread without waiting for the deadline
  EXPECT_EQ(fired.load(), 0);
}

// Saves and restores a variable around a test, so the user's NCCL settings survive.
class SavedEnv {
 public:
  explicit SavedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    unsetenv(name);
  }
  ~SavedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "<unset>";
}

TEST(ScopedNcclEnv, SetsAndRestores) {
  SavedEnv algo("NCCL_ALGO"), proto("NCCL_PROTO");
  setenv("NCCL_PROTO", "Simple", 1);
  {
    ScopedNcclEnv outer({{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}}, Deadline::after(10));
    EXPECT_EQ(env("NCCL_ALGO"), "Ring");
    EXPECT_EQ(env("NCCL_PROTO"), "LL");
    {
      // Local-world ranks hold the same settings at once.
      ScopedNcclEnv same({{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}}, Deadline::after(10));
      EXPECT_EQ(env("NCCL_ALGO"), "Ring");
    }
    EXPECT_EQ(env("NCCL_ALGO"), "Ring");  // still held by `outer`
  }
  EXPECT_EQ(env("NCCL_ALGO"), "<unset>");
  EXPECT_EQ(env("NCCL_PROTO"), "Simple");
}

TEST(ScopedNcclEnv, DifferentSettingsWaitForTheHolder) {
  SavedEnv algo("NCCL_ALGO");
  std::atomic<bool> holding{false}, release{false};
  std::thread holder([&] {
    ScopedNcclEnv tree({{"NCCL_ALGO", "Tree"}}, Deadline::after(60));
    holding = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!holding) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_THROW(ScopedNcclEnv({{"NCCL_ALGO", "Ring"}}, Deadline::after(0.02)), TimeoutError);
  EXPECT_EQ(env("NCCL_ALGO"), "Tree");
  release = true;
  {
    ScopedNcclEnv ring({{"NCCL_ALGO", "Ring"}}, Deadline::after(60));  // waits for the release
    EXPECT_EQ(env("NCCL_ALGO"), "Ring");
  }
  holder.join();
  EXPECT_EQ(env("NCCL_ALGO"), "<unset>");
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
