// `collbench proxy dp|tp|pp|hybrid`: one training step's communication replayed on the world with
// modelled compute between the calls (training_proxies/Proxy.h), its metrics printed and stored:
// one result per world size (collective "proxy-<mode>", placement "step", time = step time,
// samples = per-step times) so runs/show/compare/gate treat a step like a collective, and the
// whole document (calls, timeline, scaling) attached to the run for `report`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "adapters/SweepRecords.h"
#include "bench/Peak.h"
#include "cli/Command.h"
#include "cli/MeasureOptions.h"
#include "cli/Validate.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Stats.h"
#include "core/Text.h"
#include "training_proxies/ProxyPeak.h"
#include "training_proxies/ProxyReport.h"

namespace cb::cli {
namespace {

using namespace cb::proxy;

struct ProxyCliOptions {
  std::string mode;
  std::string model = "bert-large";
  std::string modelJson;
  int blocks = 0, hidden = 0, heads = 0, kvHeads = 0, ffn = 0, vocab = 0;
  std::string mlp = "gelu";
  int seq = 0;
  int layers = 0;
  double batch = 1;
  std::string gradType = "float", actType = "bfloat16";
  double tflops = 100;
  double compute = 1;
  int dp = 0, tp = 0, pp = 0;
  std::string layout = "tp,pp,dp";
  std::string dpKind = "allreduce";
  std::string bucketCap = "25M", firstBucket = "1M";
  bool noOverlap = false;
  int servers = 1;
  std::string tpKind = "megatron";
  std::string schedule = "1f1b";
  std::optional<int> microBatches;
  std::string optimizer = "none";
  int zero = 0;
  double memGbps = 2000;
  std::string stageWeights;
  int steps = 10, warmup = 2, check = 1;
  std::string algo, transport;
  std::string scaling = "none";
  int predictTo = 0;
  bool extrapolate = false;
  int predictRanksPerNode = 0;
  double interNodeUs = 0, interNodeGbps = 0;
  std::string json;
  MeasureOptions measure;  // -T, --db, --no-db, --label, --np, --bind, --strict
};

std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t c = s.find(',', start);
    if (c == std::string::npos) c = s.size();
    out.push_back(s.substr(start, c - start));
    start = c + 1;
  }
  return out;
}

