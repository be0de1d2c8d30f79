// The calls of a full-model training step, from the proxy's own program (planStep: built
// without a world or buffers), against the step computed by hand from Megatron-LM's code paths
// and PyTorch DDP's documented behaviour. Every expected figure is a formula below, independent
// of the proxy's code. Sources:
//   [M1] megatron/core/tensor_parallel/layers.py: VocabParallelEmbedding (forward all-reduce of
//        b*s*h; reduce-scatter with sequence parallelism), ColumnParallelLinear /
//        RowParallelLinear and LinearWithGradAccumulationAndAsyncCommunication (the output
//        layer's backward input all-reduce; under sequence parallelism the input all-gather,
//        re-done in backward for the weight gradient, and the reduce-scatter of the input
//        gradient).
//   [M2] megatron/core/tensor_parallel/mappings.py: the block's all-reduces (2 forward, 2
//        backward) and their sequence-parallel all-gather / reduce-scatter.
//   [M3] megatron/core/tensor_parallel/cross_entropy.py: _VocabParallelCrossEntropy, three
//        all-reduces of b*s floats (max logit, target logit, sum of exponentials).
//   [M4] megatron/core/distributed/finalize_model_grads.py: _allreduce_word_embedding_grads (the
//        tied embedding's gradient over the first and last stage), _allreduce_layernorm_grads
//        (sequence parallel: replicated norm and bias gradients over TP).
//   [M5] megatron/core/pipeline_parallel/schedules.py, p2p_communication.py: one activation of
//        (s/t if sequence parallel) x b x h per micro-batch forward, its gradient backward.
//   [D1] PyTorch DDP (torch.nn.parallel.DistributedDataParallel, no_sync): gradients all-reduced
//        in buckets once per step, after the last accumulated micro-batch.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "core/Error.h"
#include "training_proxies/Model.h"
#include "training_proxies/Plan.h"
#include "training_proxies/Proxy.h"

