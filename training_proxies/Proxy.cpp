#include "training_proxies/Proxy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Stats.h"
#include "training_proxies/RankProxy.h"

namespace cb::proxy {

const ProxyModeInfo& ProxyMode::info() const { return proxyModes().at(row_); }

std::string_view proxyModeName(ProxyMode m) { return m.info().name; }

ProxyMode parseProxyMode(std::string_view name) {
  const auto& modes = proxyModes();
  std::vector<std::string_view> names;
  for (size_t i = 0; i < modes.size(); ++i) {
    if (modes[i].name == name) return ProxyMode(static_cast<uint8_t>(i));
    names.push_back(modes[i].name);
  }
  throw UsageError(fmt::format("unknown proxy '{}' ({})", name, fmt::join(names, ", ")));
}

std::string proxyModeHelp() {
  std::vector<std::string> parts;
  for (const auto& m : proxyModes()) parts.push_back(fmt::format("{} ({})", m.name, m.description));
  return fmt::format("{}", fmt::join(parts, ", "));
}

constexpr EnumRow<OptimizerKind> kOptimizers[] = {{OptimizerKind::kNone, "none"},
                                                  {OptimizerKind::kSgd, "sgd"},
                                                  {OptimizerKind::kAdam, "adam", "adamw"}};
std::string_view optimizerName(OptimizerKind k) { return enumName(kOptimizers, k); }
OptimizerKind parseOptimizer(std::string_view name) {
  return parseEnum(kOptimizers, name, "optimizer");
}

OptimizerKind optimizerFor(const ProxyOptions& o) {
  if (o.optimizer != OptimizerKind::kNone || o.zero == 0) return o.optimizer;
  return OptimizerKind::kAdam;  // ZeRO shards an optimizer's state: Adam's, as in the paper
}

bool shardedParams(const ProxyOptions& o) { return o.dpKind == DpKind::kSharded || o.zero == 3; }

bool parameterServer(const ProxyOptions& o) {
  return o.dpKind == DpKind::kParameterServer && o.mode.info().dimension == &Layout::dp;
}

std::string algoFor(const ProxyOptions& o, Collective coll, const std::string& algo) {
  const Registry& reg = Registry::orBuiltin(o.registry);
  // The buffers' broadcast: the same variant where it has one (mpi, nccl), else the binomial tree.
  if (coll == Collective::kBroadcast && !reg.find(coll, algo)) return "binomial";
  return algo;
}

int microBatchesFor(const ProxyOptions& o, const Layout& l) {
  if (o.microBatches > 0) return o.microBatches;
  return l.pp > 1 ? 4 : 1;
}

Layout resolveLayout(const ProxyOptions& o, int worldSize, int rank) {
  Layout l;
  if (int Layout::*dimension = o.mode.info().dimension) {
    l.*dimension = worldSize;
  } else {
    int given = 1, unset = 0;
    for (int v : {o.dp, o.tp, o.pp}) {
      if (v < 0) throw UsageError("--dp, --tp and --pp must not be negative");
      if (v > 0)
        given *= v;
      else
        ++unset;
    }
    if (unset > 1) {
      throw UsageError(
          fmt::format("{}: give at least two of --dp, --tp, --pp", o.mode.info().name));
    }
    if (worldSize % given != 0) {
      throw UsageError(fmt::format("layout dp {} x tp {} x pp {} does not divide the {} ranks",
                                   o.dp, o.tp, o.pp, worldSize));
    }
    const int rest = worldSize / given;
    l.dp = o.dp > 0 ? o.dp : rest;
    l.tp = o.tp > 0 ? o.tp : rest;
    l.pp = o.pp > 0 ? o.pp : rest;
    if (l.dp * l.tp * l.pp != worldSize) {
      throw UsageError(fmt::format("layout dp {} x tp {} x pp {} = {} ranks, the world has {}",
                                   l.dp, l.tp, l.pp, l.dp * l.tp * l.pp, worldSize));
    }
  }
  // Coordinates: the first dimension of layoutOrder varies fastest.
  int stride = 1;
  for (const auto& d : o.layoutOrder) {
    int size = d == "dp" ? l.dp : d == "tp" ? l.tp : l.pp;
    int idx = (rank / stride) % size;
    (d == "dp" ? l.dpIdx : d == "tp" ? l.tpIdx : l.ppIdx) = idx;
    stride *= size;
  }
  return l;
}

// The largest world a scaling run predicts: --predict-to, else 1024 or 64x the measured world.
static int predictLimit(const ProxyOptions& o, int worldSize) {
  return o.predictTo > 0 ? o.predictTo : std::min(1024, kMaxPredictFactor * worldSize);
}

void validateProxy(const ProxyOptions& o, int worldSize) {
  Layout l = resolveLayout(o, worldSize, 0);
  const Model& m = o.model;
  if (l.tp > 1) {
    if (!m.transformer) {
      throw UsageError(
          fmt::format("tensor parallelism needs a transformer model; {} is not one", m.name));
    }
    if (m.heads % l.tp != 0) {
      throw UsageError(
          fmt::format("tp {} does not divide the {} attention heads of {}", l.tp, m.heads, m.name));
    }
  }
  if (l.pp > static_cast<int>(m.layers.size())) {
    throw UsageError(
        fmt::format("pp {} exceeds the {} layers of {}", l.pp, m.layers.size(), m.name));
  }
  if (!o.stageWeights.empty() && static_cast<int>(o.stageWeights.size()) != l.pp) {
    throw UsageError(fmt::format("--stage-weights has {} values for {} pipeline stages",
                                 o.stageWeights.size(), l.pp));
  }
  if (o.dpKind == DpKind::kParameterServer) {
    if (o.mode.info().dimension != &Layout::dp) {
      throw UsageError("the parameter server runs with `proxy dp` only");
    }
    if (o.microBatches > 1) {
      throw UsageError("the parameter server runs one batch per step: no -m");
    }
    if (o.servers < 1 || o.servers >= worldSize) {
      throw UsageError(fmt::format("--servers {} must leave at least one worker of the {} ranks",
                                   o.servers, worldSize));
    }
  }
  if (o.scaling != ScalingKind::kNone && !o.mode.info().dimension) {
    throw UsageError("--scaling varies one dimension: use it with dp, tp or pp");
  }
  if (o.predictTo < 0) throw UsageError("--predict-to must not be negative");
  if (o.predictRanksPerNode < 0) {
    throw UsageError("--predict-ranks-per-node must not be negative");
  }
  if (!std::isfinite(o.interNode.alpha) || !std::isfinite(o.interNode.beta) ||
      o.interNode.alpha < 0 || o.interNode.beta < 0) {
    throw UsageError("--inter-node-us and --inter-node-gbps must be finite and positive");
  }
  if (o.interNode.known() && o.predictRanksPerNode == 0) {
    throw UsageError(
        "--inter-node-us/--inter-node-gbps describe the link between nodes: give "
        "--predict-ranks-per-node too");
  }
  if (o.predictRanksPerNode > 0 && o.scaling != ScalingKind::kNone &&
      predictLimit(o, worldSize) > o.predictRanksPerNode && !o.interNode.known()) {
    throw UsageError(fmt::format(
        "predicting across nodes of {} ranks needs the inter-node link, which one host cannot "
        "measure: give --inter-node-gbps (per rank, e.g. 25 for one 200 Gb/s NIC per GPU) and "
        "--inter-node-us (e.g. 5)",
        o.predictRanksPerNode));
  }
  if (o.predictTo > kMaxPredictFactor * worldSize && !o.extrapolate) {
    throw UsageError(fmt::format(
        "--predict-to {} is more than {}x the largest measured world ({} ranks): the fit has only "
        "seen {} ranks; give --extrapolate to predict anyway",
        o.predictTo, kMaxPredictFactor, worldSize, worldSize));
  }
  if (o.scaling != ScalingKind::kNone && o.dpKind == DpKind::kParameterServer) {
    throw UsageError("--scaling with the parameter server is not supported (servers fixed)");
  }
  if (o.zero < 0 || o.zero > 3) throw UsageError(fmt::format("--zero {} is not 0..3", o.zero));
  if (o.zero > 0 && o.dpKind == DpKind::kParameterServer) {
    throw UsageError("--zero shards a data-parallel group: not with the parameter server");
  }
  if (o.zero > 0 && o.zero < 3 && o.dpKind == DpKind::kSharded) {
    throw UsageError(fmt::format("--zero {} with --dp-kind sharded (that is ZeRO-3)", o.zero));
  }
  if (o.schedule == PpSchedule::kAsync && l.pp > 1 && o.steps < 2) {
    throw UsageError("the asynchronous schedule needs --steps >= 2 (it runs steps back to back)");
  }
}

std::string effectiveAlgo(const ProxyOptions& o, WorldKind kind) {
  if (!o.algo.empty()) return o.algo;
  return kind == WorldKind::kMpi ? "mpi" : "ring";
}

void validateVariant(const ProxyOptions& o, WorldKind kind, int worldSize) {
  const Registry& reg = Registry::orBuiltin(o.registry);
  const std::string algo = effectiveAlgo(o, kind);
  Layout l = resolveLayout(o, worldSize, 0);
  std::vector<Collective> need;
  if (parameterServer(o)) return;
  if (l.dp > 1 || o.scaling != ScalingKind::kNone) {
    need.push_back(Collective::kAllReduce);
    if (o.zero > 0 || shardedParams(o)) {
      need.push_back(Collective::kAllGather);
      need.push_back(Collective::kReduceScatter);
    }
  }
  if (l.tp > 1) {
    for (bool fwd : {true, false}) {
      for (const auto& c : tpCalls(o.tpKind, fwd, 1)) need.push_back(c.coll);
    }
  }
  for (Collective c : need) {
    if (!reg.find(c, algo)) {
      throw UsageError(fmt::format("--algo {}: no {} variant of that name (see collbench list)",
                                   algo, collectiveName(c)));
    }
  }
}

std::vector<CallStat> planStep(const ProxyOptions& o, int worldSize, int rank) {
  validateProxy(o, worldSize);
  rank::RankProxy rp(nullptr, o, resolveLayout(o, worldSize, rank), o.batch, worldSize, rank);
  return rp.plan();
}

namespace {

ProxyRun runOnce(Team& team, const ProxyOptions& o, double batch) {
  Layout l = resolveLayout(o, team.size(), team.rank());
  rank::RankProxy rp(&team, o, l, batch, team.size(), team.rank());
  rank::RankOutcome out = rp.run();
  return rank::gatherRun(team.comm(), o, resolveLayout(o, team.size(), 0), batch, out);
}

void addPredictions(const ProxyOptions& o, const std::string& algo, ProxyResult& res,
                    int worldSize) {
  // Fit on every measured collective of the step (sizes x world sizes).
  std::vector<CostSample> samples;
  for (const auto& run : res.runs) {
    for (const auto& c : run.calls) {
      if (c.nranks < 2) continue;
      Collective coll;
      if (c.coll == "allreduce")
        coll = Collective::kAllReduce;
      else if (c.coll == "allgather")
        coll = Collective::kAllGather;
      else if (c.coll == "reduce_scatter")
        coll = Collective::kReduceScatter;
      else
        continue;
      const DataType t = c.dtype;
      CollArgs a{coll, t, RedOp::kSum, 0, 1};
      const size_t count = c.bytes / (algBytes(a, c.nranks));
      samples.push_back(
          {costFeatures(coll, t, count, c.nranks, algo, &res.fitModelledAs), c.seconds});
    }
  }
  res.fit = fitCost(samples);
  if (!res.fit.ok || o.scaling == ScalingKind::kNone || o.mode.info().dimension != &Layout::dp ||
      o.dpKind != DpKind::kAllReduce) {
    return;
  }
  // DP all-reduce steps for 8, 16, ... ranks past the measured ones, up to predictLimit. Without
  // --algo the calls are predicted as a library would run them at that size (the fastest of ring,
  // tree, hierarchical), with a named hand-written algorithm as that algorithm.
  const double t1 = res.runs.front().n == 1 ? res.runs.front().step : 0;
  const int limit = predictLimit(o, worldSize);
  const std::string predictAs = o.algo.empty() ? "library" : algo;
  const int perNode = o.predictRanksPerNode;
  std::vector<int> sizes;
  for (int n = 8; n <= limit; n *= 2) sizes.push_back(n);
  if (o.predictTo > 0 && (sizes.empty() || sizes.back() != limit)) sizes.push_back(limit);
  for (int n : sizes) {
    if (n <= worldSize) continue;
    const double batch = o.scaling == ScalingKind::kStrong ? o.batch * worldSize / n : o.batch;
    std::vector<double> fwd, bwd;
    for (const auto& layer : o.model.layers) {
      double f = o.computeScale > 0 && o.tflops > 0
                     ? layer.fwdFlopsPerSample * batch / (o.tflops * 1e12) * o.computeScale
                     : 0;
      fwd.push_back(f);
      bwd.push_back(2 * f);
    }
    auto buckets =
        ddpBuckets(o.model, dataTypeSize(o.gradType), o.bucketCapBytes, o.firstBucketBytes);
    std::vector<double> comm, low, high;
    std::set<std::string> used;
    for (const auto& b : buckets) {
      auto call =
          predictCall(res.fit, Collective::kAllReduce, o.gradType,
                      b.bytes / dataTypeSize(o.gradType), n, predictAs, perNode, o.interNode);
      comm.push_back(call.seconds);
      used.insert(call.algo);
      low.push_back(comm.back() * (1 + res.fit.relLow));
      high.push_back(comm.back() * (1 + res.fit.relHigh));
    }
    DpStepSim sim = simulateDpStep(fwd, bwd, buckets, comm, o.overlap);
    ScalingRow row;
    row.n = n;
    row.predicted = true;
    row.extrapolated = n > kMaxPredictFactor * worldSize;
    row.model = fmt::format("{}", fmt::join(used, "+"));
    if (perNode > 0 && perNode < n) {
      row.model += fmt::format(", {} nodes of {}", (n + perNode - 1) / perNode, perNode);
    }
    row.stepSeconds = sim.step;
    row.stepLow = simulateDpStep(fwd, bwd, buckets, low, o.overlap).step;
    row.stepHigh = simulateDpStep(fwd, bwd, buckets, high, o.overlap).step;
    row.commSeconds = sim.comm;
    row.exposedSeconds = sim.exposed;
    if (t1 > 0) {
      row.speedup = speedup(o.scaling, t1, sim.step, n);
      row.efficiency = row.speedup / n;
    }
    res.scaling.push_back(row);
  }
}

}  // namespace

ProxyResult runProxy(Team& world, const ProxyOptions& o) {
  validateProxy(o, world.size());
  ProxyResult res;
  res.algo = effectiveAlgo(o, world.worldKind());
  const Registry& reg = Registry::orBuiltin(o.registry);
  const VariantInfo* ar = reg.find(Collective::kAllReduce, res.algo);
  if (ar && ar->backend == "hand") {
    res.transport = o.variant.schedule.transport.empty() ? world.defaultTransport()
                                                         : o.variant.schedule.transport;
  }
  if (o.scaling == ScalingKind::kNone) {
    res.runs.push_back(runOnce(world, o, o.batch));
  } else {
    const int N = world.size();
    for (int n : scalingSizes(N)) {
      const bool member = world.rank() < n;
      auto sub = world.split(member ? 0 : 1, world.rank());
      const double batch = o.scaling == ScalingKind::kStrong ? o.batch * N / n : o.batch;
      if (member) {
        ProxyRun run = runOnce(*sub, o, batch);
        if (world.rank() == 0) res.runs.push_back(std::move(run));
      }
      // Ranks outside this size wait here, bounded by -T like every wait.
      world.comm().barrier(Deadline::after(o.timeoutSeconds));
    }
    if (world.rank() == 0) {
      const double t1 = res.runs.front().step;
      for (const auto& run : res.runs) {
        ScalingRow row;
        row.n = run.n;
        row.stepSeconds = run.step;
        row.commSeconds = run.comm;
        row.exposedSeconds = run.exposed;
        row.speedup = speedup(o.scaling, t1, run.step, run.n);
        row.efficiency = row.speedup / run.n;
        res.scaling.push_back(row);
      }
    }
  }
  if (world.rank() == 0) addPredictions(o, res.algo, res, world.size());
  return res;
}

}  // namespace cb::proxy
