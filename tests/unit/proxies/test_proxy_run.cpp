// Training proxies run end to end in local thread worlds (communication only, so fast): every
// call is verified, the expected calls appear, the pipeline links carry the right data, the
// parameter server sums; plus the stored document's round trip and its HTML rendering.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <nlohmann/json.hpp>

#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "results/HtmlReport.h"
#include "results/Store.h"
#include "training_proxies/Proxy.h"
#include "training_proxies/ProxyReport.h"

namespace cb::proxy {
namespace {

ProxyOptions small(ProxyMode mode) {
  ProxyOptions o;
  o.mode = mode;
  o.model = transformerModel({.name = "tiny",
                              .blocks = 2,
                              .hidden = 256,
                              .heads = 4,
                              .ffn = 1024,
                              .seq = 32});  // 2 x 0.8 M parameters: 3 MiB of float gradients
  o.computeScale = 0;
  o.steps = 2;
  o.warmup = 1;
  o.timeoutSeconds = 60;
  return o;
}

// Runs the proxy `runs` times on one Team per rank; `setups` (if given) gets the world team's
// transport set-ups seen by rank 0.
ProxyResult runLocal(int n, const ProxyOptions& o, int runs = 1, int* setups = nullptr) {
  ProxyResult result;
  std::mutex mu;
  LocalWorld::run(n, [&](Communicator& comm) {
    Team team(comm);
    ProxyResult r;
    for (int i = 0; i < runs; ++i) r = runProxy(team, o);
    if (comm.rank() == 0) {
      std::lock_guard<std::mutex> g(mu);
      result = std::move(r);
      if (setups) *setups = team.transportSetups();
    }
  });
  return result;
}

const CallStat* findCall(const ProxyRun& run, const std::string& group, const std::string& coll) {
  for (const auto& c : run.calls) {
    if (c.group == group && c.coll == coll) return &c;
  }
  return nullptr;
}

TEST(ProxyRun, DataParallelBucketsAreVerified) {
  ProxyOptions o = small(ProxyMode::kDp);
  ProxyResult r = runLocal(2, o);
  ASSERT_EQ(r.runs.size(), 1u);
  const ProxyRun& run = r.runs[0];
  EXPECT_EQ(run.wrong, 0);
  EXPECT_EQ(run.steps, 2);
  EXPECT_EQ(run.stepSamples.size(), 2u);
  EXPECT_EQ(run.rankSteps.size(), 4u);
  const CallStat* ar = findCall(run, "dp", "allreduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_GT(ar->busbw, 0);
  // The gradient bytes all go through the buckets: allreduce sends the whole gradient.
  uint64_t bucketBytes = 0;
  for (const auto& c : run.calls) {
    if (c.group == "dp") bucketBytes += c.bytes * c.callsPerStep;
  }
  EXPECT_EQ(bucketBytes, o.model.params() * 4);
  ASSERT_EQ(run.timeline.size(), 2u);
  EXPECT_FALSE(run.timeline[0].empty());
  EXPECT_EQ(r.algo, "ring");
  EXPECT_EQ(r.transport, "local");
}

TEST(ProxyRun, TensorAndPipelineAndHybridAreVerified) {
  ProxyOptions tp = small(ProxyMode::kTp);
  tp.tpKind = TpKind::kSequence;
  ProxyResult r = runLocal(2, tp);
  EXPECT_EQ(r.runs[0].wrong, 0);
  EXPECT_NE(findCall(r.runs[0], "tp", "reduce_scatter"), nullptr);
  EXPECT_NE(findCall(r.runs[0], "tp", "allgather"), nullptr);

  ProxyOptions pp = small(ProxyMode::kPp);
  pp.microBatches = 3;
  r = runLocal(2, pp);
  EXPECT_EQ(r.runs[0].wrong, 0);
  const CallStat* link = findCall(r.runs[0], "pp", "send");
  ASSERT_NE(link, nullptr);
  // One activation (b x s x h bf16 = 32 x 256 x 2 B) per micro-batch each way.
  EXPECT_EQ(link->bytes, 32u * 256 * 2);
  EXPECT_EQ(link->callsPerStep, 3);
  EXPECT_EQ(r.runs[0].bubblePerStage.size(), 2u);
  EXPECT_DOUBLE_EQ(r.runs[0].bubbleIdeal, 1.0 / 4.0);
  // Idle = bubble + transfer + exposed collectives + host gaps, per stage.
  for (size_t s = 0; s < 2; ++s) {
    const ProxyRun& run = r.runs[0];
    EXPECT_NEAR(run.idlePerStage[s],
                run.bubblePerStage[s] + run.transferPerStage[s] + run.exposedPerStage[s] +
                    run.otherPerStage[s],
                1e-9);
    EXPECT_GE(run.transferPerStage[s], 0);
    EXPECT_GE(run.bubblePerStage[s], 0);
    EXPECT_GE(run.scheduleBubblePerStage[s], 0);
    EXPECT_LT(run.scheduleBubblePerStage[s], 1);
  }

  ProxyOptions hy = small(ProxyMode::kHybrid);
  hy.dp = 2;
  hy.pp = 2;
  hy.microBatches = 2;
  r = runLocal(4, hy);
  EXPECT_EQ(r.runs[0].wrong, 0);
  EXPECT_NE(findCall(r.runs[0], "dp", "allreduce"), nullptr);
  EXPECT_NE(findCall(r.runs[0], "pp", "send"), nullptr);
}

// A whole (tiny) model with an embedding and a tied head: the TP embedding, head and loss calls,
// the tied embedding's all-reduce over the pipeline's ends, gradient accumulation, the optimizer
// step with ZeRO 1, 2 and 3, all run on real data and verified.
TEST(ProxyRun, WholeModelStepsAreVerified) {
  ProxyOptions o = small(ProxyMode::kHybrid);
  o.model = transformerModel({.name = "tiny-lm",
                              .blocks = 2,
                              .hidden = 64,
                              .heads = 4,
                              .ffn = 256,
                              .seq = 16,
                              .vocab = 1000,
                              .learnedPositions = true,
                              .positions = 16,
                              .biases = true});
  o.tp = 2;
  o.pp = 2;
  o.microBatches = 2;
  o.tpKind = TpKind::kSequence;
  ProxyResult r = runLocal(4, o);
  EXPECT_EQ(r.runs[0].wrong, 0);
  EXPECT_NE(findCall(r.runs[0], "emb", "allreduce"), nullptr);
  // The cross-entropy's all-reduces: b x s = 16 floats, 3 per micro-batch.
  const CallStat* loss = nullptr;
  for (const auto& c : r.runs[0].calls) {
    if (c.group == "tp" && c.coll == "allreduce" && c.bytes == 16 * 4) loss = &c;
  }
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->callsPerStep, 6);
  for (int zero : {1, 2, 3}) {
    ProxyOptions z = o;
    z.tp = 0;
    z.dp = 2;
    z.pp = 2;
    z.zero = zero;
    if (zero == 3) z.dpKind = DpKind::kSharded;
    z.optimizer = OptimizerKind::kAdam;
    r = runLocal(4, z);
    EXPECT_EQ(r.runs[0].wrong, 0) << "zero " << zero;
    // The gradient norm: over the model-parallel group (the 2 stages) while every DP rank holds
    // whole gradients, over the world once they are sharded.
    EXPECT_NE(findCall(r.runs[0], zero >= 2 ? "world" : "mp", "allreduce"), nullptr) << zero;
    EXPECT_EQ(findCall(r.runs[0], "dp", "allgather") != nullptr, zero < 3) << zero;
    EXPECT_EQ(findCall(r.runs[0], "dp", "reduce_scatter") != nullptr, zero == 2) << zero;
  }
}

TEST(ProxyRun, ParameterServerAndShardedAreVerified) {
  ProxyOptions ps = small(ProxyMode::kDp);
  ps.dpKind = DpKind::kParameterServer;
  // Two runs on one team: the servers' transport is the team's, set up once.
  int setups = 0;
  ProxyResult r = runLocal(3, ps, 2, &setups);
  EXPECT_EQ(r.runs[0].wrong, 0);
  EXPECT_NE(findCall(r.runs[0], "ps", "push"), nullptr);
  EXPECT_EQ(setups, 1);
  ProxyOptions sh = small(ProxyMode::kDp);
  sh.dpKind = DpKind::kSharded;
  r = runLocal(2, sh);
  EXPECT_EQ(r.runs[0].wrong, 0);
  EXPECT_NE(findCall(r.runs[0], "sharded", "reduce_scatter"), nullptr);
}

TEST(ProxyRun, ScalingHasMeasuredAndPredictedRows) {
  ProxyOptions o = small(ProxyMode::kDp);
  o.scaling = ScalingKind::kWeak;
  ProxyResult r = runLocal(2, o);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].n, 1);
  EXPECT_EQ(r.runs[1].n, 2);
  int measured = 0, predicted = 0;
  for (const auto& row : r.scaling) (row.predicted ? predicted : measured) += 1;
  EXPECT_EQ(measured, 2);
  // 8 .. 128 (64 x the 2 measured ranks) when the fit has at least two points (two bucket sizes
  // at n = 2), each with the band of the fit's residuals around it.
  if (r.fit.ok) {
    EXPECT_EQ(predicted, 5);
    for (const auto& row : r.scaling) {
      if (!row.predicted) continue;
      EXPECT_FALSE(row.extrapolated);
      EXPECT_LE(row.stepLow, row.stepSeconds);
      EXPECT_GE(row.stepHigh, row.stepSeconds);
    }
  }
  EXPECT_DOUBLE_EQ(r.scaling[0].speedup, 1.0);
  // Beyond 64 x the measured world: refused unless asked, then marked.
  o.predictTo = 1024;
  EXPECT_THROW(validateProxy(o, 2), UsageError);
  o.extrapolate = true;
  r = runLocal(2, o);
  if (r.fit.ok) {
    EXPECT_EQ(r.scaling.back().n, 1024);
    EXPECT_TRUE(r.scaling.back().extrapolated);
  }
}

