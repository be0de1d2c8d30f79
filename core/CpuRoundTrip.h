// How far apart two CPUs are, measured: the round trip of one cache line between a thread on each
// (one writes, the other sees it and answers). On this project's 2-vCPU development VM the two
// vCPUs came in two states minutes apart: round trips of 100-131 ns (median; p10 70-130) and
// 361-430 ns (p10 210-250), and a 1 MiB ring allreduce of 2 bound thread ranks took 24-36 us in
// the first and 55-146 us in the second (540 protocol runs and 52 interleaved pairs, 2026-11-27):
// where the VM's host put its vCPUs, which the guest's topology does not show, decides the run.
// `run` measures it between the CPUs of ranks 0 and 1 and stores it, so that runs in different
// states are told apart (docs/ARCHITECTURE.md, "Gating on runs").
#pragma once

#include <vector>

#include "core/LinkClass.h"

namespace cb {

struct CpuRoundTrip {
  int a = -1, b = -1;  // the CPUs (OS indexes)
  double p10Ns = 0, medianNs = 0;
  int trips = 0;  // round trips timed; 0: not measured (a CPU not allowed, or out of time)
  bool known() const { return trips > 0; }
};

// Round trips this far apart (the larger over the smaller median) are two placements of the CPUs.
// The development VM's two states, over 540 runs: medians 100-131 ns and 361-430 ns (p10s 70-130
// and 210-250, too close to split by a ratio).
inline constexpr double kRoundTripApart = 2.0;
// Two medians (ns; <= 0: unknown) on two placements.
inline bool placedApart(double x, double y) {
  return x > 0 && y > 0 && (x > y ? x : y) >= kRoundTripApart * (x > y ? y : x);
}

// Pins the calling thread to `a` (its mask restored after) and a helper thread to `b`, then times
// `trips` round trips; gives up after `budgetSeconds` (a CPU held by another process), keeping
// what it timed if that is at least a tenth of them.
CpuRoundTrip measureCpuRoundTrip(int a, int b, int trips = 20000, double budgetSeconds = 0.2);

// Between the CPUs ranks 0 and 1 may run on (the first of rank 0's, the first of rank 1's that
// differs): not measured when they are on different hosts or share their only CPU.
CpuRoundTrip ranksRoundTrip(const std::vector<RankPlacement>& placements);

}  // namespace cb