namespace cb::proxy {
namespace {

using Key = std::tuple<std::string, std::string, uint64_t, int>;  // group, call, bytes, ranks
using Calls = std::map<Key, int>;                                 // -> per step

Calls asMap(const std::vector<CallStat>& calls) {
  Calls out;
  for (const auto& c : calls) {
    Key k{c.group, c.coll, c.bytes, c.nranks};
    EXPECT_EQ(out.count(k), 0u) << c.group << " " << c.coll << " " << c.bytes;
    out[k] = c.callsPerStep;
  }
  return out;
}

std::string show(const Calls& c) {
  std::string s;
  for (const auto& [k, n] : c) {
    s += std::get<0>(k) + " " + std::get<1>(k) + " " + std::to_string(std::get<2>(k)) + " B x" +
         std::to_string(std::get<3>(k)) + " ranks: " + std::to_string(n) + "/step\n";
  }
  return s;
}

struct Shape {
  uint64_t h, f, V, s, positions;
  bool gpt;  // GPT-2: LayerNorm, biases, learned positions, tied head; else Llama
};

// Parameters of one block on one TP rank (the split tensors / t, the replicated whole).
uint64_t blockParams(const Shape& m, uint64_t t) {
  if (m.gpt) {
    // split: Q K V O (4h^2), QKV bias 3h, fc1 4h^2 + bias 4h, fc2 4h^2; replicated: two
    // LayerNorms 2h each, O and fc2 biases h each.
    return (12 * m.h * m.h + 7 * m.h) / t + 6 * m.h;
  }
  // split: Q K V O (4h^2), gate, up, down (3hf); replicated: two RMSNorms h each.
  return (4 * m.h * m.h + 3 * m.h * m.f) / t + 2 * m.h;
}

// The replicated gradients sequence parallelism all-reduces over TP [M4]: blocks + final norm.
uint64_t replicatedParams(const Shape& m, uint64_t blocks) {
  return m.gpt ? blocks * 6 * m.h + 2 * m.h : blocks * 2 * m.h + m.h;
}

struct Case {
  const char* model;
  Shape shape;
};

const Case kGpt2Xl{"gpt2-xl", {1600, 6400, 50257, 1024, 1024, true}};
const Case kLlama7b{"llama2-7b", {4096, 11008, 32000, 4096, 0, false}};

ProxyOptions hybrid(const Case& c, int d, int t, int p, bool sp) {
  ProxyOptions o;
  o.mode = ProxyMode::kHybrid;
  o.model = presetModel(c.model);
  o.dp = d;
  o.tp = t;
  o.pp = p;
  o.tpKind = sp ? TpKind::kSequence : TpKind::kMegatron;
  // One bucket per stage so its size is the stage's whole gradient (checked by hand below).
  o.bucketCapBytes = o.firstBucketBytes = 1ull << 40;
  return o;
}

// The expected calls of `rank` for batch 1, float gradients and bf16 activations.
Calls expected(const Case& c, const ProxyOptions& o, int rank) {
  const Shape& m = c.shape;
  const Layout l = resolveLayout(o, 4, rank);
  const uint64_t t = l.tp, d = l.dp, p = l.pp;
  const uint64_t mb = p > 1 ? 4 : 1;  // default micro-batches
  const bool sp = o.tpKind == TpKind::kSequence && t > 1;
  const uint64_t bsh = m.s * m.h, act = bsh * 2, lossBytes = m.s * 4;
  auto bounds = stageBoundaries(o.model, l.pp, {});
  const int lo = bounds[l.ppIdx], hi = bounds[l.ppIdx + 1];
  const bool first = l.ppIdx == 0, last = l.ppIdx == l.pp - 1;
  // Blocks of the stage: its layers minus the embedding (first) and head (last).
  const uint64_t blocks = hi - lo - (first ? 1 : 0) - (last ? 1 : 0);
  const uint64_t vocabRows = (m.V + t - 1) / t;
  Calls e;
  if (t > 1) {
    const std::string tg = "tp";
    const int n = static_cast<int>(t);
    if (!sp) {
      // [M2] 4 per block; [M1] embedding forward, head backward; per micro-batch.
      e[{tg, "allreduce", act, n}] = mb * (4 * blocks + (first ? 1 : 0) + (last ? 1 : 0));
    } else {
      // [M2]/[M1] per block: forward AG RS AG RS, backward AG (AG RS) AG (AG RS).
      uint64_t ag = 6 * blocks, rs = 4 * blocks, ar = 0;
      if (first) {
        // GPT-2 (learned positions): all-reduce then keep the sequence part; Llama:
        // reduce-scatter; backward gathers the sequence.
        (m.gpt ? ar : rs) += 1;
        ag += 1;
      }
      if (last) {
        ag += 1;  // the output layer's input gathered
        rs += 1;  // its gradient reduce-scattered
      }
      e[{tg, "allgather", act, n}] = mb * ag;
      e[{tg, "reduce_scatter", act, n}] = mb * rs;
      if (ar) e[{tg, "allreduce", act, n}] = mb * ar;
      // [M4] once per step, float gradients.
      const uint64_t repl = replicatedParams(m, blocks) - (last ? 0 : (m.gpt ? 2 : 1) * m.h);
      e[{tg, "allreduce", repl * 4, n}] = 1;
    }
    if (last) e[{tg, "allreduce", lossBytes, n}] = 3 * mb;  // [M3]
  }
  if (p > 1) {
    // [M5] one message per micro-batch each way over each of the stage's boundaries.
    const uint64_t msg = sp ? act / t : act;
    const int links = (first ? 0 : 1) + (last ? 0 : 1);
    e[{"pp", "send", msg, 2}] = static_cast<int>(mb) * links;
    e[{"pp", "recv", msg, 2}] = static_cast<int>(mb) * links;
    if (m.gpt && (first || last)) {
      e[{"emb", "allreduce", vocabRows * m.h * 4, 2}] = 1;  // [M4] tied embedding
    }
  }
  if (d > 1) {
    // [D1] the stage's gradients on this TP rank, one bucket (caps set above), once per step.
    uint64_t params = blocks * blockParams(m, t);
    if (first) params += vocabRows * m.h + (m.gpt ? m.positions * m.h : 0);
    if (last) {
      params += m.gpt ? 2 * m.h : m.h;                 // final norm
      if (!m.gpt || p > 1) params += vocabRows * m.h;  // untied head, or the tied copy
    }
    e[{"dp", "allreduce", params * 4, static_cast<int>(d)}] = 1;
  }
  return e;
}

void checkLayouts(const Case& c, bool sp) {
  const int dims[][3] = {{4, 1, 1}, {1, 4, 1}, {1, 1, 4}, {2, 2, 1}, {2, 1, 2}, {1, 2, 2}};
  for (const auto& dim : dims) {
    if (sp && dim[1] == 1) continue;
    // GPT-2 XL's 25 heads split over no t in {2, 4} (Megatron asserts heads % t == 0 too).
    if (c.shape.gpt && dim[1] > 1) {
      EXPECT_THROW(planStep(hybrid(c, dim[0], dim[1], dim[2], sp), 4, 0), UsageError);
      continue;
    }
    ProxyOptions o = hybrid(c, dim[0], dim[1], dim[2], sp);
    for (int r = 0; r < 4; ++r) {
      Calls want = expected(c, o, r);
      Calls got = asMap(planStep(o, 4, r));
      EXPECT_EQ(got, want) << c.model << " dp " << dim[0] << " tp " << dim[1] << " pp " << dim[2]
                           << (sp ? " sp" : "") << " rank " << r << "\nplan:\n"
                           << show(got) << "hand:\n"
                           << show(want);
    }
  }
}

TEST(ProxyStep, FullGpt2XlEveryLayoutOfFourRanks) { checkLayouts(kGpt2Xl, false); }
TEST(ProxyStep, FullLlama7bEveryLayoutOfFourRanks) { checkLayouts(kLlama7b, false); }
TEST(ProxyStep, SequenceParallelFullModels) {
  checkLayouts(kLlama7b, true);
  // GPT-2's learned positions (the embedding all-reduces, then keeps its sequence part) on a
  // GPT-2-XL shape with 32 heads, so t = 2 and 4 divide them.
  TransformerShape s;
  s.name = "gpt2-xl-32h";
  s.blocks = 48;
  s.hidden = 1600;
  s.heads = s.kvHeads = 32;
  s.ffn = 6400;
  s.seq = s.positions = 1024;
  s.vocab = 50257;
  s.biases = s.learnedPositions = s.tiedHead = true;
  Case c = kGpt2Xl;
  for (int t : {2, 4}) {
    for (int p : {1, 2}) {
      if (t * p > 4) continue;
      ProxyOptions o = hybrid(c, 4 / (t * p), t, p, true);
      o.model = transformerModel(s);
      for (int r = 0; r < 4; ++r) {
        EXPECT_EQ(asMap(planStep(o, 4, r)), expected(c, o, r)) << "tp " << t << " pp " << p;
      }
    }
  }
}

TEST(ProxyStep, StageBoundaryIsTheHiddenStateNotTheLogits) {
  // gpt2-xl, seq 256, p = 2: b*s*h*2 = 256 * 1600 * 2 = 819,200 B per micro-batch, not the
  // head's s x V (25,731,584 B).
  ProxyOptions o;
  o.mode = ProxyMode::kPp;
  o.model = presetModel("gpt2-xl", 256);
  for (int r = 0; r < 2; ++r) {
    for (const auto& c : planStep(o, 2, r)) {
      if (c.group == "pp") {
        EXPECT_EQ(c.bytes, 819'200u);
        EXPECT_EQ(c.callsPerStep, 4);  // m = 4 messages each way on the one link
      }
    }
  }
  // A slice (no embedding, no head): the same boundary, no tied-embedding call.
  sliceModel(o.model, 4);
  for (const auto& c : planStep(o, 2, 0)) {
    EXPECT_NE(c.group, "emb");
    if (c.group == "pp") {
      EXPECT_EQ(c.bytes, 819'200u);
    }
  }
}

TEST(ProxyStep, PipelineCountsMessagesForEverySchedule) {
  // GPipe and 1F1B send the same traffic: on stage 0 of 2 with m = 4, 4 activations out and 4
  // gradients in (1F1B merges some into one exchange; they are still 8 messages).
  ProxyOptions o;
  o.mode = ProxyMode::kPp;
  o.model = presetModel("gpt2-xl");
  sliceModel(o.model, 4);
  for (PpSchedule s : {PpSchedule::kGPipe, PpSchedule::k1F1B}) {
    o.schedule = s;
    Calls got = asMap(planStep(o, 2, 0));
    EXPECT_EQ((got[{"pp", "send", 1024 * 1600 * 2, 2}]), 4);
    EXPECT_EQ((got[{"pp", "recv", 1024 * 1600 * 2, 2}]), 4);
  }
  // Stage 1 of 3 (middle): 4 each way over both links.
  o.microBatches = 4;
  Calls mid = asMap(planStep(o, 3, 1));
  EXPECT_EQ((mid[{"pp", "send", 1024 * 1600 * 2, 2}]), 8);
}

TEST(ProxyStep, GradientAccumulationReducesOncePerStep) {
  // [D1] no_sync: m micro-batches of forward and backward, each bucket all-reduced once.
  ProxyOptions o;
  o.mode = ProxyMode::kDp;
  o.model = presetModel("bert-large");
  sliceModel(o.model, 2);
  auto one = planStep(o, 2, 0);
  o.microBatches = 4;
  auto four = planStep(o, 2, 0);
  EXPECT_EQ(asMap(one), asMap(four));
  for (const auto& c : four) EXPECT_EQ(c.callsPerStep, 1);
}

TEST(ProxyStep, DefaultBucketsCoverTheStage) {
  // Full llama2-7b, dp 4: the buckets hold the whole gradient (6,738,415,616 floats), every
  // bucket but the last reaches the 25 MiB cap (the first the 1 MiB one).
  ProxyOptions o;
  o.mode = ProxyMode::kDp;
  o.model = presetModel("llama2-7b");
  auto calls = planStep(o, 4, 0);
  uint64_t total = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].group, "dp");
    total += calls[i].bytes * calls[i].callsPerStep;
    if (i > 0 && i + 1 < calls.size()) {
      EXPECT_GE(calls[i].bytes, kDefaultBucketCapBytes);
    }
  }
  EXPECT_EQ(total, 6'738'415'616ull * 4);
}

}  // namespace
}  // namespace cb::proxy

