// What other processes took from the ranks' CPUs (core/CpuLoad.h): /proc/stat's per-CPU columns,
// the deltas every rank sends, and the per-host sums the verdict reads.
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <tuple>

#include "core/CpuLoad.h"
#include "core/CpuRoundTrip.h"

namespace cb {
namespace {

TEST(CpuLoad, ProcStatGivesUserNiceSystemAndStealOfTheListedCpus) {
  // Real layout (kernel 6.x): cpu user nice system idle iowait irq softirq steal guest guest_nice.
  const char* stat =
      "cpu  631802 39957 298971 730233 3784 0 2363 577 0 0\n"
      "cpu0 313442 20080 144961 370930 2583 0 1041 298 0 0\n"
      "cpu1 318359 19876 154009 359303 1201 0 1322 279 0 0\n"
      "intr 123 4 5\n"
      "ctxt 987654\n";
  const std::vector<double> busy = procStatBusySeconds(stat, {1, 0, 7}, 100);
  ASSERT_EQ(busy.size(), 3u);
  // irq and softirq left out: the kernel's work for the ranks' own traffic is not a competitor.
  EXPECT_DOUBLE_EQ(busy[0], (318359 + 19876 + 154009 + 279) / 100.0);
  EXPECT_DOUBLE_EQ(busy[1], (313442 + 20080 + 144961 + 298) / 100.0);
  EXPECT_DOUBLE_EQ(busy[2], 0);  // not listed: nothing known
}

TEST(CpuLoad, ASnapshotOfThisProcessCountsItsOwnWork) {
  const CpuUse before = readCpuUse();
  if (!before.known) GTEST_SKIP() << "no /proc/stat here";
  ASSERT_FALSE(before.cpus.empty());
  ASSERT_EQ(before.busySeconds.size(), before.cpus.size());
  volatile double x = 0;
  const double until = before.wallSeconds + 0.05;
  while (readCpuUse(before.cpus).wallSeconds < until) x = x + 1;
  const CpuUse after = readCpuUse(before.cpus);
  EXPECT_GT(after.processSeconds, before.processSeconds);
  EXPECT_EQ(after.cpus, before.cpus);
  const std::string delta = cpuDeltaText(before, after);
  EXPECT_EQ(delta.rfind(std::to_string(after.pid) + " ", 0), 0u) << delta;
  // What others did meanwhile depends on the machine (ctest runs tests side by side), so only the
  // shape is checked here; the sums are checked on fixed deltas below.
  const std::vector<CpuContention> c = cpuContention({delta}, {"h"});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].cpus, static_cast<int>(before.cpus.size()));
  EXPECT_GE(c[0].foreignCpus, 0) << delta;
  CpuUse unknown;
  EXPECT_EQ(cpuDeltaText(unknown, after), "");
}

TEST(CpuLoad, HostsSumTheirCpusOnceAndEachProcessOnce) {
  // Host a: one process of 4 thread ranks on CPUs 0-1 (every rank reads the same deltas), 2 s,
  // the process used 2.5 CPU-s of the 4 busy: others used 0.75 CPUs, and 4 ranks on 2 CPUs left
  // none free. Host b: 2 MPI ranks bound to CPUs 4 and 5 of 8, others busy there 0.2 CPU-s.
  std::vector<std::string> deltas(4, "100 2.0 2.5 0:2.00 1:2.00");
  deltas.push_back("200 1.0 0.9 4:1.00");
  deltas.push_back("201 1.0 0.9 5:1.00");
  deltas.push_back("");  // a rank that could not read its accounting adds its count only
  const std::vector<std::string> hosts = {"a", "a", "a", "a", "b", "b", "b"};
  const std::vector<CpuContention> c = cpuContention(deltas, hosts);
  ASSERT_EQ(c.size(), 2u);
  // host, CPUs, ranks, CPUs others used (all competing: neither host left a CPU free)
  const std::tuple<std::string, int, int, double> want[] = {{"a", 2, 4, 0.75}, {"b", 2, 3, 0.2}};
  for (size_t i = 0; i < 2; ++i) {
    const auto& [host, cpus, ranks, foreign] = want[i];
    EXPECT_EQ(c[i].host, host);
    EXPECT_EQ(c[i].cpus, cpus);
    EXPECT_EQ(c[i].ranks, ranks);
    EXPECT_NEAR(c[i].foreignCpus, foreign, 1e-9);
    EXPECT_NEAR(c[i].competingCpus, foreign, 1e-9);
    EXPECT_TRUE(c[i].contended);
  }
}

TEST(CpuLoad, OthersOnCpusTheRanksLeaveFreeDoNotCompete) {
  // 2 ranks on a host of 8 CPUs they may all use; a compile keeps 5 busy: 6 were free.
  std::vector<std::string> deltas(2, "300 1.0 2.0 ");
  for (int cpu = 0; cpu < 8; ++cpu) {
    for (std::string& d : deltas) d += std::to_string(cpu) + ":" + (cpu < 7 ? "1.00 " : "0.00 ");
  }
  const std::vector<CpuContention> c = cpuContention(deltas, {"h", "h"});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].foreignCpus, 5.0, 1e-9);
  EXPECT_DOUBLE_EQ(c[0].competingCpus, 0);
  EXPECT_FALSE(c[0].contended);
  // Just below the threshold on a host with none free stays uncontended too (the idle host's
  // stray ticks: 0.00-0.04 CPUs measured).
  const std::vector<CpuContention> quiet =
      cpuContention({"400 1.0 1.95 0:1.00 1:1.00", "400 1.0 1.95 0:1.00 1:1.00"}, {"q", "q"});
  ASSERT_EQ(quiet.size(), 1u);
  EXPECT_NEAR(quiet[0].foreignCpus, 0.05, 1e-9);
  EXPECT_FALSE(quiet[0].contended);
  // A short run: one stray tick (0.01 s) over 0.05 s reads as 0.2 CPUs, within the accounting's
  // resolution; five ticks are not.
  const std::vector<std::string> two = {"s", "s"};
  EXPECT_FALSE(
      cpuContention(std::vector<std::string>(2, "500 0.05 0.09 0:0.05 1:0.05"), two)[0].contended);
  EXPECT_TRUE(
      cpuContention(std::vector<std::string>(2, "500 0.05 0.04 0:0.05 1:0.05"), two)[0].contended);
}

