// Training proxies without timing: model shapes, DDP buckets, pipeline orders (step by step for
// small p and m), the pipeline simulation's bubble, TP call patterns, scaling arithmetic and the
// cost fit.
#include <gtest/gtest.h>

#include <cmath>

#include "core/Error.h"
#include "training_proxies/Model.h"
#include "training_proxies/Plan.h"
#include "training_proxies/Proxy.h"
#include "training_proxies/Scaling.h"

namespace cb::proxy {
namespace {

TEST(ProxyModel, PresetsMatchPublishedParameterCounts) {
  // Exact where the figure is an exact count; GPT-3's "175 B" is rounded (within 0.3%).
  for (const auto& name : presetNames()) {
    Model m = presetModel(name);
    ASSERT_GT(m.publishedParams, 0u) << name;
    if (m.publishedExact) {
      EXPECT_EQ(m.params(), m.publishedParams) << name;
    } else {
      double ratio = static_cast<double>(m.params()) / static_cast<double>(m.publishedParams);
      EXPECT_NEAR(ratio, 1.0, 0.003) << name << ": " << m.params();
    }
  }
  // By hand. GPT-2 XL (h 1600, 48 blocks, V 50257, 1024 positions): a block is
  // 12 h^2 (Q K V O, two MLP matrices) + 13 h (QKV bias 3h, O bias h, fc1 bias 4h, fc2 bias h,
  // two LayerNorms 2h each); + V h + 1024 h + final LayerNorm 2h = 1,557,611,200.
  const uint64_t h = 1600;
  EXPECT_EQ(presetModel("gpt2-xl").params(),
            48 * (12 * h * h + 13 * h) + 50257 * h + 1024 * h + 2 * h);
  EXPECT_EQ(presetModel("gpt2-xl").params(), 1'557'611'200u);
  // BERT-large (BertModel): embeddings (V 30522, 512 positions, 2 token types, LayerNorm), 24
  // blocks of 12 h^2 + 13 h, the pooler h^2 + h = 335,141,888.
  const uint64_t b = 1024;
  EXPECT_EQ(presetModel("bert-large").params(),
            (30522 + 512 + 2) * b + 2 * b + 24 * (12 * b * b + 13 * b) + b * b + b);
  EXPECT_EQ(presetModel("bert-large").params(), 335'141'888u);
  // Llama-2 7B: blocks of 4 h^2 + 3 h f + 2 h (RMSNorms), embedding and head V h each, final
  // norm h.
  const uint64_t l = 4096, f = 11008;
  EXPECT_EQ(presetModel("llama2-7b").params(),
            32 * (4 * l * l + 3 * l * f + 2 * l) + 2 * 32000 * l + l);
  Model gpt3 = presetModel("GPT-3");
  EXPECT_EQ(gpt3.name, "gpt3-175b");
  EXPECT_EQ(gpt3.hidden, 12288);
  EXPECT_EQ(gpt3.totalBlocks, 96);
  Model l70 = presetModel("llama2-70b");
  EXPECT_EQ(l70.kvHeads, 8);
  EXPECT_THROW(presetModel("gpt5"), UsageError);
}

TEST(ProxyModel, TransformerFlopsFollowTheUsualEstimate) {
  // FFN = 4h, no vocab: forward per block = 24 s h^2 + 4 s^2 h per sample.
  TransformerShape s;
  s.blocks = 2;
  s.hidden = 64;
  s.heads = 4;
  s.ffn = 256;
  s.seq = 32;
  Model m = transformerModel(s);
  ASSERT_EQ(m.layers.size(), 2u);
  const double h = 64, seq = 32;
  EXPECT_DOUBLE_EQ(m.layers[0].fwdFlopsPerSample, 24 * seq * h * h + 4 * seq * seq * h);
  EXPECT_EQ(m.layers[0].activationPerSample, 32u * 64u);
}

TEST(ProxyModel, SliceAndJson) {
  Model m = presetModel("llama2-70b");
  sliceModel(m, 4);
  EXPECT_EQ(m.layers.size(), 4u);
  EXPECT_TRUE(m.sliced());
  EXPECT_THROW(sliceModel(m, 0), UsageError);
  Model j = modelFromJsonText(
      R"({"name":"tiny","blocks":3,"hidden":128,"heads":8,"seq":16,"mlp":"swiglu"})", "t");
  EXPECT_EQ(j.layers.size(), 3u);
  EXPECT_EQ(j.ffn, 512);
  Model l = modelFromJsonText(
      R"({"name":"mlp","layers":[{"params":10,"fwd_flops":100,"activation":4},{"params":20}]})",
      "t");
  EXPECT_EQ(l.params(), 30u);
  EXPECT_THROW(modelFromJsonText("{", "t"), UsageError);
  EXPECT_THROW(modelFromJsonText(R"({"blocks":2})", "t"), UsageError);
}

Model layersOf(std::vector<std::vector<uint64_t>> tensors) {
  Model m;
  m.name = "t";
  for (auto& t : tensors) {
    Layer l;
    l.tensors = t;
    l.block = true;
    m.layers.push_back(l);
  }
  m.totalBlocks = m.slicedBlocks = static_cast<int>(m.layers.size());
  return m;
}

TEST(ProxyPlan, DdpBucketsReverseOrderFirstCapThenCap) {
  // 4-byte elements; caps 100 B (first) and 250 B.
  Model m = layersOf({{10, 10}, {30}, {20, 20}, {5}});
  auto b = ddpBuckets(m, 4, 250, 100);
  // Reverse order: L3 t0 (20 B), L2 t1 (80 B: 100 >= 100 closes bucket 0).
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].bytes, 100u);
  EXPECT_EQ(b[0].lastLayer, 3);
  EXPECT_EQ(b[0].firstLayer, 2);
  // Then L2 t0 (80), L1 (120): 200, L0 t1 (40): 240, L0 t0 (40): 280 >= 250 closes.
  EXPECT_EQ(b[1].bytes, 280u);
  EXPECT_EQ(b[1].firstLayer, 0);
  EXPECT_EQ(b[1].lastLayer, 2);
  uint64_t total = 0;
  for (const auto& x : b) total += x.bytes;
  EXPECT_EQ(total, (10 + 10 + 30 + 20 + 20 + 5) * 4u);
  EXPECT_EQ(b[1].offsetBytes, 100u);
}

TEST(ProxyPlan, DdpBucketsPyTorchDefaultsOnBert) {
  Model m = presetModel("bert-large");
  auto b = ddpBuckets(m, 4, kDefaultBucketCapBytes, kDefaultFirstBucketBytes);
  ASSERT_GT(b.size(), 2u);
  // The first bucket closes as soon as it reaches 1 MiB; later ones at 25 MiB (a bucket exceeds
  // its cap by at most its last tensor).
  EXPECT_GE(b[0].bytes, kDefaultFirstBucketBytes);
  for (size_t i = 1; i + 1 < b.size(); ++i) EXPECT_GE(b[i].bytes, kDefaultBucketCapBytes);
  EXPECT_EQ(b[0].lastLayer, static_cast<int>(m.layers.size()) - 1);
  EXPECT_EQ(b.back().firstLayer, 0);
  for (size_t i = 1; i < b.size(); ++i) EXPECT_LE(b[i].firstLayer, b[i - 1].firstLayer);
}

TEST(ProxyPlan, GPipeOrders) {
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::kGPipe, 0, 2, 3)), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::kGPipe, 1, 2, 1)), "F0 B0");
}

