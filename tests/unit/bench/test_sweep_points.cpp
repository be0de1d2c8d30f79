// The engine's per-point behaviour: a run-time error fails its point and the sweep goes on; the
// timing modes take the samples their tools take; chunked host verification agrees with the
// whole-buffer form and with NCCL's avg.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/Report.h"
#include "bench/Sweep.h"
#include "bench/TimingLoops.h"
#include "bench/Verify.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "core/Half.h"
#include "core/Reduce.h"

namespace cb {
namespace {

// Counts its calls and throws at one size: an NcclError (a failure) or an EnvironmentError (a
// refusal). The sweeps below run without check rounds, so the call computes nothing.
class ScriptedCall final : public PreparedCollective {
 public:
  ScriptedCall(bool fail, bool environment, std::atomic<int>* calls)
      : fail_(fail), environment_(environment), calls_(calls) {}
  void run(const void*, void*, Deadline) override {
    ++*calls_;
    if (!fail_) return;
    if (environment_) throw EnvironmentError("injected: refused at run time");
    throw NcclError("injected failure at run time");
  }

 private:
  bool fail_, environment_;
  std::atomic<int>* calls_;
};

// Runs the sweep on a local world of `n` ranks; rank 0's points and summary.
std::vector<ResultRecord> sweepLocal(int n, const SweepOptions& o,
                                     SweepSummary* summary = nullptr) {
  std::vector<ResultRecord> points;
  LocalWorld::run(n, [&](Communicator& comm) {
    SweepSink sink;
    sink.onPoint = [&](const ResultRecord& p) { points.push_back(p); };  // rank 0 only
    Team team(comm);
    auto s = runSweep(team, o, sink);
    if (comm.rank() == 0 && summary) *summary = s;
  });
  return points;
}

VariantInfo scripted(const std::string& name, uint64_t failBytes, bool environment,
                     std::atomic<int>* calls) {
  VariantInfo v;
  v.coll = Collective::kAllReduce;
  v.name = name;
  v.backend = "test";
  v.description = "test variant";
  v.prepare = [=](Team& team, const CollArgs& args, const VariantOptions&) {
    return std::make_unique<ScriptedCall>(algBytes(args, team.size()) == failBytes, environment,
                                          calls);
  };
  return v;
}

SweepOptions smallSweep(const Registry& r) {
  SweepOptions o;
  o.collectives = {Collective::kAllReduce};
  o.minBytes = 8;
  o.maxBytes = 64;
  o.iterations = 3;
  o.warmup = 1;
  o.checkRounds = 0;
  o.inPlace = false;
  o.timeoutSeconds = 30;
  o.registry = &r;
  o.variantOptions.schedule.transport = "local";
  return o;
}

// What a point does not know stays unset (no root, not verified, not timed) from the engine on,
// and `show --format nccl-tests` prints it N/A; a record nccl-tests has no test for is left out.
TEST(SweepPoints, AnUnsupportedPointLeavesItsUnknownValuesUnset) {
  Registry r;
  VariantInfo v = scripted("never", 0, false, nullptr);
  v.coll = Collective::kAllGather;
  v.unsupported = [](Team&, const CollArgs&, const VariantOptions&) {
    return std::optional<std::string>("why not");
  };
  r.add(v);
  SweepOptions o = smallSweep(r);
  o.collectives = {Collective::kAllGather};
  o.dtypes = {DataType::kHalf};
  o.minBytes = o.maxBytes = 4096;
  o.inPlace = true;
  o.outOfPlace = false;
  auto points = sweepLocal(4, o);
  ASSERT_EQ(points.size(), 1u);
  const ResultRecord& p = points[0];
  EXPECT_EQ(p.status, ResultStatus::kUnsupported);
  EXPECT_EQ(p.message, "why not");
  EXPECT_EQ(p.collective, "allgather");
  EXPECT_EQ(p.dtype, "half");
  EXPECT_EQ(p.op, "none");  // allgather has no reduction
  EXPECT_EQ(p.placement, "in");
  EXPECT_EQ(p.count, 4096u / 2 / 4);
  EXPECT_FALSE(p.root.has_value());
  EXPECT_FALSE(p.wrong.has_value());
  EXPECT_FALSE(p.algbw.has_value());
  EXPECT_FALSE(p.iterations.has_value());
  EXPECT_FALSE(p.timeKnown);
  EXPECT_TRUE(ncclTestsPrintable(p));
  std::string text;
  NcclTestsTable table(Collective::kAllGather, TextOut(&text), {false, true});
  table.add(p);
  EXPECT_NE(text.find("     -1      N/A     N/A     N/A    N/A"), std::string::npos) << text;
  ResultRecord proxy = p;
  proxy.collective = "proxy-dp";
  EXPECT_FALSE(ncclTestsPrintable(proxy));
}

TEST(SweepPoints, RunTimeErrorFailsThePointAndTheSweepGoesOn) {
  std::atomic<int> calls{0};
  Registry r;
  r.add(scripted("boom", 16, false, &calls));
  r.add(scripted("refused", 32, true, &calls));
  SweepOptions o = smallSweep(r);
  SweepSummary summary;
  auto points = sweepLocal(2, o, &summary);
  // 4 sizes x 2 variants, every one reported.
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(summary.points, 8);
  EXPECT_EQ(summary.failed, 1);
  EXPECT_EQ(summary.unsupported, 1);
  for (const auto& p : points) {
    if (p.variant == "boom" && p.sizeBytes == 16) {
      EXPECT_EQ(p.status, ResultStatus::kFailed);
      EXPECT_NE(p.message.find("injected failure"), std::string::npos) << p.message;
      EXPECT_TRUE(p.samplesUs.empty());
    } else if (p.variant == "refused" && p.sizeBytes == 32) {
      EXPECT_EQ(p.status, ResultStatus::kUnsupported);
      EXPECT_NE(p.message.find("refused at run time"), std::string::npos) << p.message;
    } else {
      EXPECT_TRUE(p.ok()) << p.variant << " " << p.sizeBytes << ": " << p.message;
      EXPECT_EQ(p.samplesUs.size(), 3u);
    }
  }
}

TEST(SweepPoints, TimingModesTakeTheirToolsSamples) {
  std::atomic<int> calls{0};
  Registry r;
  r.add(scripted("ok", 0, false, &calls));
  for (TimingMode mode :
       {TimingMode::kPerCall, TimingMode::kNcclTests, TimingMode::kOsu, TimingMode::kImb}) {
    SweepOptions o = smallSweep(r);
    o.maxBytes = 8;
    o.iterations = 5;
    o.warmup = 2;
    o.timing = mode;
    calls = 0;
    auto points = sweepLocal(2, o);
    ASSERT_EQ(points.size(), 1u);
    const auto& p = points[0];
    EXPECT_TRUE(p.ok()) << p.message;
    // Every mode makes warm-up + iterations calls on each of the 2 ranks.
    EXPECT_EQ(calls.load(), 2 * (5 + 2)) << timingModeName(mode);
    EXPECT_EQ(p.samplesUs.size(), static_cast<size_t>(samplesPerRank(mode, 5)))
        << timingModeName(mode);
    EXPECT_EQ(p.rankSamplesUs.size(), 2 * p.samplesUs.size());
    EXPECT_EQ(parseTimingMode(timingModeName(mode)), mode);
  }
  EXPECT_THROW(parseTimingMode("osu7"), UsageError);
  EXPECT_EQ(timingDefaults(TimingMode::kPerCall).average, 3);
  EXPECT_EQ(timingDefaults(TimingMode::kOsu).average, 1);
  EXPECT_EQ(timingDefaults(TimingMode::kNcclTests).average, 1);
  EXPECT_EQ(timingDefaults(TimingMode::kImb).statistic, Statistic::kMean);
}

// Integer avg: NCCL's ncclDevSumPostDiv truncates toward zero in the element type's width; the
// divisor must not be cast to the element type (int8 n = 200 would be negative, uint8 n = 256
// zero).
TEST(VerifyAvg, IntegerDivisorIsNotCastToTheElementType) {
  std::vector<int8_t> s8{100, -100, 127, -7};
  scaleForAvg(DataType::kInt8, s8.data(), s8.size(), 200);
  EXPECT_EQ(s8, (std::vector<int8_t>{0, 0, 0, 0}));
  std::vector<int8_t> t8{-7, 7};
  scaleForAvg(DataType::kInt8, t8.data(), t8.size(), 3);
  EXPECT_EQ(t8, (std::vector<int8_t>{-2, 2}));
  std::vector<uint8_t> u8{255, 0};
  scaleForAvg(DataType::kUint8, u8.data(), u8.size(), 256);
  EXPECT_EQ(u8, (std::vector<uint8_t>{0, 0}));
  std::vector<uint8_t> v8{200};
  scaleForAvg(DataType::kUint8, v8.data(), v8.size(), 129);
  EXPECT_EQ(v8[0], 1);
  std::vector<int64_t> s64{-9};
  scaleForAvg(DataType::kInt64, s64.data(), s64.size(), 4);
  EXPECT_EQ(s64[0], -2);
}

// What NCCL computes for float avg: each rank's value times (1/n) rounded to the type, summed in
// the type in rank order (one of the orders NCCL may use).
template <class T>
std::vector<T> ncclPreMulSum(const CollArgs& args, int n, uint64_t seed) {
  std::vector<std::vector<T>> in(n, std::vector<T>(args.count));
  for (int r = 0; r < n; ++r) fillInput(args, r, n, seed, in[r].data());
  std::vector<T> out(args.count);
  using A = Arith<T>;
  auto scalar = A::store(static_cast<typename A::Type>(1.0 / n));
  for (size_t i = 0; i < args.count; ++i) {
    T acc = A::store(0);
    for (int r = n - 1; r >= 0; --r) {  // reverse order: differs from the reference's sum
      T prod = A::store(A::load(in[r][i]) * A::load(scalar));
      acc = A::store(A::load(acc) + A::load(prod));
    }
    out[i] = acc;
  }
  return out;
}

template <class T>
void expectNcclAvgAccepted(DataType t, int n) {
  CollArgs args{Collective::kAllReduce, t, RedOp::kAvg, 0, 4096};
  for (uint64_t seed : {3u, 11u, 12345u}) {
    std::vector<T> expected(args.count);
    ASSERT_TRUE(expectedOutput(args, 0, n, seed, expected.data()));
    auto nccl = ncclPreMulSum<T>(args, n, seed);
    EXPECT_EQ(countWrong(args, n, nccl.data(), expected.data(), args.count), 0)
        << dataTypeName(t) << " n=" << n << " seed=" << seed;
    // Sum-then-divide (the host algorithms) passes too.
    std::vector<T> exact(expected);
    EXPECT_EQ(countWrong(args, n, exact.data(), expected.data(), args.count), 0);
    // A result that is one off, or never written, is caught.
    std::vector<T> off(expected);
    using A = Arith<T>;
    off[7] = A::store(A::load(off[7]) + 1);
    std::memset(off.data() + 100, 0xa5, sizeof(T));
    EXPECT_EQ(countWrong(args, n, off.data(), expected.data(), args.count), 2)
        << dataTypeName(t) << " n=" << n;
  }
}

TEST(VerifyAvg, FloatAvgAcceptsNcclsPreMultipliedSumAtAnyRankCount) {
  for (int n : {3, 5, 6, 7, 12, 100}) {
    expectNcclAvgAccepted<float>(DataType::kFloat, n);
    expectNcclAvgAccepted<Half>(DataType::kHalf, n);
    expectNcclAvgAccepted<BFloat16>(DataType::kBFloat16, n);
    expectNcclAvgAccepted<double>(DataType::kDouble, n);
  }
}

TEST(VerifyAvg, PowerOfTwoRankCountsStayBitExact) {
  CollArgs args{Collective::kAllReduce, DataType::kHalf, RedOp::kAvg, 0, 64};
  std::vector<Half> expected(args.count);
  ASSERT_TRUE(expectedOutput(args, 0, 8, 5, expected.data()));
  std::vector<Half> got(expected);
  got[3].bits ^= 1;  // one ulp: exact comparison at n = 8
  EXPECT_EQ(countWrong(args, 8, got.data(), expected.data(), args.count), 1);
}

TEST(VerifyChunks, RangesAndChunkedCheckMatchTheWholeBuffer) {
  const int n = 3;
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kAllToAll,
                       Collective::kReduceScatter, Collective::kBroadcast, Collective::kSendRecv,
                       Collective::kReduce}) {
    // More than two chunks per rank, with a ragged end.
    CollArgs args{c, DataType::kInt32, RedOp::kSum, 1, kVerifyChunkElements + 12345};
    if (c == Collective::kAllGather || c == Collective::kAllToAll) args.count = 700001;
    for (int rank = 0; rank < n; ++rank) {
      const size_t rc = recvCount(args, n), sc = sendCount(args, n);
      std::vector<int32_t> whole(rc), part(rc);
      bool defined = expectedOutput(args, rank, n, 9, whole.data());
      // Expected ranges that straddle block boundaries.
      for (size_t first = 0; first < rc; first += 333333) {
        size_t count = std::min<size_t>(333333, rc - first);
        EXPECT_EQ(expectedRange(args, rank, n, 9, first, count, part.data() + first), defined);
      }
      if (defined) {
        EXPECT_EQ(whole, part) << collectiveName(c) << " rank " << rank;
      }
      // Input written through the chunked upload equals fillInput.
      std::vector<int32_t> input(sc), uploaded(sc);
      fillInput(args, rank, n, 9, input.data());
      uploadInput(args, rank, n, 9, [&](size_t off, const void* host, size_t bytes) {
        std::memcpy(reinterpret_cast<char*>(uploaded.data()) + off, host, bytes);
      });
      EXPECT_EQ(input, uploaded);
      // The threaded check finds exactly the corrupted elements.
      std::vector<int32_t> got(whole);
      if (defined) {
        got[0] += 1;
        got[rc - 1] += 1;
        got[rc / 2] += 1;
      }
      for (int threads : {1, 3}) {
        int64_t wrong = checkOutput(
            args, rank, n, 9,
            [&](size_t off, void* host, size_t bytes) {
              std::memcpy(host, reinterpret_cast<const char*>(got.data()) + off, bytes);
            },
            threads);
        EXPECT_EQ(wrong, defined ? 3 : -1) << collectiveName(c) << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace cb