// The first two CPUs of an affinity mask (fewer when it allows fewer).
std::vector<int> firstTwo(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

TEST(CpuRoundTrip, TimesACacheLineBetweenTwoCpusOrSaysItCouldNot) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const std::vector<int> cpus = firstTwo(set);
  EXPECT_FALSE(measureCpuRoundTrip(0, 0).known());  // one CPU is no distance
  EXPECT_FALSE(measureCpuRoundTrip(-1, 0).known());
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed";
  const CpuRoundTrip r = measureCpuRoundTrip(cpus[0], cpus[1], 2000, 1.0);
  ASSERT_TRUE(r.known());
  EXPECT_GT(r.p10Ns, 0);
  EXPECT_LE(r.p10Ns, r.medianNs);
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&set, &after));  // the caller's mask is restored
  // Ranks 0 and 1 on two hosts: not measured.
  RankPlacement p0, p1;
  p0.host = "a";
  p1.host = "b";
  p0.cpus = {cpus[0]};
  p1.cpus = {cpus[1]};
  EXPECT_FALSE(ranksRoundTrip({p0, p1}).known());
  p1.host = "a";
  // One host: measured between the first CPU of each (known unless another process held one of
  // them through the budget, which ctest's neighbours may).
  const CpuRoundTrip same = ranksRoundTrip({p0, p1});
  EXPECT_EQ(same.a, cpus[0]);
  EXPECT_EQ(same.b, cpus[1]);
  p1.cpus = {cpus[0]};  // sharing their only CPU: nothing to measure
  EXPECT_FALSE(ranksRoundTrip({p0, p1}).known());
}

TEST(CpuRoundTrip, GivingUpWhileTheHelperIsPreemptedNeverHangs) {
  // A process that held the helper's CPU preempted it between reading a ping and answering it;
  // the probe gave up meanwhile and its stop signal was overwritten by that late answer: `run`
  // spun for minutes in the probe (issue 26's round 29, beside a compile). Here a thread of our
  // own holds the helper's CPU and the budget is far below a time slice, so the probe gives up
  // over and over while the helper is preempted.
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const std::vector<int> cpus = firstTwo(set);
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed";
  std::atomic<bool> stop{false};
  std::thread hog([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[1], &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  std::atomic<int> done{0};
  std::thread probes([&] {
    for (int i = 0; i < 300; ++i) {
      measureCpuRoundTrip(cpus[0], cpus[1], 1000000, 0.0005);
      ++done;
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (done < 300 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  hog.join();
  if (done < 300) {
    ADD_FAILURE() << "a probe hung after " << done << " of 300";
    std::fflush(stdout);
    std::_Exit(1);  // the hung probe cannot be joined
  }
  probes.join();
}

TEST(CpuRoundTrip, ARunSaysWhenItsCpusSitApartFromTheStoredRunsPlacement) {
  // The development VM's two placements: medians near 120 ns or 390 ns.
  const std::vector<std::pair<double, double>> near = {
      {120, 130}, {130, 130}, {110, -1}, {140, 130}, {125, 120}};
  PlacementVsStored far = placementVsStored(400, near);
  EXPECT_TRUE(far.differs);
  EXPECT_TRUE(far.farther);
  EXPECT_EQ(far.stored, 5);
  EXPECT_EQ(far.like, 5);
  EXPECT_DOUBLE_EQ(far.lo, 110);
  EXPECT_DOUBLE_EQ(far.hi, 140);
  EXPECT_NEAR(far.ratio, 400.0 / 125, 1e-9);
  EXPECT_FALSE(placementVsStored(150, near).differs);  // the same placement, a little slower
  PlacementVsStored closer = placementVsStored(40, near);
  EXPECT_TRUE(closer.differs);
  EXPECT_FALSE(closer.farther);
  // A run whose CPUs moved while it measured says nothing of either placement; one stray run
  // on the other placement does not move the majority's.
  const std::vector<std::pair<double, double>> mixed = {
      {120, 400}, {120, 130}, {390, 400}, {130, 120}, {125, 125}};
  PlacementVsStored m = placementVsStored(400, mixed);
  EXPECT_EQ(m.stored, 4);
  EXPECT_EQ(m.like, 3);
  EXPECT_TRUE(m.differs);
  // Too few runs, or no placement most of them share: nothing to compare with.
  EXPECT_FALSE(placementVsStored(400, {{120, 120}, {130, 130}}).differs);
  EXPECT_FALSE(placementVsStored(400, {{120, 120}, {130, 130}, {390, 390}, {400, 400}}).differs);
  EXPECT_FALSE(placementVsStored(-1, near).differs);  // this run's probe was starved
}

}  // namespace
}  // namespace cb
