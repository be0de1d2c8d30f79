// The scale model (predict/ScaleModel.h) on clusters built from known latencies and bandwidths:
// the fit recovers them and predicts a bigger scale within 2%; the algorithm rule and the
// 2-node tree follow NCCL's tuning (docs/PREDICT.md).
#include <gtest/gtest.h>

#include <cmath>

#include "core/Error.h"
#include "predict/ScaleModel.h"

namespace cb::predict {
namespace {

Scale at(int nodes, int gpus, int domain = 1) { return {nodes, gpus, domain}; }

// The synthetic H100-like cluster, written out independently of the model's columns: NVLS on one
// node (25 us, 480 GB/s algbw), NVLSTree across nodes (20.9 us per tree level each way, a
// network algbw of 124 GB/s, counted twice at 2 nodes), Ring (3.4 us per NVLink step, 14 us per
// network step, 390 GB/s busbw over the network).
constexpr double kNvlsLat = 25, kNvlsBw = 480, kTreeLat = 20.9, kTreeBw = 124;
constexpr double kRingIntra = 3.4, kRingInter = 14, kRingNet = 390;

double trueTime(Algo a, const Scale& s, uint64_t bytes) {
  const double S = static_cast<double>(bytes) / 1e3;  // KB: bytes / (GB/s) in us
  const int n = s.ranks(), N = s.ncclNodes();
  const int levels = N <= 1 ? 0 : static_cast<int>(std::floor(std::log2(N)));
  switch (a) {
    case Algo::kNvls: return kNvlsLat + S / kNvlsBw;
    case Algo::kNvlsTree: return 2 * levels * kTreeLat + S / (kTreeBw * (N <= 2 ? 2 : 1));
    case Algo::kRing: {
      const int inter = 2 * (N - 1), steps = 2 * (n - 1);
      return inter * kRingInter + (steps - inter) * kRingIntra + S * 2.0 * (n - 1) / n / kRingNet;
    }
    default: return 0;
  }
}

std::vector<uint64_t> sweep() {
  std::vector<uint64_t> sizes;
  for (uint64_t b = 1 << 20; b <= (uint64_t{8} << 30); b *= 4) sizes.push_back(b);
  return sizes;
}

std::vector<Point> syntheticPoints() {
  std::vector<Point> pts;
  for (uint64_t b : sweep()) {
    pts.push_back({at(1, 8), b, trueTime(Algo::kNvls, at(1, 8), b), std::nullopt, "1x8"});
    pts.push_back({at(2, 8), b, trueTime(Algo::kNvlsTree, at(2, 8), b), std::nullopt, "2x8"});
    pts.push_back({at(3, 8), b, trueTime(Algo::kRing, at(3, 8), b), std::nullopt, "3x8"});
    pts.push_back({at(4, 8), b, trueTime(Algo::kRing, at(4, 8), b), std::nullopt, "4x8"});
  }
  return pts;
}

TEST(ScaleModel, SyntheticClusterRecoveredWithin2Percent) {
  const ScaleFit fit =
      fitScaleModel(Coll::kAllReduce, syntheticPoints(), {.nvls = true, .netBusbwGBps = {}});
  const FittedAlgo* ring = fit.find(Algo::kRing);
  const FittedAlgo* tree = fit.find(Algo::kNvlsTree);
  const FittedAlgo* nvls = fit.find(Algo::kNvls);
  ASSERT_TRUE(ring && tree && nvls);
  EXPECT_NEAR(1 / (ring->terms[1].coef * 1e3), kRingNet, kRingNet * 0.02);
  EXPECT_NEAR(ring->terms[2].coef, kRingInter, kRingInter * 0.02);
  EXPECT_NEAR(ring->terms[3].coef, kRingIntra, kRingIntra * 0.02);
  EXPECT_NEAR(1 / (tree->terms[0].coef * 1e3), kTreeBw, kTreeBw * 0.02);
  EXPECT_NEAR(tree->terms[1].coef, kTreeLat, kTreeLat * 0.02);
  EXPECT_NEAR(1 / (nvls->terms[0].coef * 1e3), kNvlsBw, kNvlsBw * 0.02);
  // 16 and 64 nodes: every size within 2% of the faster true algorithm, and the same algorithm.
  for (int nodes : {16, 64}) {
    for (uint64_t b : sweep()) {
      const Scale s = at(nodes, 8);
      const double ringT = trueTime(Algo::kRing, s, b), treeT = trueTime(Algo::kNvlsTree, s, b);
      auto p = predictAt(fit, s, b);
      ASSERT_TRUE(p);
      EXPECT_NEAR(p->timeUs, std::min(ringT, treeT), std::min(ringT, treeT) * 0.02)
          << nodes << " nodes, " << b << " B";
      EXPECT_EQ(p->algo, ringT < treeT ? Algo::kRing : Algo::kNvlsTree);
    }
  }
}

TEST(ScaleModel, SyntheticAlltoallRecoveredWithin2Percent) {
  // 4 us per peer, 600 GB/s on NVLink, 45 GB/s per GPU over the network; across nodes the
  // network part is the longer one, and the two run at once.
  auto truth = [](const Scale& s, uint64_t bytes) {
    const double S = static_cast<double>(bytes) / 1e3;
    const int n = s.ranks(), g = s.perNcclNode();
    if (s.ncclNodes() == 1) return 4.0 * (n - 1) + S * (n - 1) / n / 600;
    return 4.0 * (n - 1) + std::max(S * (g - 1) / n / 600, S * (n - g) / n / 45);
  };
  std::vector<Point> pts;
  for (uint64_t b : sweep()) {
    for (Scale s : {at(1, 4, 16), at(16, 4, 16), at(32, 4, 16)})
      pts.push_back({s, b, truth(s, b), std::nullopt, s.name()});
  }
  const ScaleFit fit = fitScaleModel(Coll::kAllToAll, pts, ClusterTraits{});
  for (uint64_t b : sweep()) {
    auto p = predictAt(fit, at(48, 4, 16), b);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->algo, Algo::kP2p);
    EXPECT_NEAR(p->timeUs, truth(at(48, 4, 16), b), truth(at(48, 4, 16), b) * 0.02) << b;
  }
}

TEST(ScaleModel, ReproducesItsInputsWithinTheirResiduals) {
  // The synthetic points with a deterministic +-3% wobble: each fitted point's time lies inside
  // the band its algorithm's fit gives at its own scale and size.
  std::vector<Point> pts = syntheticPoints();
  for (size_t i = 0; i < pts.size(); ++i) pts[i].timeUs *= 1 + 0.03 * std::sin(i * 1.7);
  const ScaleFit fit = fitScaleModel(Coll::kAllReduce, pts, {.nvls = true, .netBusbwGBps = {}});
  for (size_t i = 0; i < fit.points.size(); ++i) {
    const Point& pt = fit.points[i];
    const FittedAlgo* f = fit.find(*fit.labels[i]);
    ASSERT_TRUE(f);
    auto t = algoTimeUs(*f, Coll::kAllReduce, pt.scale, pt.bytes);
    ASSERT_TRUE(t);
    EXPECT_GE(pt.timeUs, *t * (1 + f->lo) * (1 - 1e-9)) << pt.source << " " << pt.bytes;
    EXPECT_LE(pt.timeUs, *t * (1 + f->hi) * (1 + 1e-9)) << pt.source << " " << pt.bytes;
    EXPECT_LE(
        std::abs(
            f->residuals[std::find(f->points.begin(), f->points.end(), i) - f->points.begin()]),
        0.031);
  }
  // The rule (fastest) picks the algorithm the point ran wherever the true model's own fastest
  // is that algorithm: at 2 nodes the tree, above 2 nodes the ring from 64 MiB.
  auto big = predictAt(fit, at(3, 8), uint64_t{1} << 30);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->algo, Algo::kRing);
  auto two = predictAt(fit, at(2, 8), uint64_t{1} << 30);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->algo, Algo::kNvlsTree);
}

