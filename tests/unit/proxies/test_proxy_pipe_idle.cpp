// The split of a pipeline stage's waiting by what the stage it waited for was doing
// (training_proxies/PipeIdle.h), on hand-made timelines with the expected split written out.
#include <gtest/gtest.h>

#include "core/Error.h"
#include "training_proxies/PipeIdle.h"

using namespace cb;
using namespace cb::proxy;

namespace {

constexpr int64_t kMs = 1'000'000;  // ns

TimeSpan ms(int64_t a, int64_t b) { return {a * kMs, b * kMs}; }
ExchangeSpan exchange(int step, int64_t start, int64_t ready, int64_t end, int on) {
  return {step, start * kMs, ready * kMs, end * kMs, on};
}

}  // namespace

TEST(PipeIdle, WaitingOnAComputingStageIsBubbleTheRestTransfer) {
  // Stage 0 computes 10 ms, then sends (2 ms); stage 1 posted its receive at 0.
  std::vector<StageTimeline> t(2);
  t[0].compute = {ms(0, 10)};
  t[0].exchanges = {exchange(0, 10, 10, 12, -1)};
  t[1].exchanges = {exchange(0, 0, 10, 12, 0)};
  t[1].compute = {ms(12, 20)};
  auto s1 = splitPipeIdle(1, t, 1);
  EXPECT_NEAR(s1.bubble[0], 0.010, 1e-12);
  EXPECT_NEAR(s1.transfer[0], 0.002, 1e-12);
  EXPECT_EQ(s1.exposed[0], 0);
  EXPECT_EQ(s1.other[0], 0);
  auto s0 = splitPipeIdle(0, t, 1);
  EXPECT_EQ(s0.bubble[0], 0);
  EXPECT_NEAR(s0.transfer[0], 0.002, 1e-12);
}

TEST(PipeIdle, AWaitIsFollowedThroughTheStageItWaitedOn) {
  // Stage 2 waits from 0 to 9 ms on stage 1, which waited on stage 0 until 4 ms (stage 0
  // computing 0-3 ms, then in a collective until 4), moved the message until 6, then computed
  // until 8 and was in a host gap until 9. Stage 2: 3 ms bubble (stage 0's compute) + 2 ms
  // (stage 1's compute), 1 ms exposed, 2 ms transfer, 1 ms other; then its own 1 ms transfer.
  std::vector<StageTimeline> t(3);
  t[0].compute = {ms(0, 3)};
  t[0].collectives = {ms(3, 4)};
  t[0].exchanges = {exchange(0, 4, 4, 6, -1)};
  t[1].exchanges = {exchange(0, 0, 4, 6, 0), exchange(0, 9, 9, 10, -1)};
  t[1].compute = {ms(6, 8)};
  t[2].exchanges = {exchange(0, 0, 9, 10, 1)};
  auto s = splitPipeIdle(2, t, 1);
  EXPECT_NEAR(s.bubble[0], 0.005, 1e-12);
  EXPECT_NEAR(s.exposed[0], 0.001, 1e-12);
  EXPECT_NEAR(s.transfer[0], 0.003, 1e-12);
  EXPECT_NEAR(s.other[0], 0.001, 1e-12);
}

TEST(PipeIdle, OwnComputeInsideAnExchangeIsNotIdleAndStepsStaySeparate) {
  std::vector<StageTimeline> t(2);
  t[0].compute = {ms(0, 5), ms(20, 30)};
  t[0].exchanges = {exchange(1, 30, 30, 31, -1)};
  // Stage 1 prefetches: computes 0-3 ms inside an exchange that waits on stage 0 until 5.
  t[1].compute = {ms(0, 3)};
  t[1].exchanges = {exchange(0, 0, 5, 6, 0), exchange(1, 20, 30, 31, 0), exchange(7, 0, 1, 2, 0)};
  auto s = splitPipeIdle(1, t, 2);
  EXPECT_NEAR(s.bubble[0], 0.002, 1e-12);
  EXPECT_NEAR(s.transfer[0], 0.001, 1e-12);
  EXPECT_NEAR(s.bubble[1], 0.010, 1e-12);
  EXPECT_NEAR(s.transfer[1], 0.001, 1e-12);
  EXPECT_THROW(splitPipeIdle(2, t, 2), InternalError);
}

