// The timing loops of a point, one per --timing mode. Each is the loop of the tool it is named
// after, so a figure can be compared with that tool's own:
//
//   per-call   (collbench's default) per iteration: barrier (untimed), t0, one call, t1; a
//              device variant reports its CUDA-event time. Every iteration is a sample.
//   nccl-tests (NVIDIA/nccl-tests src/common.cu, BenchTime) warm-up calls, one barrier, then N
//              calls back to back between one pair of host timestamps, waited for once (device
//              variants: N enqueues, or -G launches of one graph of the N calls), divided by N
//              (x launches): one sample per rank, combined over ranks by -a. Call i runs on
//              the buffers moved by shift.at(i), inside buffers of the run's largest size, as
//              nccl-tests' startColl moves them (no timing of one cache-resident address).
//   osu        (osu_allreduce.c of OMB 7.x) one barrier, then per iteration: t0, one call, t1,
//              barrier; warm-up iterations are the first ones of the same loop.
//   imb        (IMB_allreduce.c) N_BARR = 2 barriers, then per iteration: t0, one call, t1,
//              barrier (IMB's sync); warm-up calls before the barriers.
//
// In the osu and imb loops the barrier after the call is outside the timer, as in the tools, and
// under MPI it is MPI_Barrier itself (bounded by a guard thread, TimingLoops.cpp): the next t0
// follows the barrier's exit directly, with nothing collbench does in between.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/Registry.h"
#include "core/Communicator.h"
#include "core/Stats.h"

namespace cb {

enum class TimingMode : uint8_t { kPerCall, kNcclTests, kOsu, kImb };

std::string_view timingModeName(TimingMode m);  // "per-call", "nccl-tests", "osu", "imb"
// Throws UsageError for an unknown name.
TimingMode parseTimingMode(std::string_view name);
// One line for report headers: how an iteration is timed in this mode.
std::string_view timingModeDescription(TimingMode m);

// What the mode's own tool reports unless the user says otherwise: collbench's per-call time is
// the median over iterations of the slowest rank (-a 3); nccl-tests (-a default 1), OSU ("Avg
// Latency") and IMB (t_avg) average over ranks and iterations.
struct TimingDefaults {
  int average;  // -a: 0 rank 0, 1 avg, 2 min, 3 max
  Statistic statistic;
};
TimingDefaults timingDefaults(TimingMode m);

// Everything one rank's loop needs for one point.
struct TimedTarget {
  Communicator& comm;
  PreparedCollective& call;
  const void* send;
  void* recv;
  double timeoutSeconds;         // for each blocking wait (-T)
  double injectDelaySeconds;     // added to every timed call (test hook; 0: none)
  bool barrierEachCall = false;  // nccl-tests -z 1: wait and barrier after each call of a batch
  BatchShift shift;              // nccl-tests: call i of a batch on send/recv + shift.at(i)
  double injectScale = 1;        // every timed call's time multiplied by this (test hook)
};

// Runs `warmup` untimed calls and `iterations` timed calls the mode's way and returns this rank's
// samples in seconds: one per iteration, or one (time per call of the batch) for nccl-tests.
std::vector<double> runTimingLoop(TimingMode mode, const TimedTarget& t, int warmup,
                                  int iterations);

// Samples each rank contributes in `mode` for `iterations` timed calls.
int samplesPerRank(TimingMode mode, int iterations);

}  // namespace cb