TEST(ScaleModel, AssumedAlgorithmFollowsNcclsTwoNodeTree) {
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(1, 8), true), Algo::kNvls);
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(1, 8), false), Algo::kRing);
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(2, 8), true), Algo::kNvlsTree);
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(2, 8), false), Algo::kTree);
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(4, 8), true), Algo::kRing);
  // An NVL72 rack of 18 trays is one NCCL node; two racks are the 2-node case.
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(18, 4, 18), true), Algo::kNvls);
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(36, 4, 18), true), Algo::kNvlsTree);
  EXPECT_EQ(assumedAlgo(Coll::kAllReduce, at(360, 4, 18), true), Algo::kRing);
  EXPECT_EQ(assumedAlgo(Coll::kAllGather, at(2, 8), true), Algo::kRing);
  EXPECT_EQ(assumedAlgo(Coll::kAllToAll, at(2, 8), true), Algo::kP2p);
}

TEST(ScaleModel, RecordedChoiceOverridesTheAssumption) {
  std::vector<Point> pts;
  for (uint64_t b : sweep())
    pts.push_back({at(2, 8), b, trueTime(Algo::kRing, at(2, 8), b), Algo::kRing, "ring"});
  const ScaleFit fit = fitScaleModel(Coll::kAllReduce, pts, {.nvls = true, .netBusbwGBps = {}});
  ASSERT_EQ(fit.algos.size(), 1u);
  EXPECT_EQ(fit.algos[0].algo, Algo::kRing);
  EXPECT_NEAR(1 / (fit.algos[0].terms[1].coef * 1e3), kRingNet, kRingNet * 0.02);
  EXPECT_EQ(fit.why[0], "recorded by --nccl-choice");
}