TEST(PipeIdle, OrdinalsPairMessagesAndTheLatestCounterpartMakesAnExchangeReady) {
  // Stage 1 of 3: "send to 2 + receive from 0" posted at 5 ms; stage 0's second send (the first
  // was at 1 ms) came at 7 ms, stage 2's first receive at 9 ms.
  std::vector<PipePostings> byStage(3);
  byStage[0].record({true, 1, 0}, 1 * kMs);
  byStage[0].record({true, 1, 1}, 7 * kMs);
  byStage[2].record({false, 1, 0}, 9 * kMs);
  auto [ready, on] = PipePostings::ready(1, 5 * kMs, {{true, 2, 0}, {false, 0, 1}}, byStage);
  EXPECT_EQ(ready, 9 * kMs);
  EXPECT_EQ(on, 2);
  std::tie(ready, on) = PipePostings::ready(1, 5 * kMs, {{false, 0, 0}}, byStage);
  EXPECT_EQ(ready, 5 * kMs);
  EXPECT_EQ(on, -1);
  // A counterpart never posted, or a message out of order, is a program error.
  EXPECT_THROW(PipePostings::ready(1, 0, {{false, 0, 2}}, byStage), InternalError);
  EXPECT_THROW(byStage[0].record({true, 1, 5}, 0), InternalError);
}

TEST(PipeIdle, EncodingsRoundTripAndRefuseDamage) {
  PipePostings p;
  p.record({true, 1, 0}, 3);
  p.record({true, 1, 1}, -4);
  p.record({false, 2, 0}, 1LL << 50);
  auto q = PipePostings::decode(p.encode());
  EXPECT_EQ(q.sends, p.sends);
  EXPECT_EQ(q.recvs, p.recvs);
  StageTimeline t;
  t.compute = {ms(1, 2)};
  t.collectives = {ms(3, 4)};
  t.exchanges = {exchange(2, 5, 6, 7, 1)};
  auto u = StageTimeline::decode(t.encode());
  ASSERT_EQ(u.exchanges.size(), 1u);
  EXPECT_EQ(u.exchanges[0].ready, 6 * kMs);
  EXPECT_EQ(u.exchanges[0].on, 1);
  EXPECT_EQ(u.collectives[0].end, 4 * kMs);
  for (const std::string& bad : {p.encode(), t.encode()}) {
    EXPECT_THROW(PipePostings::decode(bad.substr(0, bad.size() - 3)), InternalError);
    EXPECT_THROW(StageTimeline::decode(bad + "x"), InternalError);
  }
}

TEST(PipeIdle, WaitBeyondTheSchedulesIdleIsTheTransfers) {
  // 10 ms waited where the schedule idles 6 ms: 6 ms bubble; the 4 ms beyond go to transfer and
  // exposed in their proportion, 3 : 1.
  WaitSplit w = splitWait(10e-3, 6e-3, 3e-3, 1e-3);
  EXPECT_NEAR(w.bubble, 6e-3, 1e-15);
  EXPECT_NEAR(w.transfer, 3e-3 + 3e-3, 1e-15);
  EXPECT_NEAR(w.exposed, 1e-3 + 1e-3, 1e-15);
  // Short of the schedule's idle by 1 ms: 1 ms of the stage's own transfer lay in the bubble.
  w = splitWait(5e-3, 6e-3, 3e-3, 1e-3);
  EXPECT_NEAR(w.bubble, 6e-3, 1e-15);
  EXPECT_NEAR(w.transfer, 2e-3, 1e-15);
  EXPECT_DOUBLE_EQ(w.exposed, 1e-3);
  // ... but never more than the transfer there was: idle is not invented.
  w = splitWait(2e-3, 6e-3, 1e-3, 1e-3);
  EXPECT_NEAR(w.bubble, 3e-3, 1e-15);
  EXPECT_DOUBLE_EQ(w.transfer, 0);
  EXPECT_DOUBLE_EQ(w.exposed, 1e-3);
  // Nothing seen of transfers or collectives: the excess is transfer (a pure pipeline's).
  w = splitWait(8e-3, 6e-3, 0, 0);
  EXPECT_NEAR(w.bubble, 6e-3, 1e-15);
  EXPECT_NEAR(w.transfer, 2e-3, 1e-15);
  EXPECT_DOUBLE_EQ(w.exposed, 0);
}
