// `collbench proxy dp|tp|pp|hybrid`: one training step's communication replayed on the world with
// modelled compute between the calls (training_proxies/Proxy.h), its metrics printed and stored:
// one result per world size (collective "proxy-<mode>", placement "step", time = step time,
// samples = per-step times) so runs/show/compare/gate treat a step like a collective, and the
// whole document (calls, timeline, scaling) attached to the run for `report` (the records and the
// document: adapters/ProxyRecords.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "adapters/ProxyRecords.h"
#include "bench/Peak.h"
#include "cli/Command.h"
#include "cli/ProxyFlags.h"
#include "cli/ReplayPredict.h"
#include "cli/Validate.h"
#include "core/Interrupt.h"
#include "core/OutputFile.h"
#include "predict/ScaleModel.h"
#include "topology/LinkBounds.h"
#include "training_proxies/ProxyPeak.h"
#include "training_proxies/ProxyReport.h"

namespace cb::cli {
namespace {

using namespace cb::proxy;

// The step at M ranks: each call of the step planned there at the model's time, a call the
// model has not (pipeline sends) at what it measured here, compute as measured here; no overlap.
void printPredictedStep(std::FILE* out, const ScaleModels& models,
                        const std::vector<CallStat>& atScale, const ProxyRun& run, int ranks) {
  double commUs = 0;
  for (const CallStat& call : atScale) {
    double us = 0;
    if (auto t = models.callUs(call.coll, call.nranks, call.bytes, "proxy --predict-ranks")) {
      us = *t;
    } else {
      for (const CallStat& m : run.calls)
        if (m.group == call.group && m.coll == call.coll) us = m.seconds * 1e6;
    }
    commUs += us * call.callsPerStep;
    fmt::print(out, "# predicted at {} ranks: {} {} on {} ranks, {} B x {}: {:.1f} us{}\n", ranks,
               call.group, call.coll, call.nranks, call.bytes, call.callsPerStep, us,
               predict::parseColl(call.coll) ? "" : " (as measured here)");
  }
  const double computeUs = run.compute * 1e6;
  const double stepUs = computeUs + commUs;
  fmt::print(out,
             "# predicted step at {} ranks: {:.1f} us: compute {:.1f} us as measured here, "
             "communication {:.1f} us = {:.1f}% of the step (no overlap assumed)\n",
             ranks, stepUs, computeUs, commUs, stepUs > 0 ? commUs / stepUs * 100 : 0.0);
}

int doProxy(const ProxyCliOptions& c) {
  ProxyOptions o = toProxyOptions(c);  // bad input fails here, before any rank starts
  checkDbPath(c.measure.db, c.measure.noDb);
  checkLabel(c.measure.label);
  if (!c.json.empty()) checkOutputPath(c.json, "--json");
  // --predict-ranks: the fits read and the step planned at M ranks before anything is measured,
  // so a bad log, a layout that does not fit M or a call the fits cannot reach exits 2 here.
  std::optional<ScaleModels> models;
  std::vector<CallStat> atScale;
  if (c.predict.ranks > 0) {
    models = loadScaleModels(c.predict, "proxy --predict-ranks");
    atScale = planStep(o, c.predict.ranks, 0);
    for (const CallStat& call : atScale)
      (void)models->callUs(call.coll, call.nranks, call.bytes, "proxy --predict-ranks");
  }
  const SessionOptions session = c.measure.session();
  return runMeasuringCommand(session, [&](RunSession& s) {
    // Checks that need the world size; every rank fails alike (rank 0 prints the one line).
    validateProxy(o, s.team().size());
    validateVariant(o, s.team().worldKind(), s.team().size());
    s.beginRun();
    const bool root = s.root();
    std::FILE* out = stdout;
    if (root) {
      s.printHeader(out);
      // The transport is resolved inside runProxy; print the set-up with what the user asked.
      printProxySetup(out, o, s.team().size(), effectiveAlgo(o, s.team().worldKind()),
                      o.variant.schedule.transport);
      std::fflush(out);
    }
    ProxyResult res = runProxy(s.team(), o);
    // Every call against its group's bound (docs/PEAK.md); host ranks need the copy rate, which
    // all ranks measure together.
    const RunTopology& topo = s.topology();
    stopIfInterrupted(s.team().comm(), Deadline::after(o.timeoutSeconds));  // not after a signal
    // One rank: no call group has two ranks to bound (ProxyPeak), so nothing to measure.
    // The copy passes the ranks' L3 (bench/Peak.h copyProbeBytes): a copy in the cache is no bound.
    const double copy = s.team().size() > 1
                            ? hostCopyGBps(s.team(), topo.placements, o.timeoutSeconds, nullptr,
                                           ranksCacheBytes(topo.hosts, topo.placements))
                            : 0;
    RunOutcome outcome;
    if (!root) return outcome;
    for (auto& run : res.runs) {
      std::vector<RankPlacement> first(
          topo.placements.begin(),
          topo.placements.begin() + std::min<size_t>(run.n, topo.placements.size()));
      setCallPeaks(o, topo.hosts, first, copy, run);
    }
    std::fputs(proxyCopyPeakLine(copy, s.team().size()).c_str(), out);
    printProxyResult(out, o, res);
    if (models) printPredictedStep(out, *models, atScale, res.runs.back(), c.predict.ranks);
    const ProxyOutputs stored = proxyOutputs(o, res, s.runId());
    if (!c.json.empty()) {
      writeOutputFile(c.json, stored.json + "\n", "--json");
    }
    for (const auto& rec : stored.records) s.addResult(rec);
    outcome.wrong += stored.wrong;
    s.setDetail("proxy", stored.json);
    return outcome;
  });
}

}  // namespace

void setupProxyCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<ProxyCliOptions>();
  sub->add_option("mode", o->mode, proxyModeHelp())->required();
  sub->add_option("--model", o->model,
                  "resnet50, bert-large, gpt2-xl, llama2-7b, llama2-13b, llama2-70b, gpt3-175b, "
                  "or custom (with --blocks --hidden --heads --seq ...)")
      ->capture_default_str();
  sub->add_option("--model-json", o->modelJson,
                  "A model from JSON: a transformer shape or an explicit list of layers");
  sub->add_option("--blocks", o->blocks, "custom: transformer blocks");
  sub->add_option("--hidden", o->hidden, "custom: hidden size");
  sub->add_option("--heads", o->heads, "custom: attention heads");
  sub->add_option("--kv-heads", o->kvHeads, "custom: KV heads (grouped-query attention)");
  sub->add_option("--ffn", o->ffn, "custom: MLP width (default 4 x hidden)");
  sub->add_option("--vocab", o->vocab, "custom: vocabulary (0: no embedding and head)");
  sub->add_option("--mlp", o->mlp, "custom: gelu (2 matrices) or swiglu (3)");
  sub->add_option("--seq", o->seq, "Sequence length (default: the model's)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--layers", o->layers,
                  "Run a slice: the first N blocks only (a model too big for the machine)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--batch", o->batch, "Samples per micro-batch per data-parallel rank")
      ->capture_default_str();
  sub->add_option("--grad-dtype", o->gradType, "Gradient type (float, bfloat16, half, ...)")
      ->capture_default_str();
  sub->add_option("--act-dtype", o->actType, "Activation type")->capture_default_str();
  sub->add_option("--tflops", o->tflops, "Modelled compute throughput per rank")
      ->capture_default_str();
  sub->add_option("--compute", o->compute, "Scale of the modelled compute (0: communication only)")
      ->capture_default_str();
  sub->add_option("--dp", o->dp, "hybrid: data-parallel ranks (0: the rest)");
  sub->add_option("--tp", o->tp, "hybrid: tensor-parallel ranks");
  sub->add_option("--pp", o->pp, "hybrid: pipeline stages");
  sub->add_option("--layout", o->layout, "Rank order of the dimensions, innermost first")
      ->capture_default_str();
  sub->add_option("--dp-kind", o->dpKind, "allreduce (DDP buckets), ps (parameter server), sharded")
      ->capture_default_str();
  sub->add_option("--bucket-cap", o->bucketCap, "DDP bucket cap")->capture_default_str();
  sub->add_option("--first-bucket", o->firstBucket, "DDP first bucket cap")->capture_default_str();
  sub->add_flag("--no-overlap", o->noOverlap,
                "Start gradient communication after the whole backward (the contrast)");
  sub->add_option("--servers", o->servers, "ps: server ranks (the first ranks)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--tp-kind", o->tpKind, "column, row, megatron, sequence")->capture_default_str();
  sub->add_option("--schedule", o->schedule, "gpipe, 1f1b, async (no flush)")
      ->capture_default_str();
  sub->add_option("-m,--micro-batches", o->microBatches,
                  "Micro-batches per step: pipeline micro-batches, or without a pipeline gradient "
                  "accumulation (one DP reduction per step); default 4 with a pipeline, else 1");
  sub->add_option("--optimizer", o->optimizer,
                  "none, sgd or adam: after backward the loss and gradient-norm all-reduces and "
                  "the update (modelled as memory traffic at --mem-gbps)")
      ->capture_default_str();
  sub->add_option("--zero", o->zero,
                  "ZeRO stage: 1 optimizer state sharded (all-gather parameters after the step), "
                  "2 gradients too (reduce-scatter per bucket), 3 parameters too (= --dp-kind "
                  "sharded)")
      ->capture_default_str();
  sub->add_option("--mem-gbps", o->memGbps, "Memory bandwidth of the modelled optimizer update")
      ->capture_default_str();
  sub->add_option("--stage-weights", o->stageWeights,
                  "Compute weight per stage, e.g. 1.5,1,1,1.5 (heavier first/last stage)");
  sub->add_option("--steps", o->steps, "Timed steps")->capture_default_str();
  sub->add_option("-w,--warmup", o->warmup, "Warm-up steps")->capture_default_str();
  sub->add_option("-c,--check", o->check, "Verify every call once after timing (0: no)")
      ->capture_default_str();
  sub->add_option("--algo", o->algo,
                  "Variant of the collectives (default: mpi under MPI, ring in the local world)");
  sub->add_option("--transport", o->transport, "Transport of hand-written variants and PP/PS");
  sub->add_option("--scaling", o->scaling,
                  "strong or weak: run on 1, 2, 4, ... N ranks, print speed-up and efficiency")
      ->capture_default_str();
  sub->add_option("--predict-to", o->predictTo,
                  "Predict DP steps up to N ranks (default 1024, or 64x the world if less)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--extrapolate", o->extrapolate,
                "Allow --predict-to beyond 64x the largest measured world (rows marked)");
  sub->add_option("--predict-ranks-per-node", o->predictRanksPerNode,
                  "Predict across nodes of this many ranks (needs --inter-node-gbps/-us)");
  sub->add_option("--inter-node-gbps", o->interNodeGbps,
                  "Predictions across nodes: inter-node bandwidth per rank, GB/s");
  sub->add_option("--inter-node-us", o->interNodeUs,
                  "Predictions across nodes: inter-node latency per message, us");
  sub->add_option("--json", o->json, "Write metrics, calls, timeline and scaling to this file");
  addMeasureOptions(sub, o->measure, "wait",
                    "Ranks of the local world (threads; default: cores, at least 2)");
  o->predict.add(sub);
  runOnParse(sub, action, o, doProxy);
}

}  // namespace cb::cli