TEST(ProxyReport, SmallEfficienciesAndUnitsArePrinted) {
  ProxyOptions o = small(ProxyMode::kDp);
  o.scaling = ScalingKind::kStrong;
  ProxyResult r;
  r.runs.resize(1);
  r.runs[0].n = 1;
  ScalingRow row;
  row.n = 1024;
  row.predicted = true;
  row.efficiency = 2e-4;  // 0.02%: "0.0%" would hide it
  r.scaling.push_back(row);
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  printProxyResult(f, o, r);
  std::fclose(f);
  std::string out(text, len);
  std::free(text);
  EXPECT_NE(out.find("2.0e-02%"), std::string::npos) << out;
  EXPECT_NE(out.find("compute(ms)"), std::string::npos);
  EXPECT_NE(out.find("exposed(ms)"), std::string::npos);
}

TEST(ProxyRun, DocumentIsStoredAndRendered) {
  ProxyOptions o = small(ProxyMode::kPp);
  ProxyResult r = runLocal(2, o);
  std::string doc = proxyJson(o, r);
  auto path = std::filesystem::temp_directory_path() / "cb_proxy_doc_test.db";
  std::filesystem::remove(path);
  {
    Store s = Store::open(path.string());
    RunRecord run;
    run.status = RunStatus::kOk;
    int64_t id = s.beginRun(run);
    s.setRunDetail(id, "proxy", doc);
    EXPECT_EQ(s.runDetail(id, "proxy"), doc);
    EXPECT_EQ(s.runDetail(id, "other"), std::nullopt);
  }
  std::filesystem::remove(path);
  std::string html = renderProxyDetail(doc);
  EXPECT_NE(html.find("class=\"chart timeline\""), std::string::npos);
  EXPECT_NE(html.find("send act0"), std::string::npos);
  EXPECT_NE(renderProxyDetail("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(renderProxyDetail("{\"format\":\"x\"}").find("Unknown"), std::string::npos);
}

// Every document has format and an integer version (docs/schema/README.md); runs stored by earlier
// builds hold version 1's header, "collbench-proxy/1", and still render.
TEST(ProxyRun, DocumentOfTheOneStyleAndItsEarlierHeaderRender) {
  ProxyOptions o = small(ProxyMode::kDp);
  const std::string doc = proxyJson(o, runLocal(2, o));
  auto j = nlohmann::json::parse(doc);
  EXPECT_EQ(j["format"], "collbench-proxy");
  EXPECT_EQ(j["version"], 2);
  j.erase("version");
  j["format"] = "collbench-proxy/1";
  EXPECT_EQ(renderProxyDetail(j.dump()), renderProxyDetail(doc));
  j["format"] = "collbench-proxy";
  j["version"] = 3;
  EXPECT_NE(renderProxyDetail(j.dump()).find("Unknown"), std::string::npos);
}

}  // namespace
}  // namespace cb::proxy
