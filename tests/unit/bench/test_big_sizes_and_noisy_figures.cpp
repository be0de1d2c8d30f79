// Robustness under big sizes and noisy figures: the memory estimate of a sweep and the check
// against the host, and the side-by-side view's winners (only beyond the measured spread) and
// ratios to a baseline.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "bench/MemoryFit.h"
#include "bench/Report.h"
#include "common/Lines.h"
#include "core/Error.h"
#include "core/Text.h"

namespace {

using cb::Collective;
using cb::Placement;
using cb::ResultRecord;

TEST(MemoryFit, EstimatesBuffersVerificationAndScratch) {
  cb::SweepOptions o;
  o.collectives = {Collective::kAllReduce};
  o.maxBytes = 1 << 20;
  o.variants = {"mpi"};  // no hand-written scratch
  auto need = cb::sweepMemoryPerRank(o, 4);
  // Out of place send + receive; in place one buffer of the larger; the pool keeps both.
  EXPECT_EQ(need.buffers, 2u << 20);
  EXPECT_EQ(need.verification, 2u << 20);  // one chunk of output and one of expected values
  EXPECT_EQ(need.scratch, 0u);
  o.checkRounds = 0;
  EXPECT_EQ(cb::sweepMemoryPerRank(o, 4).verification, 1u << 20);

  // AllGather: the receive buffer is n times the send buffer.
  o.collectives = {Collective::kAllGather};
  o.checkRounds = 1;
  need = cb::sweepMemoryPerRank(o, 4);
  // In place the first buffer grows to the receive size while the pool keeps the second.
  EXPECT_EQ(need.buffers, 2u << 20);
  o.inPlace = false;
  EXPECT_EQ(cb::sweepMemoryPerRank(o, 4).buffers, (1u << 20) + (1u << 20) / 4);
  o.inPlace = true;

  // Hand-written algorithms bring their scratch (one-shot gathers every rank's input).
  o.collectives = {Collective::kAllReduce};
  o.variants = {"oneshot"};
  EXPECT_GE(cb::sweepMemoryPerRank(o, 4).scratch, 3u << 20);
}

TEST(MemoryFit, RefusesWhatDoesNotFitWithTheFigures) {
  cb::MemoryNeed need{2ull << 40, 3ull << 40, 0};
  cb::HostMemory host{20ull << 30, "MemAvailable"};
  try {
    cb::checkMemoryFit(need, 2, host, 1ull << 40);
    FAIL() << "1 TiB accepted";
  } catch (const cb::UsageError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("1 TiB"), std::string::npos) << m;
    EXPECT_NE(m.find("5 TiB per rank"), std::string::npos) << m;
    EXPECT_NE(m.find("x 2 rank(s) on this host = 10 TiB"), std::string::npos) << m;
    EXPECT_NE(m.find("20 GiB is available (MemAvailable)"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(cb::checkMemoryFit({1 << 20, 1 << 20, 0}, 64, host, 1 << 20));
  // Overflowing products are refused, not wrapped around.
  EXPECT_THROW(cb::checkMemoryFit({~0ull / 2, 0, 0}, 3, host, 1), cb::UsageError);
  // Nothing known about the host: nothing to refuse on.
  EXPECT_NO_THROW(cb::checkMemoryFit(need, 2, cb::HostMemory{}, 1ull << 40));
}

// Issue 50 defect 1: -b/-e 2^63 summed send + receive to 2^64, which wrapped to "about 0 B per
// rank"; every point then failed out of memory and the run was stored.
TEST(MemoryFit, SizesPastWhatTheEstimateHoldsAreRefusedNotWrapped) {
  cb::SweepOptions o;
  o.collectives = {Collective::kAllReduce};
  o.variants = {"ring"};
  o.minBytes = o.maxBytes = 1ull << 63;
  const cb::MemoryNeed need = cb::sweepMemoryPerRank(o, 2);
  EXPECT_EQ(need.buffers, cb::kSaturatedBytes);
  EXPECT_EQ(need.perRank(), cb::kSaturatedBytes);
  for (const cb::HostMemory& host : {cb::HostMemory{20ull << 30, "MemAvailable"},
                                     cb::HostMemory{~0ull, "MemAvailable"}, cb::HostMemory{}}) {
    try {
      cb::checkMemoryFit(need, 1, host, o.maxBytes);
      FAIL() << "2^63 B accepted with " << host.availableBytes << " available";
    } catch (const cb::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("more than 16 EiB"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(cb::saturatingAdd(1ull << 63, 1ull << 63), cb::kSaturatedBytes);
  EXPECT_EQ(cb::saturatingMul(5, 1ull << 62), cb::kSaturatedBytes);
  EXPECT_EQ(cb::saturatingMul(3, 1ull << 62), 3ull << 62);
  EXPECT_EQ(cb::saturatingMul(0, ~0ull), 0u);
  EXPECT_EQ(cb::saturatingAdd(2, 3), 5u);
}

TEST(MemoryFit, ReadsThisHost) {
  cb::HostMemory m = cb::readHostMemory();
  EXPECT_FALSE(m.source.empty());
  EXPECT_GT(m.availableBytes, 0u);
}

// A measured allreduce point on 2 ranks: its statistic and its iteration times in us.
ResultRecord timed(uint64_t bytes, const std::string& variant, double us,
                   std::vector<double> samplesUs) {
  ResultRecord p;
  p.collective = "allreduce";
  p.variant = variant;
  p.dtype = "float";
  p.op = "sum";
  p.sizeBytes = bytes;
  p.count = bytes / 4;
  p.placement = "out";
  p.nranks = 2;
  p.iterations = static_cast<int64_t>(samplesUs.size());
  p.timeUs = us;
  p.busbw = static_cast<double>(bytes) / (us * 1e-6) / 1e9;
  p.wrong = 0;
  p.samplesUs = std::move(samplesUs);
  return p;
}

const auto lines = cb::test::splitLines;

TEST(SideBySideTable, WinsOnlyBeyondTheSpreadWithRatiosToMpi) {
  cb::SideBySideTable side(Placement::kOut, cb::SideMetric::kTime);
  // 64 B: ring faster but the ranges overlap (noise): no winner.
  side.add(timed(64, "mpi", 10, {8, 9, 10, 11, 12}));
  side.add(timed(64, "ring/shm", 9.5, {8, 9, 9.5, 10, 12}));
  // 1 MiB: ring clearly faster: it wins, 2.00x mpi.
  side.add(timed(1 << 20, "mpi", 200, {190, 195, 200, 205, 210}));
  side.add(timed(1 << 20, "ring/shm", 100, {95, 98, 100, 102, 105}));
  // 0 B: nothing moved, no winner however the times fall.
  side.add(timed(0, "mpi", 5, {5, 5, 5, 5}));
  side.add(timed(0, "ring/shm", 1, {1, 1, 1, 1}));
  side.add(timed(1 << 20, "memcpy", 10, {10, 10, 10, 10}));
  EXPECT_EQ(side.wins(), (std::vector<int>{0, 1, 0}));
  std::string text;
  side.write(cb::TextOut(&text));
  auto l = lines(text);
  ASSERT_GE(l.size(), 12u) << text;
  EXPECT_NE(l[0].find("memcpy = the copy reference, not ranked"), std::string::npos) << l[0];
  EXPECT_EQ(l[2].find('*'), std::string::npos) << l[2];  // 64 B
  EXPECT_NE(l[3].find("100.0*"), std::string::npos) << l[3];
  EXPECT_EQ(l[4].find('*'), std::string::npos) << l[4];  // 0 B
  EXPECT_NE(text.find("# relative to mpi"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00x"), std::string::npos) << text;
  EXPECT_NE(text.find("20.00x"), std::string::npos) << text;  // memcpy vs mpi at 1 MiB

  // A named baseline by algorithm name; without one in the table there is no ratio table.
  auto relativeTo = [](const char* baseline) {
    cb::SideBySideTable t(Placement::kOut, cb::SideMetric::kBusBw, baseline);
    t.add(timed(1 << 20, "mpi", 200, {}));
    t.add(timed(1 << 20, "ring/shm", 100, {}));
    std::string out;
    t.write(cb::TextOut(&out));
    return out;
  };
  text = relativeTo("ring");
  EXPECT_NE(text.find("# relative to ring/shm"), std::string::npos) << text;
  EXPECT_NE(text.find("0.50x"), std::string::npos) << text;
  text = relativeTo("tree");
  EXPECT_EQ(text.find("relative to"), std::string::npos) << text;
}

TEST(Text, Utf8AndPrintableCells) {
  EXPECT_TRUE(cb::validUtf8("nightly \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"));
  EXPECT_FALSE(cb::validUtf8("bad\xff"));
  EXPECT_FALSE(cb::validUtf8("\xc0\xaf"));      // overlong '/'
  EXPECT_FALSE(cb::validUtf8("\xed\xa0\x80"));  // a surrogate
  EXPECT_FALSE(cb::validUtf8("\xe2\x82"));      // cut short
  EXPECT_EQ(cb::printable("a\nb\tc\x01\xff\xc3\xa9"), "a\\nb\\tc\\x01\\xff\xc3\xa9");
}

}  // namespace
