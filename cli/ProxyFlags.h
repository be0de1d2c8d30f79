// `collbench proxy`'s flags and their translation into the engine's options
// (training_proxies/Proxy.h), with the checks that need no world.
#pragma once

#include <optional>
#include <string>

#include "cli/MeasureOptions.h"
#include "cli/ReplayPredict.h"
#include "training_proxies/Proxy.h"

namespace cb::cli {

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
  MeasureOptions measure;     // -T, --db, --no-db, --label, --np, --bind, --strict
  ScalePredictFlags predict;  // --predict-ranks M: the step at M ranks from the scale model
};

// UsageError, with the first bad flag's one line, before any rank starts.
proxy::ProxyOptions toProxyOptions(const ProxyCliOptions& c);

}  // namespace cb::cli