TEST(ProxyPlan, OneFOneBOrders) {
  // p = 3, m = 4: stage s warms up with p - s - 1 forwards.
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::k1F1B, 0, 3, 4)), "F0 F1 F2 B0 F3 B1 B2 B3");
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::k1F1B, 1, 3, 4)), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::k1F1B, 2, 3, 4)), "F0 B0 F1 B1 F2 B2 F3 B3");
  // Fewer micro-batches than stages: the warm-up is capped by m.
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::k1F1B, 0, 3, 1)), "F0 B0");
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::k1F1B, 0, 2, 2)), "F0 F1 B0 B1");
}

TEST(ProxyPlan, AsyncOrdersRunStepsWithoutFlush) {
  // Two steps of m = 2 on stage 0 of 2: one warm-up forward for the whole window, not per step.
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::kAsync, 0, 2, 2, 2)), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(orderText(pipelineOrder(PpSchedule::kAsync, 1, 2, 2, 2)), "F0 B0 F1 B1 F2 B2 F3 B3");
  EXPECT_THROW(pipelineOrder(PpSchedule::k1F1B, 0, 2, 2, 2), InternalError);
  EXPECT_THROW(pipelineOrder(PpSchedule::kGPipe, 0, 2, 0), UsageError);
}

std::vector<std::vector<PipeOp>> orders(PpSchedule s, int p, int m, int steps = 1) {
  std::vector<std::vector<PipeOp>> o;
  for (int st = 0; st < p; ++st) o.push_back(pipelineOrder(s, st, p, m, steps));
  return o;
}

