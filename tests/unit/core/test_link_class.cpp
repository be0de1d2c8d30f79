// Link classes between placed ranks (core/LinkClass.h): the rule for host ranks and GPU ranks,
// symmetry, names.
#include <gtest/gtest.h>

#include "core/LinkClass.h"

namespace cb {
namespace {

RankPlacement hostRank(int rank, const std::string& host, int numa, int group) {
  return {.rank = rank, .host = host, .numaNode = numa, .coreGroup = group};
}

RankPlacement gpuRank(int rank, const std::string& bus, int numa, const std::string& sw,
                      const std::string& fabric = "") {
  return {.rank = rank,
          .host = "h",
          .numaNode = numa,
          .gpuBusId = bus,
          .gpuNumaNode = numa,
          .pcieSwitch = sw,
          .nvlinkFabric = fabric};
}

TEST(LinkClass, NamesRoundTrip) {
  for (LinkClass c : allLinkClasses()) {
    auto parsed = parseLinkClass(linkClassName(c));
    ASSERT_TRUE(parsed.has_value()) << linkClassName(c);
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_FALSE(parseLinkClass("pcie").has_value());
  EXPECT_EQ(linkClassName(LinkClass::kPcieSwitch), "pcie-switch");
}

TEST(LinkClass, HostRanks) {
  auto a = hostRank(0, "h", 0, 0), b = hostRank(1, "h", 0, 0), c = hostRank(2, "h", 0, 1),
       d = hostRank(3, "h", 1, 2), e = hostRank(4, "other", 0, 0), u = hostRank(5, "h", -1, -1);
  EXPECT_EQ(classifyPair(a, a), LinkClass::kSelf);
  EXPECT_EQ(classifyPair(a, b), LinkClass::kCoreGroup);
  EXPECT_EQ(classifyPair(a, c), LinkClass::kNuma);
  EXPECT_EQ(classifyPair(a, d), LinkClass::kCrossNuma);
  EXPECT_EQ(classifyPair(a, e), LinkClass::kNetwork);
  // Unbound across nodes: the link may cross the CPU interconnect.
  EXPECT_EQ(classifyPair(a, u), LinkClass::kCrossNuma);
}

TEST(LinkClass, GpuRanks) {
  auto g0 = gpuRank(0, "0000:34:00.0", 0, "0000:2c:00.0");
  auto g1 = gpuRank(1, "0000:36:00.0", 0, "0000:2c:00.0");
  auto g2 = gpuRank(2, "0000:59:00.0", 0, "0000:50:00.0");
  auto g3 = gpuRank(3, "0000:b7:00.0", 1, "0000:b0:00.0");
  EXPECT_EQ(classifyPair(g0, g1), LinkClass::kPcieSwitch);
  EXPECT_EQ(classifyPair(g0, g2), LinkClass::kNuma);
  EXPECT_EQ(classifyPair(g0, g3), LinkClass::kCrossNuma);
  g0.nvlinkFabric = g3.nvlinkFabric = "nvswitch:0000:61:00.0";
  EXPECT_EQ(classifyPair(g0, g3), LinkClass::kNvlink);
  g2.nvlinkPeers = {"0000:36:00.0"};
  EXPECT_EQ(classifyPair(g1, g2), LinkClass::kNvlink);  // the peer list of either side counts
  EXPECT_EQ(classifyPair(g2, g1), LinkClass::kNvlink);
}

TEST(LinkClass, MatrixIsSymmetric) {
  std::vector<RankPlacement> ps = {hostRank(0, "a", 0, 0), hostRank(1, "a", 0, 1),
                                   hostRank(2, "a", 1, 2), hostRank(3, "b", 0, 0)};
  auto m = classifyAll(ps);
  ASSERT_EQ(m.size(), 16u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(m[i * 4 + i], LinkClass::kSelf);
    for (size_t j = 0; j < 4; ++j) EXPECT_EQ(m[i * 4 + j], m[j * 4 + i]);
  }
  EXPECT_EQ(m[0 * 4 + 3], LinkClass::kNetwork);
  EXPECT_EQ(m[1 * 4 + 2], LinkClass::kCrossNuma);
}

}  // namespace
}  // namespace cb