ProxyOptions toOptions(const ProxyCliOptions& c) {
  ProxyOptions o;
  o.mode = parseProxyMode(c.mode);
  const bool custom = c.model == "custom";
  if (!c.modelJson.empty()) {
    o.model = modelFromJsonFile(c.modelJson);
  } else if (custom) {
    TransformerShape s;
    s.blocks = c.blocks;
    s.hidden = c.hidden;
    s.heads = c.heads;
    s.kvHeads = c.kvHeads;
    s.ffn = c.ffn > 0 ? c.ffn : 4 * c.hidden;
    s.seq = c.seq;
    s.vocab = c.vocab;
    if (c.mlp != "gelu" && c.mlp != "swiglu") {
      throw UsageError(fmt::format("--mlp must be gelu or swiglu, not '{}'", c.mlp));
    }
    s.swiglu = c.mlp == "swiglu";
    o.model = transformerModel(s);
  } else {
    if (c.blocks || c.hidden || c.heads || c.ffn || c.vocab || c.kvHeads) {
      throw UsageError("--blocks/--hidden/--heads/--ffn/--vocab/--kv-heads need --model custom");
    }
    o.model = presetModel(c.model, c.seq);
  }
  if (c.layers != 0) sliceModel(o.model, c.layers);
  // Ranges beyond any machine or job, so that a typo (1e-300, 1e300) is not modelled for hours.
  checkRange(c.batch, "--batch", 1e-3, 1e6);
  o.batch = c.batch;
  o.gradType = parseDataType(c.gradType);
  o.actType = parseDataType(c.actType);
  for (DataType t : {o.gradType, o.actType}) {
    if (!redOpValidFor(RedOp::kSum, t)) {
      throw UsageError(fmt::format("{} can't carry gradients (no sum)", dataTypeName(t)));
    }
  }
  checkRange(c.tflops, "--tflops", 1e-3, 1e6);
  o.tflops = c.tflops;
  if (c.compute != 0) checkRange(c.compute, "--compute (0: communication only)", 1e-3, 1e6);
  o.computeScale = c.compute;
  o.dp = c.dp;
  o.tp = c.tp;
  o.pp = c.pp;
  if (o.mode != ProxyMode::kHybrid && (c.dp || c.tp || c.pp)) {
    throw UsageError("--dp/--tp/--pp set a hybrid layout: use `collbench proxy hybrid`");
  }
  o.layoutOrder = splitComma(c.layout);
  {
    auto sorted = o.layoutOrder;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::vector<std::string>{"dp", "pp", "tp"}) {
      throw UsageError(fmt::format(
          "--layout '{}' must name dp, tp and pp once each, innermost first (e.g. tp,pp,dp)",
          c.layout));
    }
  }
  o.dpKind = parseDpKind(c.dpKind);
  o.bucketCapBytes = parseSize(c.bucketCap);
  o.firstBucketBytes = parseSize(c.firstBucket);
  if (o.bucketCapBytes == 0 || o.firstBucketBytes == 0) {
    throw UsageError("--bucket-cap and --first-bucket must be positive");
  }
  o.overlap = !c.noOverlap;
  o.servers = c.servers;
  o.tpKind = parseTpKind(c.tpKind);
  o.schedule = parsePpSchedule(c.schedule);
  if (c.microBatches && *c.microBatches < 1) {
    throw UsageError(fmt::format("-m {} must be at least 1", *c.microBatches));
  }
  o.microBatches = c.microBatches.value_or(0);
  o.optimizer = parseOptimizer(c.optimizer);
  if (c.zero < 0 || c.zero > 3)
    throw UsageError(fmt::format("--zero {} is not 0, 1, 2 or 3", c.zero));
  o.zero = c.zero;
  // ZeRO-3 is the sharded form: --zero 3 and --dp-kind sharded are one thing.
  if (o.zero == 3 && o.dpKind == DpKind::kAllReduce) o.dpKind = DpKind::kSharded;
  if (o.dpKind == DpKind::kSharded && o.zero == 0) o.zero = 3;
  checkRange(c.memGbps, "--mem-gbps", 1e-3, 1e9);
  o.memGbps = c.memGbps;
  if (!c.stageWeights.empty()) {
    for (const auto& w : splitComma(c.stageWeights)) {
      double v = finiteNumber(w).value_or(-1);
      if (!(v > 0) || v > 1e6)
        throw UsageError(fmt::format("--stage-weights: '{}' is not a positive number", w));
      o.stageWeights.push_back(v);
    }
  }
  if (c.steps < 1) throw UsageError(fmt::format("--steps {} must be at least 1", c.steps));
  if (c.warmup < 0) throw UsageError("--warmup must not be negative");
  if (c.check < 0) throw UsageError("-c must not be negative");
  checkTimeout(c.measure.timeout, "-T");
  o.steps = c.steps;
  o.warmup = c.warmup;
  o.checkRounds = c.check;
  o.timeoutSeconds = c.measure.timeout;
  o.algo = c.algo;
  if (!c.transport.empty()) {
    auto names = transportNames();
    if (std::find(names.begin(), names.end(), c.transport) == names.end()) {
      throw UsageError(
          fmt::format("unknown --transport '{}' (one of {})", c.transport, fmt::join(names, ", ")));
    }
  }
  o.variant.schedule.transport = c.transport;
  o.variant.prepareTimeoutSeconds = c.measure.timeout;
  o.scaling = parseScalingKind(c.scaling);
  if (c.predictTo < 0) throw UsageError("--predict-to must not be negative");
  if ((c.predictTo > 0 || c.extrapolate) && o.scaling == ScalingKind::kNone) {
    throw UsageError("--predict-to and --extrapolate need --scaling strong|weak");
  }
  o.predictTo = c.predictTo;
  o.extrapolate = c.extrapolate;
  if (c.predictRanksPerNode != 0 && o.scaling == ScalingKind::kNone) {
    throw UsageError("--predict-ranks-per-node needs --scaling strong|weak");
  }
  o.predictRanksPerNode = c.predictRanksPerNode;
  // Negative and non-finite values were refused with every other number (OptionChecks).
  o.interNode.alpha = c.interNodeUs * 1e-6;
  o.interNode.beta = c.interNodeGbps > 0 ? 1 / (c.interNodeGbps * 1e9) : 0;
  if ((c.interNodeUs > 0) != (c.interNodeGbps > 0)) {
    throw UsageError("give both --inter-node-gbps and --inter-node-us");
  }
  return o;
}

