// The stored form of what other processes took from a run's CPUs (results/CpuLoadDetail.h) and
// the gate's line over both sides (adapters/CompareSides.h).
#include <gtest/gtest.h>

#include "adapters/CompareSides.h"
#include "results/CpuLoadDetail.h"

namespace cb {
namespace {

TEST(CpuLoadDetail, RoundTripsEveryHostAndRefusesOtherDocuments) {
  CpuContention a{"node1", 2, 4, 3.5, 1.7, 1.7, true}, b{"node2", 64, 8, 3.5, 5.0, 0.0, false};
  const std::vector<CpuContention> back = parseCpuLoadDetail(cpuLoadDetail({a, b}));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].host, "node1");
  EXPECT_EQ(back[0].cpus, 2);
  EXPECT_EQ(back[0].ranks, 4);
  EXPECT_DOUBLE_EQ(back[0].seconds, 3.5);
  EXPECT_DOUBLE_EQ(back[0].foreignCpus, 1.7);
  EXPECT_TRUE(back[0].contended);
  EXPECT_EQ(back[1].host, "node2");
  EXPECT_DOUBLE_EQ(back[1].foreignCpus, 5.0);
  EXPECT_DOUBLE_EQ(back[1].competingCpus, 0.0);
  EXPECT_FALSE(back[1].contended);
  EXPECT_TRUE(parseCpuLoadDetail("not json").empty());
  EXPECT_TRUE(parseCpuLoadDetail(R"({"format": "collbench-topology", "hosts": []})").empty());
}

TEST(CpuLoadDetail, TheGateListsEachSidesLoadAndNotesWhenOnlyOneSideCompeted) {
  SidesLoad none{{-1, -1}, {-1}};
  EXPECT_EQ(sidesLoadText(none), "");
  SidesLoad both{{1.2, 1.3, 1.1}, {1.25, 1.4, -1}};
  const std::string t = sidesLoadText(both);
  EXPECT_NE(t.find("baseline 1.20 1.30 1.10; candidate 1.25 1.40 -"), std::string::npos) << t;
  EXPECT_EQ(t.find("# note"), std::string::npos) << t;  // both sides under load alike
  SidesLoad candidateOnly{{0.0, 0.02, 0.01}, {1.5, 1.2, 0.9}};
  EXPECT_NE(sidesLoadText(candidateOnly)
                .find("# note: only the candidate's runs shared their CPUs with other processes"),
            std::string::npos);
}

}  // namespace
}  // namespace cb