TEST(ProxyPlan, SimulatedBubbleIsTheFormulaForSynchronousSchedules) {
  for (int p : {2, 3, 4}) {
    for (int m : {1, 2, 4, 8}) {
      std::vector<double> f(p, 1.0), b(p, 2.0);
      for (PpSchedule s : {PpSchedule::kGPipe, PpSchedule::k1F1B}) {
        PipelineSim sim = simulatePipeline(orders(s, p, m), f, b, 0);
        EXPECT_DOUBLE_EQ(sim.makespan, 3.0 * (m + p - 1)) << p << " " << m;
        for (int st = 0; st < p; ++st) {
          EXPECT_NEAR(sim.bubbleFraction(st), idealBubble(p, m), 1e-12);
        }
      }
    }
  }
  EXPECT_DOUBLE_EQ(idealBubble(3, 4), 2.0 / 6.0);
}

TEST(ProxyPlan, AsyncScheduleIdlesLessPerStep) {
  const int p = 3, m = 4, steps = 5;
  std::vector<double> f(p, 1.0), b(p, 2.0);
  PipelineSim sync = simulatePipeline(orders(PpSchedule::k1F1B, p, m), f, b, 0);
  PipelineSim async = simulatePipeline(orders(PpSchedule::kAsync, p, m, steps), f, b, 0);
  EXPECT_LT(async.idle[0] / steps, sync.idle[0]);
  EXPECT_LT(async.makespan / steps, sync.makespan);
}

TEST(ProxyPlan, ScheduleIdleFromEachStagesCompute) {
  // Balanced: 3 s of compute per step on each of 3 stages, m = 4 (f = 0.25, b = 0.5): makespan
  // (m + p - 1)(f + b) = 4.5 s, each stage idle 1.5 s = (p-1)/(m+p-1) of it.
  for (PpSchedule s : {PpSchedule::kGPipe, PpSchedule::k1F1B}) {
    auto idle = scheduleIdlePerStep(s, 4, 1, {3, 3, 3});
    ASSERT_EQ(idle.size(), 3u);
    for (double i : idle) EXPECT_NEAR(i, 1.5, 1e-12);
  }
  // Unbalanced, p = 2, m = 1: stage 0 F [0,1], stage 1 F [1,3] and B [3,7], stage 0 B [7,9]:
  // makespan 9, stage 0 idle 9 - 3 = 6, stage 1 idle 9 - 6 = 3.
  auto idle = scheduleIdlePerStep(PpSchedule::k1F1B, 1, 1, {3, 6});
  EXPECT_NEAR(idle[0], 6, 1e-12);
  EXPECT_NEAR(idle[1], 3, 1e-12);
  // Asynchronous over a window of 5 steps: the fill is paid once, less idle per step.
  auto async = scheduleIdlePerStep(PpSchedule::kAsync, 4, 5, {3, 3, 3});
  EXPECT_LT(async[0], 1.5);
  EXPECT_GE(async[0], 0);
}

