// How far apart two CPUs are, measured: the round trip of one cache line between a thread on each
// (one writes, the other sees it and answers). On this project's 2-vCPU development VM the two
// vCPUs came in two states minutes apart: round trips of 100-131 ns (median; p10 70-130) and
// 361-430 ns (p10 210-250), and a 1 MiB ring allreduce of 2 bound thread ranks took 24-36 us in
// the first and 55-146 us in the second (540 protocol runs and 52 interleaved pairs, 2026-11-27):
// where the VM's host put its vCPUs, which the guest's topology does not show, decides the run.
// `run` measures it between the CPUs of ranks 0 and 1 and stores it, so that runs in different
// states are told apart (docs/ARCHITECTURE.md, "Gating on runs").
#pragma once

#include <utility>
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

// How far apart a run's CPUs sit against the stored runs of its environment: a VM's host that
// placed its vCPUs anew since (the development VM: 2.9-3.6x slower per case, 2.7x the noise when
// far) makes figures that compare with none of those runs', which `run` says before measuring.
struct PlacementVsStored {
  bool differs = false;   // kRoundTripApart from the placement most stored runs share
  bool farther = false;   // and farther apart than they were
  int stored = 0;         // stored runs probed on one placement (before and after their sweep)
  int like = 0;           // of them, on the placement most of them share
  double lo = 0, hi = 0;  // those runs' medians, ns
  double ratio = 0;       // now against those runs' median (or its inverse when closer)
};
// Needs kPlacementRunsMin runs probed on one placement each, most of them on one; `stored` holds
// each run's medians before and after its sweep (ns; <= 0: not probed).
inline constexpr int kPlacementRunsMin = 3;
PlacementVsStored placementVsStored(double nowNs,
                                    const std::vector<std::pair<double, double>>& stored);

// Pins the calling thread to `a` (its mask restored after) and a helper thread to `b`, then times
// `trips` round trips; gives up after `budgetSeconds` (a CPU held by another process), keeping
// what it timed if that is at least a tenth of them.
CpuRoundTrip measureCpuRoundTrip(int a, int b, int trips = 20000, double budgetSeconds = 0.2);

// Between the CPUs ranks 0 and 1 may run on (the first of rank 0's, the first of rank 1's that
// differs): not measured when they are on different hosts or share their only CPU.
CpuRoundTrip ranksRoundTrip(const std::vector<RankPlacement>& placements);

}  // namespace cb