TEST(ScaleModel, AlgorithmFromTheNcclChoiceNote) {
  EXPECT_EQ(algoFromNote("NCCL ran NVLSTree/Simple"), Algo::kNvlsTree);
  EXPECT_EQ(algoFromNote("NCCL ran Ring/LL128, Tree/LL"), Algo::kRing);
  EXPECT_EQ(algoFromNote("NCCL ran Tree/LL; NOT the forced Ring/LL"), Algo::kTree);
  EXPECT_FALSE(algoFromNote("NCCL ran CollNetDirect/Simple"));
  EXPECT_FALSE(algoFromNote(""));
}

TEST(ScaleModel, NoNetworkTermNoPrediction) {
  std::vector<Point> pts;
  for (uint64_t b : sweep())
    pts.push_back({at(1, 8), b, trueTime(Algo::kNvls, at(1, 8), b), std::nullopt, "1x8"});
  ScaleFit fit = fitScaleModel(Coll::kAllReduce, pts, {.nvls = true, .netBusbwGBps = {}});
  EXPECT_FALSE(predictAt(fit, at(4, 8), 1 << 30));
  EXPECT_NE(whyNot(fit, at(4, 8)).find("--net-busbw"), std::string::npos);
  // Given the network's busbw, the ring predicts: bandwidth only, its latencies unknown.
  fit = fitScaleModel(Coll::kAllReduce, pts, {.nvls = true, .netBusbwGBps = 390.0});
  auto p = predictAt(fit, at(4, 8), uint64_t{8} << 30);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->algo, Algo::kRing);
  EXPECT_NEAR(p->busbw, 390, 0.01);
}

TEST(ScaleModel, NoPointNoFit) {
  EXPECT_THROW(fitScaleModel(Coll::kAllReduce, {}, {}), UsageError);
}

}  // namespace
}  // namespace cb::predict