namespace cb::proxy {
namespace {

// The step after backward, by hand for full llama2-7b on 4 DP ranks with one bucket. Sources:
// ZeRO (Rajbhandari et al. 2020, sections 5 and 7): stage 1 partitions the optimizer state
// (each rank updates 1/d of the parameters, then all-gathers them), stage 2 the gradients too
// (reduce-scatter instead of all-reduce), stage 3 the parameters (all-gathered per layer in
// forward and again in backward, gradients reduce-scattered per layer); Megatron-LM's
// training.py / clip_grads.py: the loss averaged over DP, the gradient norm's squares summed over
// the ranks that hold different gradients (model-parallel group; all ranks once sharded).
TEST(ProxyStep, OptimizerAndZeroStagesByHand) {
  const uint64_t P = 6'738'415'616, d = 4, shard = P / d;  // 1,684,603,904
  ProxyOptions o;
  o.mode = ProxyMode::kDp;
  o.model = presetModel("llama2-7b");
  o.bucketCapBytes = o.firstBucketBytes = 1ull << 40;
  o.optimizer = OptimizerKind::kAdam;
  const Key gradAr{"dp", "allreduce", P * 4, 4};
  const Key loss{"dp", "allreduce", 2 * 4, 4};             // loss and token count, floats
  const Key norm{"world", "allreduce", 4, 4};              // one float
  const Key paramAg{"dp", "allgather", shard * 4 * 2, 4};  // bf16 parameters, S = whole
  const Key gradRs{"dp", "reduce_scatter", shard * 4 * 4, 4};

  // Plain DDP + Adam: each rank holds whole gradients, so the norm needs no call.
  EXPECT_EQ(asMap(planStep(o, 4, 0)), (Calls{{gradAr, 1}, {loss, 1}}));
  o.zero = 1;
  EXPECT_EQ(asMap(planStep(o, 4, 0)), (Calls{{gradAr, 1}, {loss, 1}, {paramAg, 1}}));
  o.zero = 2;
  EXPECT_EQ(asMap(planStep(o, 4, 0)), (Calls{{gradRs, 1}, {loss, 1}, {norm, 1}, {paramAg, 1}}));

  // ZeRO-3: per layer (embedding V h, 32 blocks, head V h + final norm h), forward and backward
  // all-gathers of the layer's 1/4 in bf16, one reduce-scatter of its gradient in float.
  o.zero = 3;
  o.dpKind = DpKind::kSharded;
  const uint64_t h = 4096, f = 11008, V = 32000;
  const uint64_t block = 4 * h * h + 3 * h * f + 2 * h, emb = V * h, head = V * h + h;
  Calls want{{loss, 1}, {norm, 1}};
  for (auto [params, layers] : {std::pair{block, 32}, {emb, 1}, {head, 1}}) {
    const uint64_t s = (params + d - 1) / d;
    want[{"sharded", "allgather", s * d * 2, 4}] = 2 * layers;
    want[{"sharded", "reduce_scatter", s * d * 4, 4}] = layers;
  }
  EXPECT_EQ(asMap(planStep(o, 4, 0)), want) << show(asMap(planStep(o, 4, 0)));

  // With TP 2 x DP 2 and plain DDP, the norm's parts are the two TP ranks' (model-parallel group).
  ProxyOptions h2 = o;
  h2.mode = ProxyMode::kHybrid;
  h2.dpKind = DpKind::kAllReduce;
  h2.zero = 0;
  h2.dp = 2;
  h2.tp = 2;
  Calls got = asMap(planStep(h2, 4, 0));
  EXPECT_EQ((got[{"mp", "allreduce", 4, 2}]), 1);
  EXPECT_EQ(got.count(norm), 0u);
}

}  // namespace
}  // namespace cb::proxy