std::string formText(const ProxyOptions& o, const Layout& l) {
  std::string form;
  switch (o.mode) {
    case ProxyMode::kDp:
      form = fmt::format("{}{}", dpKindName(o.dpKind),
                         o.dpKind != DpKind::kParameterServer && !o.overlap ? "-nooverlap" : "");
      break;
    case ProxyMode::kTp: form = std::string(tpKindName(o.tpKind)); break;
    case ProxyMode::kPp:
      form = fmt::format("{}-m{}", ppScheduleName(o.schedule), microBatchesFor(o, l));
      break;
    case ProxyMode::kHybrid: form = fmt::format("dp{}xtp{}xpp{}", l.dp, l.tp, l.pp); break;
  }
  // What else changes the step's traffic names a different case.
  if (o.mode != ProxyMode::kPp && microBatchesFor(o, l) > 1) {
    form += fmt::format("-m{}", microBatchesFor(o, l));
  }
  if (o.zero > 0 && o.zero < 3) form += fmt::format("-zero{}", o.zero);
  if (o.optimizer != OptimizerKind::kNone) form += fmt::format("-{}", optimizerName(o.optimizer));
  return form;
}

ResultRecord stepRecord(const ProxyOptions& o, const ProxyResult& r, const ProxyRun& run,
                        int64_t runId) {
  ResultRecord rec;
  rec.runId = runId;
  rec.collective = fmt::format("proxy-{}", proxyModeName(o.mode));
  rec.variant = fmt::format("{}{}/{}/{}", o.model.name,
                            o.model.sliced() ? fmt::format("-{}blk", o.model.slicedBlocks) : "",
                            formText(o, run.layout), variantLabel(r));
  rec.dtype = std::string(dataTypeName(o.gradType));
  rec.op = "sum";
  rec.sizeBytes = run.commBytesPerStep;
  rec.count = static_cast<uint64_t>(run.batchPerRank * run.layout.dp + 0.5);
  rec.placement = "step";
  rec.nranks = run.n;
  rec.status = "ok";
  if (run.wrong >= 0) rec.wrong = run.wrong;  // -1: not verified
  // Bandwidth of a step: the bytes rank 0 hands to communication per step over the step time.
  if (run.step > 0) rec.algbw = rec.busbw = run.commBytesPerStep / run.step / 1e9;
  Summary s = summarize(run.stepSamples);
  setTiming(rec, s, s.median, run.steps, Statistic::kMedian, run.stepSamples, run.rankSteps);
  return rec;
}

int doProxy(const ProxyCliOptions& c) {
  ProxyOptions o = toOptions(c);  // bad input fails here, before any rank starts
  checkDbPath(c.measure.db, c.measure.noDb);
  checkLabel(c.measure.label);
  if (!c.json.empty()) checkOutputPath(c.json, "--json");
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
    const double copy =
        s.team().size() > 1 ? hostCopyGBps(s.team(), topo.placements, o.timeoutSeconds) : 0;
    RunOutcome outcome;
    if (!root) return outcome;
    for (auto& run : res.runs) {
      std::vector<RankPlacement> first(
          topo.placements.begin(),
          topo.placements.begin() + std::min<size_t>(run.n, topo.placements.size()));
      setCallPeaks(o, topo.hosts, first, copy, run);
    }
    if (copy > 0) {
      fmt::print(out, "# peak: host memory copy {:.2f} GB/s per rank ({} ranks copying at once)\n",
                 copy, s.team().size());
    }
    printProxyResult(out, o, res);
    const std::string doc = proxyJson(o, res);
    if (!c.json.empty()) {
      writeOutputFile(c.json, doc + "\n", "--json");
    }
    for (const auto& run : res.runs) {
      s.addResult(stepRecord(o, res, run, s.runId()));
      outcome.wrong += std::max<int64_t>(run.wrong, 0);
    }
    s.setDetail("proxy", doc);
    return outcome;
  });
}

}  // namespace

void setupProxyCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<ProxyCliOptions>();
  auto* sub = app.add_subcommand(
      "proxy",
      "Training proxies: one DP, TP, PP or hybrid training step's communication with modelled "
      "compute; step time, exposed communication, overlap, bubble, scaling; stored like runs");
  sub->add_option(
         "mode", o->mode,
         "dp (data parallel), tp (tensor parallel), pp (pipeline), hybrid (--dp/--tp/--pp)")
      ->required();
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
  sub->callback([o, &action] { action = [o] { return doProxy(*o); }; });
}

}  // namespace cb::cli
