// What nccl-tests' loop does that a GPU's figures depend on, checked on the host with a scripted
// prepared collective (no device needed; the device variants implement the same two hooks):
//   - the -G graph is captured before the barrier that starts the timed batch, so no rank's
//     clock runs while a later rank still captures (issue 22, B);
//   - each call of a batch runs on buffers moved by one size inside buffers of the largest, as
//     nccl-tests' startColl moves them, so small sizes are not timed on one address (E).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "bench/Sweep.h"
#include "bench/TimingLoops.h"
#include "collectives/transport/LocalWorld.h"

namespace cb {
namespace {

struct BatchLog {
  std::atomic<int> prepared{0};         // prepareBatch calls that have finished
  std::atomic<int> lateTimedStarts{0};  // timed batches that began before every rank prepared
  std::atomic<int> timedBatches{0};
  std::atomic<int> preparedCalls{0};  // the `calls` prepareBatch was given
};

class OrderedCall final : public PreparedCollective {
 public:
  OrderedCall(int rank, int nranks, int iterations, BatchLog* log)
      : rank_(rank), nranks_(nranks), iterations_(iterations), log_(log) {}
  void run(const void*, void*, Deadline) override {}
  void prepareBatch(const void*, void*, int calls, BatchShift, Deadline) override {
    // The last rank is slow to capture: a loop that captures after the barrier lets the others
    // start their clocks first.
    if (rank_ == nranks_ - 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log_->preparedCalls = calls;
    ++log_->prepared;
  }
  std::optional<double> runBatch(const void*, void*, int calls, BatchShift, Deadline) override {
    if (calls == iterations_) {
      ++log_->timedBatches;
      if (log_->prepared.load() < nranks_) ++log_->lateTimedStarts;
    }
    return 1e-6;
  }

 private:
  int rank_, nranks_, iterations_;
  BatchLog* log_;
};

TEST(NcclTestsLoop, GraphsAreCapturedBeforeTheBarrierThatStartsTheClock) {
  BatchLog log;
  const int n = 3, iterations = 7;
  LocalWorld::run(n, [&](Communicator& comm) {
    OrderedCall call(comm.rank(), n, iterations, &log);
    char buf[8];
    TimedTarget t{comm, call, buf, buf, 30, 0, false, {}};
    auto samples = runTimingLoop(TimingMode::kNcclTests, t, 2, iterations);
    EXPECT_EQ(samples.size(), 1u);
  });
  EXPECT_EQ(log.prepared.load(), n);
  EXPECT_EQ(log.preparedCalls.load(), iterations);
  EXPECT_EQ(log.timedBatches.load(), n);
  EXPECT_EQ(log.lateTimedStarts.load(), 0);
}

// Records the send address of every call (host memory: the default runBatch runs run() on the
// moved buffers).
class AddressCall final : public PreparedCollective {
 public:
  AddressCall(std::mutex* m, std::set<const void*>* seen) : m_(m), seen_(seen) {}
  void run(const void* send, void*, Deadline) override {
    std::lock_guard lock(*m_);
    seen_->insert(send);
  }

 private:
  std::mutex* m_;
  std::set<const void*>* seen_;
};

TEST(NcclTestsLoop, CallsMoveThroughBuffersOfTheLargestSize) {
  std::mutex m;
  std::map<uint64_t, std::set<const void*>> seenBySize;
  std::set<const void*>* current = nullptr;
  Registry r;
  VariantInfo v;
  v.coll = Collective::kAllReduce;
  v.name = "addresses";
  v.backend = "test";
  v.description = "records addresses";
  v.prepare = [&](Team&, const CollArgs&, const VariantOptions&) {
    return std::make_unique<AddressCall>(&m, current);
  };
  r.add(v);
  // One rank and one size per sweep, so the recording target can be switched between sweeps;
  // the largest size (-e) is 64 KiB in both, and it decides the buffers.
  for (uint64_t bytes : {uint64_t{1024}, uint64_t{64 * 1024}}) {
    current = &seenBySize[bytes];
    SweepOptions one;
    one.collectives = {Collective::kAllReduce};
    one.registry = &r;
    one.variantOptions.schedule.transport = "local";
    one.timing = TimingMode::kNcclTests;
    one.minBytes = bytes;
    one.maxBytes = 64 * 1024;
    one.stepFactor = 1e9;
    one.warmup = 0;
    one.iterations = 10;
    one.checkRounds = 0;
    one.inPlace = false;
    LocalWorld::run(1, [&](Communicator& comm) {
      Team team(comm);
      runSweep(team, one, {});
    });
  }
  // 1 KiB inside 64 KiB buffers: 64 positions, 10 calls each at its own address, 1 KiB apart.
  const auto& small = seenBySize[1024];
  ASSERT_EQ(small.size(), 10u);
  auto first = static_cast<const char*>(*small.begin());
  int i = 0;
  for (const void* p : small) EXPECT_EQ(static_cast<const char*>(p) - first, 1024 * i++);
  // The largest size has no room to move: every call at one address, as in nccl-tests.
  EXPECT_EQ(seenBySize[64 * 1024].size(), 1u);
}

TEST(NcclTestsLoop, ShiftWrapsAfterItsSteps) {
  BatchShift s{100, 3};
  EXPECT_EQ(s.at(0), 0u);
  EXPECT_EQ(s.at(2), 200u);
  EXPECT_EQ(s.at(3), 0u);
  EXPECT_EQ(BatchShift{}.at(5), 0u);
}

}  // namespace
}  // namespace cb