TEST(ProxyPlan, StageBoundariesBalanceAndCoverTheModel) {
  Model m = presetModel("gpt2-xl");
  sliceModel(m, 6);
  auto b = stageBoundaries(m, 3, {});
  EXPECT_EQ(b, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_THROW(stageBoundaries(m, 7, {}), UsageError);
}

TEST(ProxyPlan, TensorParallelPatterns) {
  auto fwd = tpCalls(TpKind::kMegatron, true, 1000);
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_EQ(fwd[0].coll, Collective::kAllReduce);
  EXPECT_EQ(tpCalls(TpKind::kMegatron, false, 1000).size(), 2u);
  EXPECT_EQ(tpCalls(TpKind::kColumn, true, 8)[0].coll, Collective::kAllGather);
  EXPECT_EQ(tpCalls(TpKind::kColumn, false, 8)[0].coll, Collective::kAllReduce);
  EXPECT_EQ(tpCalls(TpKind::kRow, true, 8)[0].coll, Collective::kAllReduce);
  EXPECT_EQ(tpCalls(TpKind::kRow, false, 8)[0].coll, Collective::kAllGather);
  // Sequence parallelism (Korthikanti et al. 2022; Megatron-LM's mappings.py and layers.py):
  // forward AG -> attention -> RS -> AG -> MLP -> RS; backward the transposes in reverse, plus
  // the all-gather that re-gathers each column-parallel linear's input for its weight gradient.
  EXPECT_EQ(tpStepsText(tpBlockSteps(TpKind::kSequence, true, 8)), "AG attn RS AG mlp RS");
  EXPECT_EQ(tpStepsText(tpBlockSteps(TpKind::kSequence, false, 8)), "AG mlp AG RS AG attn AG RS");
  EXPECT_EQ(tpStepsText(tpBlockSteps(TpKind::kMegatron, false, 8)), "mlp AR attn AR");
  auto sp = tpCalls(TpKind::kSequence, true, 8);
  ASSERT_EQ(sp.size(), 4u);
  EXPECT_EQ(sp[0].coll, Collective::kAllGather);
  EXPECT_EQ(sp[1].coll, Collective::kReduceScatter);
  EXPECT_EQ(tpCount(sp[0], 4), 2u);
  EXPECT_EQ(tpCount(fwd[0], 4), 1000u);
}

TEST(ProxyScaling, SpeedupAndEfficiency) {
  EXPECT_DOUBLE_EQ(speedup(ScalingKind::kStrong, 10, 5, 2), 2.0);
  EXPECT_DOUBLE_EQ(speedup(ScalingKind::kWeak, 10, 10, 4), 4.0);
  EXPECT_DOUBLE_EQ(speedup(ScalingKind::kWeak, 10, 12.5, 4), 3.2);
  EXPECT_EQ(scalingSizes(4), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(scalingSizes(3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(scalingSizes(1), (std::vector<int>{1}));
}

TEST(ProxyScaling, FitRecoversAlphaBeta) {
  // Ring allreduce features; times made from alpha = 5 us, beta + gamma folded.
  std::vector<CostSample> s;
  for (int n : {2, 4, 8}) {
    for (size_t count : {1024u, 65536u, 1u << 20}) {
      CostFeatures f = costFeatures(Collective::kAllReduce, DataType::kFloat, count, n, "ring");
      s.push_back({f, 5e-6 * f.messages + 0.2e-9 * f.bytes + 0.1e-9 * f.reduced});
    }
  }
  CostFit fit = fitCost(s);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.alpha, 5e-6, 1e-7);
  EXPECT_LT(fit.medianRelError, 1e-6);
  for (const auto& x : s) EXPECT_NEAR(fit.predict(x.f), x.seconds, x.seconds * 1e-6);
  EXPECT_FALSE(fitCost({}).ok);
}

TEST(ProxyScaling, RoundsAcrossNodesAreCountedApart) {
  // 16 ranks, 8 per node, 1 Mi floats (4 MiB). Ring: rank 0 receives from rank 15 (node 1) in each
  // of its 2(n-1) = 30 rounds, so all 30 cross; a round carries S/n = 256 KiB; 15 reductions.
  const size_t count = 1u << 20, S = count * 4;
  CostFeatures flat = costFeatures(Collective::kAllReduce, DataType::kFloat, count, 16, "ring");
  EXPECT_EQ(flat.messages, 30);
  EXPECT_EQ(flat.remoteMessages, 0);
  CostFeatures ring =
      costFeatures(Collective::kAllReduce, DataType::kFloat, count, 16, "ring", nullptr, 8);
  EXPECT_EQ(ring.messages, 0);
  EXPECT_EQ(ring.remoteMessages, 30);
  EXPECT_EQ(ring.remoteBytes, 30.0 * S / 16);
  EXPECT_EQ(ring.reduced, 15.0 * S / 16);
  // Binomial tree: ceil(lg 16) = 4 rounds up, 4 down, whole buffer each; rank 0's partner on the
  // other node (rank 8) in one round of each: 2 cross, 6 stay.
  CostFeatures tree =
      costFeatures(Collective::kAllReduce, DataType::kFloat, count, 16, "tree", nullptr, 8);
  EXPECT_EQ(tree.remoteMessages, 2);
  EXPECT_EQ(tree.messages, 6);
  EXPECT_EQ(tree.remoteBytes, 2.0 * S);
  EXPECT_EQ(tree.bytes, 6.0 * S);
  // A crossing round takes the slower link: a network faster than the node's fitted links
  // changes nothing, a slower one costs its beta.
  CostFit fit;
  fit.beta = 1e-9;
  fit.ok = true;
  EXPECT_DOUBLE_EQ(fit.predict(ring, {0, 0.1e-9}), fit.predict(flat));
  EXPECT_DOUBLE_EQ(fit.predict(ring, {2e-6, 10e-9}), 30 * 2e-6 + 10e-9 * 30.0 * S / 16);
}

TEST(ProxyScaling, LibraryVariantsTakeTheFasterOfRingAndTree) {
  CostFit fit;
  fit.alpha = 10e-6;
  fit.beta = 1e-9;
  fit.ok = true;
  // 1024 ranks: a 1 KiB call is latency: tree's 2 x 10 rounds against ring's 2046.
  auto small = predictCall(fit, Collective::kAllReduce, DataType::kFloat, 256, 1024, "nccl", 0, {});
  EXPECT_EQ(small.algo, "tree");
  EXPECT_NEAR(small.seconds, 20 * (10e-6 + 1e-9 * 1024), 1e-9);
  // 64 MiB: bandwidth, the ring's 2(n-1)/n S against the tree's 2 lg n S.
  auto large =
      predictCall(fit, Collective::kAllReduce, DataType::kFloat, 1u << 24, 1024, "mpi", 0, {});
  EXPECT_EQ(large.algo, "ring");
  // A hand-written algorithm named by the user is predicted as itself.
  auto named = predictCall(fit, Collective::kAllReduce, DataType::kFloat, 256, 1024, "ring", 0, {});
  EXPECT_EQ(named.algo, "ring");
  EXPECT_GT(named.seconds, small.seconds * 50);
}

TEST(ProxyScaling, DpStepOverlapHidesCommunication) {
  // Two layers, backward 2 each; bucket 0 (layer 1) ready at fwd + 2, bucket 1 at fwd + 4.
  std::vector<Bucket> b(2);
  b[0].firstLayer = 1;
  b[1].firstLayer = 0;
  DpStepSim on = simulateDpStep({1, 1}, {2, 2}, b, {1, 1}, true);
  DpStepSim off = simulateDpStep({1, 1}, {2, 2}, b, {1, 1}, false);
  EXPECT_DOUBLE_EQ(on.step, 7.0);  // bucket 0 runs 4..5, bucket 1 at 6..7
  EXPECT_DOUBLE_EQ(on.exposed, 1.0);
  EXPECT_DOUBLE_EQ(off.step, 8.0);
  EXPECT_DOUBLE_EQ(off.exposed, 2.0);
}

TEST(ProxyLayout, TensorParallelInnermostAndBadLayouts) {
  ProxyOptions o;
  o.mode = ProxyMode::kHybrid;
  o.dp = 2;
  o.tp = 2;
  Layout l = resolveLayout(o, 4, 1);
  EXPECT_EQ(l.pp, 1);
  EXPECT_EQ(l.tpIdx, 1);
  EXPECT_EQ(l.dpIdx, 0);
  l = resolveLayout(o, 4, 2);
  EXPECT_EQ(l.tpIdx, 0);
  EXPECT_EQ(l.dpIdx, 1);
  o.layoutOrder = {"dp", "tp", "pp"};
  l = resolveLayout(o, 4, 1);
  EXPECT_EQ(l.dpIdx, 1);
  EXPECT_EQ(l.tpIdx, 0);
  o.dp = 3;
  EXPECT_THROW(resolveLayout(o, 4, 0), UsageError);
  o.model = presetModel("bert-large");
  o.dp = 0;
  o.tp = 3;  // 16 heads
  EXPECT_THROW(validateProxy(o, 3), UsageError);
  o.tp = 0;
  o.pp = 0;
  EXPECT_THROW(validateProxy(o, 4), UsageError);  // two dimensions unset
}

}  // namespace
}  // namespace cb::proxy

namespace cb::proxy {
namespace {

TEST(ProxyPlan, BubbleApartFromTransfersAtDefaultThroughput) {
  // gpt2-xl, 2 blocks per stage, batch 1, seq 1024 at the default 100 TFLOPS: a block's forward
  // is 2 x 30.72 M weights x 1024 + 4 x 1024^2 x 1600 FLOPs = 69.6 GFLOPs = 0.696 ms; a stage's
  // forward 1.39 ms, backward twice that. A stage boundary is 1024 x 1600 bf16 = 3.3 MB, 0.14 ms
  // at 24 GB/s. With the transfers counted apart, the schedule's bubble is (p-1)/(m+p-1) within
  // 10% for p = 2, 3 and m = 1, 4, 8 (GPipe and 1F1B).
  Model m = presetModel("gpt2-xl");
  const double f = 2 * m.layers[1].fwdFlopsPerSample / 100e12, b = 2 * f, link = 0.14e-3;
  EXPECT_NEAR(f, 1.39e-3, 0.01e-3);
  for (int p : {2, 3}) {
    for (int mb : {1, 4, 8}) {
      for (PpSchedule s : {PpSchedule::kGPipe, PpSchedule::k1F1B}) {
        PipelineSim sim = simulatePipeline(orders(s, p, mb), std::vector<double>(p, f),
                                           std::vector<double>(p, b), link);
        for (int st = 0; st < p; ++st) {
          EXPECT_NEAR(sim.bubbleFraction(st), idealBubble(p, mb), 0.1 * idealBubble(p, mb))
              << "p " << p << " m " << mb << " stage " << st << " " << ppScheduleName(s);
          EXPECT_GT(sim.transfer[st], 0) << p << " " << mb;
          // Transfers add at most the two messages per micro-batch on each link of the path.
          EXPECT_LE(sim.transfer[st], 2.0 * (mb + p) * link * p + 1e-12);
        }
      }
    }
  }
}

}  // namespace
}  // namespace cb::proxy

namespace cb::proxy {
namespace {

// Proxy modes are rows of one table: the named ones are the first four, every row is found by its
// name, and what a mode decides (the layout's one dimension, the case's form) comes from its row.
TEST(ProxyModes, RowsAreFoundByNameAndDecideTheLayout) {
  EXPECT_EQ(proxyModeName(ProxyMode::kDp), "dp");
  EXPECT_EQ(proxyModeName(ProxyMode::kTp), "tp");
  EXPECT_EQ(proxyModeName(ProxyMode::kPp), "pp");
  EXPECT_EQ(proxyModeName(ProxyMode::kHybrid), "hybrid");
  EXPECT_EQ(ProxyMode::kDp.info().dimension, &Layout::dp);
  EXPECT_EQ(ProxyMode::kTp.info().dimension, &Layout::tp);
  EXPECT_EQ(ProxyMode::kPp.info().dimension, &Layout::pp);
  EXPECT_EQ(ProxyMode::kHybrid.info().dimension, nullptr);
  ProxyOptions o;
  o.model = presetModel("gpt2-xl", 0);
  o.dp = 2;
  o.tp = 2;
  for (const auto& row : proxyModes()) {
    o.mode = parseProxyMode(row.name);
    EXPECT_EQ(&o.mode.info(), &row);
    const Layout l = resolveLayout(o, 4, 0);
    EXPECT_EQ(l.dp * l.tp * l.pp, 4) << row.name;
    if (row.dimension) EXPECT_EQ(l.*row.dimension, 4) << row.name;
    EXPECT_FALSE(row.form(o, l).empty()) << row.name;
    EXPECT_NE(proxyModeHelp().find(std::string(row.name) + " ("), std::string::npos);
  }
  EXPECT_THROW(parseProxyMode("ep"), UsageError);
}

}  // namespace
}  // namespace cb::proxy
