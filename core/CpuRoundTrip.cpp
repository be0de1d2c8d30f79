#include "core/CpuRoundTrip.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/Clock.h"

namespace cb {
namespace {

bool pinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

}  // namespace

CpuRoundTrip measureCpuRoundTrip(int a, int b, int trips, double budgetSeconds) {
  CpuRoundTrip r;
  r.a = a;
  r.b = b;
  if (a < 0 || b < 0 || a == b || a >= CPU_SETSIZE || b >= CPU_SETSIZE || trips < 10) return r;
  cpu_set_t saved;
  if (pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) != 0) return r;
  if (!pinTo(a)) return r;
  // The line both threads write: odd values ask (2i + 1), even ones answer (2i + 2). The stop
  // signal has a line of its own: sent on `line`, a late answer (the helper preempted between
  // reading a ping and answering it while this thread gave up) overwrote it and the helper spun
  // on, with `run` waiting in join (issue 26's round 29, beside a compile).
  alignas(64) std::atomic<long> line{0};
  alignas(64) std::atomic<bool> stop{false};
  std::atomic<bool> helperPinned{false}, helperFailed{false};
  const double end = nowSeconds() + budgetSeconds;
  std::thread helper([&] {
    if (!pinTo(b)) {
      helperFailed = true;
      return;
    }
    helperPinned = true;
    for (long seen = 0; !stop.load(std::memory_order_acquire);) {
      const long v = line.load(std::memory_order_acquire);
      if (v != seen && v % 2 == 1) {
        seen = v + 1;
        line.store(seen, std::memory_order_release);
      }
    }
  });
  while (!helperPinned && !helperFailed && nowSeconds() < end) std::this_thread::yield();
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(trips));
  bool outOfTime = false;
  for (long i = 0; helperPinned && i < trips && !outOfTime; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    line.store(2 * i + 1, std::memory_order_release);
    for (unsigned spin = 1; line.load(std::memory_order_acquire) != 2 * i + 2; ++spin) {
      if (spin % 4096 == 0 && nowSeconds() > end) {
        outOfTime = true;
        break;
      }
    }
    if (outOfTime) break;
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  stop.store(true, std::memory_order_release);
  helper.join();
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  if (ns.size() < static_cast<size_t>(trips) / 10 || ns.empty()) return r;
  std::sort(ns.begin(), ns.end());
  r.trips = static_cast<int>(ns.size());
  r.p10Ns = ns[ns.size() / 10];
  r.medianNs = ns[ns.size() / 2];
  return r;
}

CpuRoundTrip ranksRoundTrip(const std::vector<RankPlacement>& placements) {
  if (placements.size() < 2 || placements[0].host != placements[1].host ||
      placements[0].cpus.empty()) {
    return {};
  }
  const int a = placements[0].cpus.front();
  for (int b : placements[1].cpus) {
    if (b != a) return measureCpuRoundTrip(a, b);
  }
  return {};
}

PlacementVsStored placementVsStored(double nowNs,
                                    const std::vector<std::pair<double, double>>& stored) {
  PlacementVsStored out;
  std::vector<double> steady;  // runs whose CPUs stayed put while they measured
  for (const auto& [before, after] : stored) {
    if (before > 0 && !placedApart(before, after)) steady.push_back(before);
  }
  out.stored = static_cast<int>(steady.size());
  if (nowNs <= 0 || out.stored < kPlacementRunsMin) return out;
  std::sort(steady.begin(), steady.end());
  const double typical = steady[steady.size() / 2];
  std::vector<double> like;  // sorted, as `steady` is
  for (double x : steady) {
    if (!placedApart(x, typical)) like.push_back(x);
  }
  // A history on two placements, neither most of it, has no one placement to compare with.
  if (2 * like.size() <= steady.size()) return out;
  out.like = static_cast<int>(like.size());
  out.lo = like.front();
  out.hi = like.back();
  const double mid = like[like.size() / 2];
  out.differs = placedApart(nowNs, mid);
  out.farther = nowNs > mid;
  out.ratio = out.farther ? nowNs / mid : mid / nowNs;
  return out;
}

}  // namespace cb
