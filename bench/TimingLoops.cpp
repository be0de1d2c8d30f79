// The per-point timing loops (see TimingLoops.h).
#include "bench/TimingLoops.h"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "collectives/mpi/MpiWorld.h"
#include "core/Clock.h"
#include "core/Error.h"
#include "core/RankBoard.h"

namespace cb {
namespace {

struct ModeInfo {
  TimingMode mode;
  std::string_view name;
  std::string_view description;
};

constexpr std::array<ModeInfo, 4> kModes{{
    {TimingMode::kPerCall, "per-call",
     "per-call: barrier, then each call timed on its own (device variants: CUDA events)"},
    {TimingMode::kNcclTests, "nccl-tests",
     "nccl-tests: one barrier, N calls back to back, waited for once, host-timed, time / N; "
     "each call's buffers moved by one size inside buffers of the largest, as nccl-tests"},
    {TimingMode::kOsu, "osu", "osu: t0, call, t1, then a barrier outside the timer (OMB's loop)"},
    {TimingMode::kImb, "imb",
     "imb: two barriers, then t0, call, t1, barrier per iteration (IMB's loop)"},
}};

const ModeInfo& info(TimingMode m) { return kModes[static_cast<size_t>(m)]; }

// One call between two timestamps. The deadline is made before t0, so the timed region holds the
// call and nothing else of collbench's. --inject-delay is added to the measured time, not spun:
// ranks spinning at once added twice the delay in the local world (50 us gave +100 us).
inline double timedCall(const TimedTarget& t) {
  Deadline d = Deadline::after(t.timeoutSeconds);
  double t0 = nowSeconds();
  t.call.run(t.send, t.recv, d);
  return (nowSeconds() - t0) * t.injectScale + t.injectDelaySeconds;
}

std::vector<double> perCall(const TimedTarget& t, int warmup, int iterations) {
  int done = 0;
  auto one = [&] {
    publishIteration(++done);
    t.comm.barrier(Deadline::after(t.timeoutSeconds));
    double host = timedCall(t);
    if (auto dev = t.call.lastDeviceSeconds()) return *dev * t.injectScale + t.injectDelaySeconds;
    return host;
  };
  for (int i = 0; i < warmup; ++i) one();
  std::vector<double> samples(iterations);
  for (auto& s : samples) s = one();
  return samples;
}

// OSU's and IMB's barrier is MPI_Barrier. Communicator::barrier (MPI_Ibarrier completed by a test
// loop, so that it honours a deadline) exits with more skew between the ranks: +7% on an 8-byte
// MPI_Allreduce here (docs/MEASUREMENT.md). So under MPI these loops call MPI_Barrier itself,
// marked on the rank board as a blocking call: MPI can't abandon a barrier, so the board's
// watchdog ends the process with a line naming the ranks that never arrived once -T passes
// (core/RankBoard.h). The mark is a few relaxed stores, nothing that wakes a thread.
class RoundBarrier {
 public:
  RoundBarrier(Communicator& comm, double seconds) : comm_(comm), seconds_(seconds) {
    if (comm.worldKind() == WorldKind::kMpi) {
      mpi_ = mpiCommOf(comm);
      worldRanks_ = worldRanksOf(mpi_);
    }
  }
  void operator()() {
    if (mpi_ == MPI_COMM_NULL) {
      comm_.barrier(Deadline::after(seconds_));
      return;
    }
    int rc = 0;
    {
      BoardWait mark("MPI_Barrier", worldRanks_, Deadline::after(seconds_), /*blocking=*/true);
      rc = MPI_Barrier(mpi_);
    }
    checkMpi(rc, "MPI_Barrier");
  }

 private:
  Communicator& comm_;
  double seconds_;
  MPI_Comm mpi_ = MPI_COMM_NULL;
  std::vector<int> worldRanks_;
};

// OSU and IMB: the barrier follows the call, outside the timer. `leadingBarriers` before the
// first timed call (OSU 1, IMB N_BARR = 2); OSU's warm-up rounds are the loop's first rounds,
// IMB's precede its barriers, which here is the same sequence of calls.
std::vector<double> callThenBarrier(const TimedTarget& t, int warmup, int iterations,
                                    int leadingBarriers) {
  RoundBarrier barrier(t.comm, t.timeoutSeconds);
  for (int b = 0; b < leadingBarriers; ++b) barrier();
  std::vector<double> samples(iterations);
  for (int i = 0; i < warmup + iterations; ++i) {
    publishIteration(i + 1);
    double s = timedCall(t);
    barrier();
    if (i >= warmup) samples[i - warmup] = s;
  }
  return samples;
}

// nccl-tests' BenchTime: warm-up calls, a barrier, then the batch; -z 1 (barrierEachCall) waits
// for each call and barriers after it inside the timed batch, as nccl-tests' startColl does.
std::vector<double> ncclTests(const TimedTarget& t, int warmup, int iterations) {
  Deadline d = Deadline::after(t.timeoutSeconds);
  if (warmup > 0) t.call.runBatch(t.send, t.recv, warmup, t.shift, d);
  // Graph capture and instantiation (-G) happen here, before the barrier, as in nccl-tests: after
  // it, an early rank's clock would run while a late rank still captures.
  if (!t.barrierEachCall) t.call.prepareBatch(t.send, t.recv, iterations, t.shift, d);
  t.comm.barrier(Deadline::after(t.timeoutSeconds));
  d = Deadline::after(t.timeoutSeconds);
  double t0 = nowSeconds();
  std::optional<double> perCall;
  if (t.barrierEachCall) {
    for (int i = 0; i < iterations; ++i) {
      t.call.run(static_cast<const char*>(t.send) + t.shift.at(i),
                 static_cast<char*>(t.recv) + t.shift.at(i), d);
      t.comm.barrier(d);
    }
  } else {
    perCall = t.call.runBatch(t.send, t.recv, iterations, t.shift, d);
  }
  double host = (nowSeconds() - t0) / iterations * t.injectScale + t.injectDelaySeconds;
  return {perCall ? *perCall * t.injectScale + t.injectDelaySeconds : host};
}

}  // namespace

std::string_view timingModeName(TimingMode m) { return info(m).name; }

std::string_view timingModeDescription(TimingMode m) { return info(m).description; }

TimingMode parseTimingMode(std::string_view name) {
  for (const auto& m : kModes) {
    if (m.name == name) return m.mode;
  }
  throw UsageError(fmt::format("--timing '{}' is not one of per-call, nccl-tests, osu, imb", name));
}

TimingDefaults timingDefaults(TimingMode m) {
  if (m == TimingMode::kPerCall) return {3, Statistic::kMedian};
  return {1, Statistic::kMean};
}

int samplesPerRank(TimingMode mode, int iterations) {
  return mode == TimingMode::kNcclTests ? 1 : iterations;
}

std::vector<double> runTimingLoop(TimingMode mode, const TimedTarget& t, int warmup,
                                  int iterations) {
  switch (mode) {
    case TimingMode::kPerCall: return perCall(t, warmup, iterations);
    case TimingMode::kNcclTests: return ncclTests(t, warmup, iterations);
    case TimingMode::kOsu: return callThenBarrier(t, warmup, iterations, 1);
    case TimingMode::kImb: return callThenBarrier(t, warmup, iterations, 2);
  }
  throw InternalError("runTimingLoop: unknown timing mode");
}

}  // namespace cb
