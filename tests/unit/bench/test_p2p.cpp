// Point-to-point benchmarks in the local (threads) world: latency, bw and bibw over the local
// transport give positive figures, the right number of samples on both ranks and no wrong byte;
// OSU's sizes and iteration counts; pair parsing and validation; transports that can't run here;
// the tables (row format, side-by-side winners, the all-pairs matrix).
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <numeric>

#include "bench/P2p.h"
#include "bench/P2pReport.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"

namespace cb {
namespace {

// Runs the benchmark on n thread ranks and returns what rank 0's sink received.
struct Collected {
  std::vector<P2pPoint> points;
  std::vector<std::string> skipped;
  std::vector<RankPair> pairEnds;
  P2pSummary summary;
};

Collected runLocal(int n, const P2pOptions& o) {
  Collected c;
  std::mutex m;
  LocalWorld::run(n, [&](Communicator& comm) {
    P2pSink sink;
    sink.onPoint = [&](const P2pPoint& p) { c.points.push_back(p); };
    sink.onSkipped = [&](const std::string& t, const std::string&) { c.skipped.push_back(t); };
    sink.onPairEnd = [&](RankPair p) { c.pairEnds.push_back(p); };
    Team team(comm, TransportOptions{o.timeoutSeconds});
    P2pSummary s = runP2p(team, o, sink);
    std::lock_guard lk(m);
    if (comm.rank() == 0) c.summary = s;
  });
  return c;
}

P2pOptions localOptions(P2pTest t, uint64_t maxBytes, int iters) {
  P2pOptions o = p2pDefaults(t);
  o.transports = {"local"};
  o.maxBytes = maxBytes;
  o.iterations = iters;
  o.warmup = 3;
  o.window = 8;
  o.timeoutSeconds = 60;
  return o;
}

void expectSane(const Collected& c, P2pTest t, int iters, size_t expectedPoints) {
  ASSERT_EQ(c.points.size(), expectedPoints);
  EXPECT_EQ(c.summary.points, static_cast<int>(expectedPoints));
  EXPECT_EQ(c.summary.wrongTotal, 0);
  EXPECT_FALSE(c.summary.interrupted);
  for (const P2pPoint& p : c.points) {
    SCOPED_TRACE(testing::Message() << p2pTestName(t) << " " << p.bytes << " B");
    EXPECT_EQ(p.test, t);
    EXPECT_EQ(p.transport, "local");
    EXPECT_EQ(p.status, cb::ResultStatus::kOk);
    EXPECT_EQ(p.iterations, iters);
    ASSERT_EQ(p.samples.size(), static_cast<size_t>(iters));
    ASSERT_EQ(p.rankSamples.size(), static_cast<size_t>(2 * iters));
    // The reported samples are the initiator's: the first half of the per-rank samples.
    EXPECT_TRUE(std::equal(p.samples.begin(), p.samples.end(), p.rankSamples.begin()));
    for (double s : p.rankSamples) EXPECT_GT(s, 0);
    EXPECT_GT(p.timeSeconds, 0);
    EXPECT_LT(p.timeSeconds, 1.0);  // a local message is not a second
    EXPECT_EQ(p.summary.n, static_cast<size_t>(iters));
    EXPECT_DOUBLE_EQ(p.timeSeconds, p.summary.median);
    EXPECT_EQ(p.wrong, 0);
    if (p.bytes > 0) {
      EXPECT_GT(p.bandwidthGBs, 0);
    }
  }
}

TEST(P2p, LatencyOverLocalTransport) {
  P2pOptions o = localOptions(P2pTest::kLatency, 4096, 40);
  Collected c = runLocal(2, o);
  expectSane(c, P2pTest::kLatency, 40, 14);  // 0, 1, 2, ..., 4096
  EXPECT_EQ(c.points.front().bytes, 0u);
  EXPECT_EQ(c.points.back().bytes, 4096u);
  for (const P2pPoint& p : c.points) {
    EXPECT_EQ(p.window, 1);
    EXPECT_DOUBLE_EQ(p2pMetric(p), p.timeSeconds * 1e6);
  }
  ASSERT_EQ(c.pairEnds.size(), 1u);
  EXPECT_EQ(c.pairEnds[0], (RankPair{0, 1}));
}

TEST(P2p, BandwidthOverLocalTransport) {
  P2pOptions o = localOptions(P2pTest::kBw, 64 << 10, 12);
  Collected c = runLocal(2, o);
  expectSane(c, P2pTest::kBw, 12, 17);  // 1 .. 64 KiB
  for (const P2pPoint& p : c.points) {
    EXPECT_EQ(p.window, 8);
    // Samples are time per message (window / W): bandwidth = S / t.
    EXPECT_NEAR(p.bandwidthGBs, static_cast<double>(p.bytes) / p.timeSeconds / 1e9,
                1e-9 * p.bandwidthGBs);
  }
}

TEST(P2p, BidirectionalBandwidthCountsBothDirections) {
  P2pOptions o = localOptions(P2pTest::kBibw, 16 << 10, 10);
  o.minBytes = 1024;
  Collected c = runLocal(2, o);
  expectSane(c, P2pTest::kBibw, 10, 5);  // 1K .. 16K
  for (const P2pPoint& p : c.points) {
    EXPECT_NEAR(p.bandwidthGBs, 2.0 * p.bytes / p.timeSeconds / 1e9, 1e-9 * p.bandwidthGBs);
  }
}

TEST(P2p, MeanStatisticIsOsusDefinition) {
  P2pOptions o = localOptions(P2pTest::kBibw, 16 << 10, 10);
  o.minBytes = 1024;
  o.statistic = Statistic::kMean;
  Collected c = runLocal(2, o);
  ASSERT_EQ(c.points.size(), 5u);  // 1K .. 16K
  for (const P2pPoint& p : c.points) {
    EXPECT_EQ(p.status, cb::ResultStatus::kOk);
    EXPECT_EQ(p.wrong, 0);
    // OSU: 2 * size * window * iterations / total time, with samples = window time / W.
    double total = std::accumulate(p.samples.begin(), p.samples.end(), 0.0) * p.window;
    double osu = 2.0 * p.bytes * p.window * p.iterations / total / 1e9;
    EXPECT_NEAR(p.bandwidthGBs, osu, 1e-9 * osu);
  }
}

TEST(P2p, ChosenPairWhileOtherRanksWait) {
  P2pOptions o = localOptions(P2pTest::kLatency, 64, 20);
  o.pairs = {{2, 1}};
  Collected c = runLocal(3, o);
  ASSERT_EQ(c.points.size(), 8u);  // 0 .. 64
  for (const P2pPoint& p : c.points) {
    EXPECT_EQ(p.pair, (RankPair{2, 1}));
    EXPECT_EQ(p.samples.size(), 20u);
    EXPECT_EQ(p.wrong, 0);
  }
  EXPECT_EQ(p2pVariantLabel("local", RankPair{2, 1}), "local@2-1");
  EXPECT_EQ(p2pVariantLabel("shm", RankPair{0, 1}), "shm");
}

TEST(P2p, AllPairsAndMatrix) {
  P2pOptions o = localOptions(P2pTest::kLatency, 8, 10);
  o.minBytes = 8;
  o.pairs = allRankPairs(3);
  Collected c = runLocal(3, o);
  ASSERT_EQ(c.points.size(), 3u);
  EXPECT_EQ(c.pairEnds.size(), 3u);
  std::string m = p2pMatrix(c.points, 3, 8);
  EXPECT_NE(m.find("# Matrix: latency (us) at 8 B over local"), std::string::npos) << m;
  EXPECT_NE(m.find("# slowest link over local:"), std::string::npos) << m;
}

TEST(P2p, OsuSizesAndIterations) {
  P2pOptions lat = p2pDefaults(P2pTest::kLatency);
  std::vector<uint64_t> s = p2pSizes(lat);
  ASSERT_EQ(s.size(), 24u);  // 0, then 1 .. 4 MiB
  EXPECT_EQ(s[0], 0u);
  EXPECT_EQ(s[1], 1u);
  EXPECT_EQ(s.back(), 4u << 20);
  EXPECT_EQ(p2pSizes(p2pDefaults(P2pTest::kBw)).size(), 23u);
  EXPECT_EQ(osuIterations(P2pTest::kLatency, 8192), 10000);
  EXPECT_EQ(osuWarmup(P2pTest::kLatency, 8192), 100);
  EXPECT_EQ(osuIterations(P2pTest::kLatency, 8193), 1000);
  EXPECT_EQ(osuWarmup(P2pTest::kLatency, 8193), 10);
  EXPECT_EQ(osuIterations(P2pTest::kBw, 1), 100);
  EXPECT_EQ(osuWarmup(P2pTest::kBibw, 1), 10);
  EXPECT_EQ(osuIterations(P2pTest::kBibw, 1 << 20), 20);
  EXPECT_EQ(osuWarmup(P2pTest::kBw, 1 << 20), 2);
  P2pOptions one = lat;
  one.minBytes = one.maxBytes = 0;
  EXPECT_EQ(p2pSizes(one), std::vector<uint64_t>{0});
}

TEST(P2p, PairParsingAndValidation) {
  EXPECT_EQ(parseRankPair("0,1"), (RankPair{0, 1}));
  EXPECT_EQ(parseRankPair(" 3 , 2 "), (RankPair{3, 2}));
  for (const char* bad : {"1,1", "0", "0,1,2", "a,b", "-1,2", "1.5,2", ""}) {
    EXPECT_THROW(parseRankPair(bad), UsageError) << bad;
  }
  std::vector<RankPair> ok{{0, 1}, {1, 0}};
  EXPECT_NO_THROW(validatePairs(ok, 2));
  std::vector<RankPair> out{{0, 2}};
  EXPECT_THROW(validatePairs(out, 2), UsageError);
  EXPECT_NO_THROW(validatePairs(out, 3));
  std::vector<RankPair> same{{1, 1}};
  EXPECT_THROW(validatePairs(same, 4), UsageError);
  EXPECT_THROW(validatePairs(ok, 1), UsageError);
  EXPECT_EQ(allRankPairs(4).size(), 6u);
  EXPECT_EQ(allRankPairs(1).size(), 0u);
}

TEST(P2p, BadInputThrowsOnEveryRank) {
  // A pair out of range and a one-rank world are usage errors, before any message moves.
  P2pOptions o = localOptions(P2pTest::kLatency, 8, 5);
  o.pairs = {{0, 5}};
  EXPECT_THROW(runLocal(2, o), UsageError);
  o.pairs = {{0, 1}};
  EXPECT_THROW(runLocal(1, o), UsageError);
  o.window = 0;
  EXPECT_THROW(runLocal(2, o), UsageError);
}

TEST(P2p, TransportsThatCantRunHere) {
  EXPECT_THROW(parseP2pTransports("local,nope"), UsageError);
  EXPECT_EQ(parseP2pTransports("shm,all"), std::vector<std::string>{"all"});
  EXPECT_EQ(parseP2pTransports("local,local,mpi-native"),
            (std::vector<std::string>{"local", "mpi-native"}));
  // Named explicitly but impossible in a threads world: an environment error.
  P2pOptions o = localOptions(P2pTest::kLatency, 8, 5);
  o.transports = {"mpi-native"};
  EXPECT_THROW(runLocal(2, o), EnvironmentError);
  o.transports = {"mpi"};
  EXPECT_THROW(runLocal(2, o), EnvironmentError);
}

TEST(P2p, TableRowsSideBySideAndMatrixText) {
  auto point = [](const std::string& t, uint64_t bytes, double seconds, RankPair pair) {
    P2pPoint p;
    p.test = P2pTest::kLatency;
    p.transport = t;
    p.pair = pair;
    p.bytes = bytes;
    p.iterations = 100;
    p.timeSeconds = seconds;
    p.summary.min = seconds / 2;
    p.summary.max = seconds * 2;
    p.summary.p99 = seconds * 1.5;
    p.wrong = 0;
    return p;
  };
  // OSU's "%-10d%20.2f", then min, max, p99, iterations, #wrong.
  auto pad = [](int n) { return std::string(static_cast<size_t>(n), ' '); };
  EXPECT_EQ(p2pTableRow(point("shm", 8, 1.2e-6, {0, 1})),
            "8" + pad(9) + pad(16) + "1.20" + pad(8) + "0.60" + pad(8) + "2.40" + pad(8) + "1.80" +
                pad(9) + "100" + pad(7) + "0\n");
  std::string header = p2pTableHeader(P2pTest::kBw, "ucx", {0, 1}, 64, LinkClass::kNetwork);
  EXPECT_NE(header.find("# Size        Bandwidth (GB/s)"), std::string::npos) << header;
  EXPECT_NE(header.find("window of 64 sends, then a 4-byte ack"), std::string::npos) << header;
  EXPECT_NE(header.find("pair 0 -> 1 (link network)"), std::string::npos) << header;

  std::vector<P2pPoint> pts{point("mpi", 8, 3e-7, {0, 1}), point("shm", 8, 2e-7, {0, 1}),
                            point("mpi", 16, 3e-7, {0, 1}), point("shm", 16, 4e-7, {0, 1})};
  std::string side = p2pSideBySide(pts);
  EXPECT_NE(side.find("0.20*"), std::string::npos) << side;  // shm wins at 8 B
  EXPECT_NE(side.find("0.30*"), std::string::npos) << side;  // mpi wins at 16 B
  EXPECT_EQ(side.find("0.40*"), std::string::npos) << side;
  EXPECT_EQ(p2pSideBySide(std::span<const P2pPoint>(pts.data(), 1)), "");

  std::vector<P2pPoint> links{point("shm", 8, 1e-6, {0, 1}), point("shm", 8, 1e-6, {0, 2}),
                              point("shm", 8, 4e-6, {1, 2})};
  std::string m = p2pMatrix(links, 3, 8);
  EXPECT_NE(m.find("# slowest link over shm: 1-2 at 4.00 us (4.00x the median link, 1.00 us)"),
            std::string::npos)
      << m;
  EXPECT_EQ(p2pMatrix(links, 3, 16), "");
}

}  // namespace
}  // namespace cb
