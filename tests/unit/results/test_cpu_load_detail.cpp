// The stored form of a run's CPUs as it measured (results/CpuLoadDetail.h) and the gate's lines
// over both sides (adapters/CompareSides.h).
#include <gtest/gtest.h>

#include "adapters/CompareSides.h"
#include "results/CpuLoadDetail.h"

namespace cb {
namespace {

TEST(CpuLoadDetail, RoundTripsEveryHostAndTheCpusDistanceAndRefusesOtherDocuments) {
  CpuContention a{"node1", 2, 4, 3.5, 1.7, 1.7, true}, b{"node2", 64, 8, 3.5, 5.0, 0.0, false};
  CpuRoundTrip rt{0, 1, 110, 120, 20000};
  const CpuLoadRecord back = parseCpuLoadDetail(cpuLoadDetail({{a, b}, rt}));
  ASSERT_EQ(back.hosts.size(), 2u);
  EXPECT_EQ(back.hosts[0].host, "node1");
  EXPECT_EQ(back.hosts[0].cpus, 2);
  EXPECT_EQ(back.hosts[0].ranks, 4);
  EXPECT_DOUBLE_EQ(back.hosts[0].seconds, 3.5);
  EXPECT_DOUBLE_EQ(back.hosts[0].foreignCpus, 1.7);
  EXPECT_TRUE(back.hosts[0].contended);
  EXPECT_EQ(back.hosts[1].host, "node2");
  EXPECT_DOUBLE_EQ(back.hosts[1].foreignCpus, 5.0);
  EXPECT_DOUBLE_EQ(back.hosts[1].competingCpus, 0.0);
  EXPECT_FALSE(back.hosts[1].contended);
  EXPECT_EQ(back.roundTrip.a, 0);
  EXPECT_EQ(back.roundTrip.b, 1);
  EXPECT_DOUBLE_EQ(back.roundTrip.p10Ns, 110);
  EXPECT_EQ(back.roundTrip.trips, 20000);
  // Ranks on two hosts: no round trip stored or read.
  EXPECT_FALSE(parseCpuLoadDetail(cpuLoadDetail({{a}, {}})).roundTrip.known());
  EXPECT_TRUE(parseCpuLoadDetail("not json").hosts.empty());
  EXPECT_TRUE(
      parseCpuLoadDetail(R"({"format": "collbench-topology", "hosts": [{}]})").hosts.empty());
}

TEST(CpuLoadDetail, TheGateListsEachSidesStateAndNotesWhatCanPassForAChange) {
  using S = RunCpuState;
  EXPECT_EQ(sidesLoadText(SidesLoad{{S{}, S{}}, {S{}}}), "");
  const std::string both =
      sidesLoadText({{S{1.2, 110}, S{1.3, 115}, S{1.1, 120}}, {S{1.25, 112}, S{1.4, 118}, S{}}});
  EXPECT_NE(both.find("baseline 1.20 1.30 1.10; candidate 1.25 1.40 -"), std::string::npos) << both;
  EXPECT_NE(both.find("median ns, per run): baseline 110 115 120; candidate 112 118 -"),
            std::string::npos)
      << both;
  EXPECT_EQ(both.find("# note"), std::string::npos) << both;  // alike on both sides
  const std::string loaded = sidesLoadText({{S{0.0}, S{0.02}, S{0.01}}, {S{1.5}, S{1.2}, S{0.9}}});
  EXPECT_NE(loaded.find("# note: only the candidate's runs shared their CPUs with other processes"),
            std::string::npos)
      << loaded;
  // The development VM's two placements of its vCPUs: medians 100-131 ns and 361-430 ns.
  const std::string moved =
      sidesLoadText({{S{0, 115}, S{0, 120}, S{0, 118}}, {S{0, 391}, S{0, 400}, S{0, 380}}});
  EXPECT_NE(moved.find("# note: the ranks' CPUs were farther apart for the candidate's runs (a "
                       "cache line's round trip 391 vs 118 ns)"),
            std::string::npos)
      << moved;
  // What makes the gate's decision inconclusive: only placements 2x apart (not the one state's
  // 100 and 131).
  EXPECT_NE(placementsDiffer({{S{0, 115}, S{0, 120}}, {S{0, 381}, S{0, 390}}}), "");
  EXPECT_EQ(placementsDiffer({{S{0, 100}, S{0, 100}}, {S{0, 131}, S{0, 131}}}), "");
  EXPECT_EQ(placementsDiffer({{S{0, 115}}, {S{0, -1}}}), "");  // unknown on one side
  // A side split evenly (an interleaved gate whose VM moved: 390 and 120 ns) has no placement to
  // be closer or farther than the other's: the split is the reason, said elsewhere.
  EXPECT_EQ(placementsDiffer({{S{0, 390}, S{0, 120}}, {S{0, 130}, S{0, 120}}}), "");
  EXPECT_NE(placementsDiffer({{S{0, 390}, S{0, 380}, S{0, 120}}, {S{0, 130}, S{0, 120}}}), "");
}

// A side of runs with these ids, one result each.
RunSet side(std::initializer_list<int64_t> ids) {
  RunSet set;
  for (int64_t id : ids) {
    RunRecord run;
    run.id = id;
    set.runs.push_back(run);
    ResultRecord r;
    r.runId = id;
    set.results.push_back(r);
  }
  return set;
}

TEST(CpuLoadDetail, ARunProbedOnAnotherPlacementThanTheRestOfItsSideIsNamed) {
  using S = RunCpuState;
  // Issue 26's round 26: the baseline's first run probed the VM's far placement (391 ns), its
  // other two the near one; the candidate's three the near one.
  const LoadedRuns runs{side({159, 157, 158}), side({160, 161, 162}), "b", "c", {}};
  LoadedRuns kept = runs;
  SidesLoad load{{S{1.4, 391}, S{1.4, 130}, S{1.3, 131}}, {S{1.2, 131}, S{1.3, 150}, S{1.6, 140}}};
  std::vector<std::string> leftOut;
  const std::vector<std::string> lines = leaveOutOtherPlacements(kept, load, leftOut);
  EXPECT_TRUE(leftOut.empty());  // probed before the sweep only: it stays, named
  EXPECT_EQ(kept.base.runs.size(), 3u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "run 157 of the baseline was probed on another placement of the CPUs than the rest of "
            "its side (a cache line's round trip 391 vs 131 ns)");
  // A side split evenly has no placement of its own: it measured two machines, and says so (its
  // median, the upper of two, sat on the candidate's placement and hid it from placementsDiffer).
  LoadedRuns even{side({1, 2}), side({3, 4, 5}), "b", "c", {}};
  SidesLoad evenLoad{{S{0, 120}, S{0, 391}}, {S{0, 391}, S{0, 400}, S{0, 380}}};
  EXPECT_EQ(leaveOutOtherPlacements(even, evenLoad, leftOut),
            std::vector<std::string>{"the baseline's runs were measured on two placements of the "
                                     "CPUs, neither most of them (a cache line's round trip 120, "
                                     "391 ns)"});
  EXPECT_TRUE(leftOut.empty());
  EXPECT_EQ(even.base.runs.size(), 2u);
}

TEST(CpuLoadDetail, ARunWhoseCpusMovedOrStayedElsewhereIsLeftOutOfItsSide) {
  using S = RunCpuState;
  // The baseline's run 2 moved during its sweep (probed 130 ns before, 390 after); the
  // candidate's run 4 ran on the far placement before and after its sweep. Both are left out,
  // with their results and their load entries; the rest stay.
  LoadedRuns runs{side({1, 2, 3}), side({4, 5, 6}), "b", "c", {}};
  SidesLoad load{{S{0, 120, 125}, S{0, 130, 390}, S{0, 125, -1}},
                 {S{0, 391, 400}, S{0, 130, 128}, S{0, 131, 135}}};
  std::vector<std::string> leftOut;
  EXPECT_TRUE(leaveOutOtherPlacements(runs, load, leftOut).empty());
  ASSERT_EQ(leftOut.size(), 2u);
  EXPECT_EQ(leftOut[0],
            "run 2 left out of the baseline: its ranks' CPUs moved while it measured (a cache "
            "line's round trip 130 ns before the sweep, 390 ns after), so its figures mix two "
            "placements");
  EXPECT_EQ(leftOut[1],
            "run 4 left out of the candidate: its ranks' CPUs were placed apart differently from "
            "the rest of its side before and after it measured (a cache line's round trip 391 and "
            "400 ns vs 131 ns), so it measured another machine");
  auto ids = [](const RunSet& set) {
    std::vector<int64_t> out;
    for (const RunRecord& r : set.runs) out.push_back(r.id);
    return out;
  };
  EXPECT_EQ(ids(runs.base), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ids(runs.cand), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(runs.base.results.size(), 2u);
  EXPECT_EQ(runs.cand.results.size(), 2u);
  ASSERT_EQ(load.base.size(), 2u);
  EXPECT_EQ(load.base[1].roundTripNs, 125);
  ASSERT_EQ(load.cand.size(), 2u);
  EXPECT_EQ(load.cand[0].roundTripNs, 130);
  // A side whose every run moved keeps them, and says why it decides nothing.
  LoadedRuns moved{side({7, 8}), side({9, 10}), "b", "c", {}};
  SidesLoad movedLoad{{S{0, 120, 390}, S{0, 400, 130}}, {S{0, 120, 125}, S{0, 130, 128}}};
  leftOut.clear();
  const std::vector<std::string> lines = leaveOutOtherPlacements(moved, movedLoad, leftOut);
  EXPECT_TRUE(leftOut.empty());
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_EQ(moved.base.runs.size(), 2u);
  // Round 50's gate 20: the baseline's run 116 moved during its sweep and is left out; the two
  // left sit on two placements: the side measured two machines, and the gate decides nothing.
  LoadedRuns r50{side({115, 116, 117}), side({118, 119, 120}), "b", "c", {}};
  SidesLoad r50Load{{S{0, 130, 128}, S{0, 140, 381}, S{0, 391, 390}},
                    {S{0, 390, 391}, S{0, 390, 388}, S{0, 390, 392}}};
  leftOut.clear();
  const std::vector<std::string> split = leaveOutOtherPlacements(r50, r50Load, leftOut);
  ASSERT_EQ(leftOut.size(), 1u);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0],
            "the baseline's runs were measured on two placements of the CPUs, neither most of them "
            "(a cache line's round trip 130, 391 ns)");
  // Two runs each on their own placement, steady through their sweeps, in a side of two: the
  // same, and nothing is left out.
  LoadedRuns two{side({11, 12}), side({13, 14, 15}), "b", "c", {}};
  SidesLoad twoLoad{{S{0, 120, 121}, S{0, 391, 390}},
                    {S{0, 120, 125}, S{0, 130, 128}, S{0, 125, 130}}};
  leftOut.clear();
  EXPECT_EQ(leaveOutOtherPlacements(two, twoLoad, leftOut).size(), 1u);
  EXPECT_TRUE(leftOut.empty());
  EXPECT_EQ(two.base.runs.size(), 2u);
}

TEST(CpuLoadDetail, TheRoundTripAfterTheSweepIsStoredBesideTheFirst) {
  CpuLoadRecord r;
  r.roundTrip = {0, 1, 90, 130, 20000};
  r.roundTripAfter = {0, 1, 250, 390, 20000};
  const CpuLoadRecord back = parseCpuLoadDetail(cpuLoadDetail(r));
  EXPECT_EQ(back.roundTrip.medianNs, 130);
  EXPECT_EQ(back.roundTripAfter.medianNs, 390);
  EXPECT_EQ(back.roundTripAfter.p10Ns, 250);
  EXPECT_EQ(back.roundTripAfter.b, 1);
  // A run of an earlier build stored the first only.
  r.roundTripAfter = {};
  EXPECT_FALSE(parseCpuLoadDetail(cpuLoadDetail(r)).roundTripAfter.known());
  EXPECT_TRUE(placedApart(130, 390));
  EXPECT_FALSE(placedApart(130, 250));
  EXPECT_FALSE(placedApart(130, -1));
}

}  // namespace
}  // namespace cb
