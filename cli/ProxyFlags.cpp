#include "cli/ProxyFlags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli/Validate.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/Size.h"
#include "core/Text.h"

namespace cb::cli {
namespace {

using namespace cb::proxy;

// Empty items are kept (splitList drops them): "1,,2" names an empty stage weight.
// The stages below run in the order the flags were always checked, so the first bad flag's line
// is the same whichever others are also bad.

// --model, --model-json, the custom shape, --layers.
void setModel(const ProxyCliOptions& c, ProxyOptions& o) {
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
}

// --batch, the data types, --tflops, --compute.
void setWork(const ProxyCliOptions& c, ProxyOptions& o) {
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
}

// --dp/--tp/--pp and --layout, then each dimension's form: DP buckets, PS servers, TP kind, the
// pipeline's schedule and micro-batches.
void setParallelism(const ProxyCliOptions& c, ProxyOptions& o) {
  o.dp = c.dp;
  o.tp = c.tp;
  o.pp = c.pp;
  if (o.mode.info().dimension && (c.dp || c.tp || c.pp)) {
    throw UsageError("--dp/--tp/--pp set a hybrid layout: use `collbench proxy hybrid`");
  }
  o.layoutOrder = splitFields(c.layout, ',');
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
}

// --optimizer, --zero, --mem-gbps, --stage-weights.
void setOptimizer(const ProxyCliOptions& c, ProxyOptions& o) {
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
    for (const auto& w : splitFields(c.stageWeights, ',')) {
      double v = finiteNumber(w).value_or(-1);
      if (!(v > 0) || v > 1e6)
        throw UsageError(fmt::format("--stage-weights: '{}' is not a positive number", w));
      o.stageWeights.push_back(v);
    }
  }
}

// --steps, -w, -c, -T, --algo, --transport.
void setRun(const ProxyCliOptions& c, ProxyOptions& o) {
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
}

// --scaling and the predictions: --predict-to, --extrapolate, across nodes.
void setScaling(const ProxyCliOptions& c, ProxyOptions& o) {
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
}

}  // namespace

ProxyOptions toProxyOptions(const ProxyCliOptions& c) {
  ProxyOptions o;
  o.mode = parseProxyMode(c.mode);
  setModel(c, o);
  setWork(c, o);
  setParallelism(c, o);
  setOptimizer(c, o);
  setRun(c, o);
  setScaling(c, o);
  return o;
}

}  // namespace cb::cli
