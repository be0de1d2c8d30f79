#include "training_proxies/Plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "core/EnumNames.h"
#include "core/Error.h"

namespace cb::proxy {

std::vector<Bucket> ddpBuckets(const Model& m, size_t elemBytes, uint64_t capBytes,
                               uint64_t firstCapBytes) {
  if (capBytes == 0 || firstCapBytes == 0) throw UsageError("bucket caps must be positive");
  std::vector<Bucket> out;
  Bucket cur;
  bool open = false;
  uint64_t offset = 0;
  for (int li = static_cast<int>(m.layers.size()) - 1; li >= 0; --li) {
    const auto& tensors = m.layers[li].tensors;
    for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {
      if (*it == 0) continue;
      if (!open) {
        cur = Bucket{};
        cur.offsetBytes = offset;
        cur.lastLayer = li;
        open = true;
      }
      cur.bytes += *it * elemBytes;
      cur.firstLayer = li;
      ++cur.tensors;
      offset += *it * elemBytes;
      const uint64_t limit = out.empty() ? firstCapBytes : capBytes;
      if (cur.bytes >= limit) {
        out.push_back(cur);
        open = false;
      }
    }
  }
  if (open) out.push_back(cur);
  return out;
}

constexpr EnumRow<PpSchedule> kPpSchedules[] = {{PpSchedule::kGPipe, "gpipe"},
                                                {PpSchedule::k1F1B, "1f1b"},
                                                {PpSchedule::kAsync, "async", "pipedream"}};
std::string_view ppScheduleName(PpSchedule s) { return enumName(kPpSchedules, s); }
PpSchedule parsePpSchedule(std::string_view name) {
  return parseEnum(kPpSchedules, name, "pipeline schedule");
}

namespace {

std::vector<PipeOp> oneFOneB(int stage, int p, int m) {
  std::vector<PipeOp> ops;
  const int warm = std::min(p - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warm; ++f) ops.push_back({true, f});
  while (f < m) {
    ops.push_back({true, f++});
    ops.push_back({false, b++});
  }
  while (b < m) ops.push_back({false, b++});
  return ops;
}

}  // namespace

std::vector<PipeOp> pipelineOrder(PpSchedule s, int stage, int p, int m, int steps) {
  if (p < 1 || m < 1 || stage < 0 || stage >= p || steps < 1) {
    throw UsageError(fmt::format("bad pipeline shape: stage {} of {}, {} micro-batches, {} steps",
                                 stage, p, m, steps));
  }
  if (s != PpSchedule::kAsync && steps != 1) {
    throw InternalError("synchronous pipeline orders are per step");
  }
  switch (s) {
    case PpSchedule::kGPipe: {
      std::vector<PipeOp> ops;
      for (int i = 0; i < m; ++i) ops.push_back({true, i});
      for (int i = 0; i < m; ++i) ops.push_back({false, i});
      return ops;
    }
    case PpSchedule::k1F1B: return oneFOneB(stage, p, m);
    case PpSchedule::kAsync: return oneFOneB(stage, p, m * steps);
  }
  return {};
}

std::string orderText(const std::vector<PipeOp>& ops) {
  std::string s;
  for (const auto& op : ops) {
    if (!s.empty()) s += ' ';
    s += fmt::format("{}{}", op.forward ? 'F' : 'B', op.microBatch);
  }
  return s;
}

PipelineSim simulatePipeline(const std::vector<std::vector<PipeOp>>& orders,
                             const std::vector<double>& fwd, const std::vector<double>& bwd,
                             double link) {
  const int p = static_cast<int>(orders.size());
  // Output ready times: forward activation of (stage, mb) and backward gradient of (stage, mb).
  std::map<std::pair<int, int>, double> fDone, bDone;
  std::vector<size_t> next(p, 0);
  std::vector<double> free(p, 0.0);
  PipelineSim sim;
  sim.busy.assign(p, 0.0);
  sim.transfer.assign(p, 0.0);
  size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      while (next[s] < orders[s].size()) {
        const PipeOp op = orders[s][next[s]];
        double ready = free[s];
        if (op.forward && s > 0) {
          auto it = fDone.find({s - 1, op.microBatch});
          if (it == fDone.end()) break;
          ready = std::max(ready, it->second + link);
        }
        if (!op.forward) {
          // Needs its own forward, and the gradient from the next stage.
          if (!fDone.count({s, op.microBatch})) break;
          if (s < p - 1) {
            auto it = bDone.find({s + 1, op.microBatch});
            if (it == bDone.end()) break;
            ready = std::max(ready, it->second + link);
          }
        }
        const double d = op.forward ? fwd[s] : bwd[s];
        free[s] = ready + d;
        sim.busy[s] += d;
        (op.forward ? fDone : bDone)[{s, op.microBatch}] = free[s];
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) throw InternalError("pipeline orders deadlock");
  }
  sim.makespan = *std::max_element(free.begin(), free.end());
  for (int s = 0; s < p; ++s) sim.idle.push_back(sim.makespan - sim.busy[s]);
  // What the transfers add to each stage's idle time, directly (waiting for a message) or
  // through a peer they delayed: the idle time beyond the same schedule's with instant links.
  if (link > 0) {
    PipelineSim instant = simulatePipeline(orders, fwd, bwd, 0);
    for (int s = 0; s < p; ++s) sim.transfer[s] = std::max(0.0, sim.idle[s] - instant.idle[s]);
  }
  return sim;
}

std::vector<double> scheduleIdlePerStep(PpSchedule s, int m, int window,
                                        const std::vector<double>& computePerStep) {
  const int p = static_cast<int>(computePerStep.size());
  std::vector<std::vector<PipeOp>> orders;
  std::vector<double> fwd, bwd;
  for (int st = 0; st < p; ++st) {
    orders.push_back(pipelineOrder(s, st, p, m, s == PpSchedule::kAsync ? window : 1));
    fwd.push_back(computePerStep[st] / (3.0 * m));
    bwd.push_back(2 * fwd.back());
  }
  PipelineSim sim = simulatePipeline(orders, fwd, bwd, 0);
  const double steps = s == PpSchedule::kAsync ? window : 1;
  for (auto& idle : sim.idle) idle /= steps;
  return sim.idle;
}

double idealBubble(int p, int m) { return static_cast<double>(p - 1) / (m + p - 1); }

std::vector<int> stageBoundaries(const Model& m, int p, const std::vector<double>& weights) {
  const int n = static_cast<int>(m.layers.size());
  if (p > n) {
    throw UsageError(
        fmt::format("{} pipeline stages need at least {} layers; {} has {}", p, p, m.name, n));
  }
  if (!weights.empty() && static_cast<int>(weights.size()) != p) {
    throw UsageError(fmt::format("--stage-weights has {} values for {} stages", weights.size(), p));
  }
  // Greedy on prefix sums of layer cost: stage s ends where the prefix passes its share.
  std::vector<double> cost(n);
  for (int i = 0; i < n; ++i) cost[i] = std::max(m.layers[i].fwdFlopsPerSample, 1.0);
  double total = 0;
  for (double c : cost) total += c;
  std::vector<double> share(p, 1.0);
  if (!weights.empty()) {
    // A heavier weight means a stage's layers cost more: it gets fewer of them.
    for (int s = 0; s < p; ++s) share[s] = 1.0 / weights[s];
  }
  double shareSum = 0;
  for (double w : share) shareSum += w;
  std::vector<int> bounds{0};
  double acc = 0, target = 0;
  int i = 0;
  for (int s = 0; s < p - 1; ++s) {
    target += total * share[s] / shareSum;
    int end = i;
    while (end < n - (p - 1 - s) && (end == bounds.back() || acc + cost[end] / 2 <= target)) {
      acc += cost[end];
      ++end;
    }
    bounds.push_back(end);
    i = end;
  }
  bounds.push_back(n);
  return bounds;
}

constexpr EnumRow<TpKind> kTpKinds[] = {{TpKind::kColumn, "column"},
                                        {TpKind::kRow, "row"},
                                        {TpKind::kMegatron, "megatron"},
                                        {TpKind::kSequence, "sequence", "sp"}};
std::string_view tpKindName(TpKind k) { return enumName(kTpKinds, k); }
TpKind parseTpKind(std::string_view name) {
  return parseEnum(kTpKinds, name, "tensor-parallel form");
}

std::vector<TpStep> tpBlockSteps(TpKind k, bool forward, uint64_t elements) {
  using C = Collective;
  auto compute = [](int part) { return TpStep{true, part, {C::kAllReduce, 0}}; };
  auto call = [&](C c) { return TpStep{false, 0, {c, elements}}; };
  // Backward runs the MLP first.
  const int first = forward ? 0 : 1, second = 1 - first;
  switch (k) {
    case TpKind::kColumn:  // each of the block's two linears split by columns
      return {compute(first), call(forward ? C::kAllGather : C::kAllReduce), compute(second),
              call(forward ? C::kAllGather : C::kAllReduce)};
    case TpKind::kRow:
      return {compute(first), call(forward ? C::kAllReduce : C::kAllGather), compute(second),
              call(forward ? C::kAllReduce : C::kAllGather)};
    case TpKind::kMegatron:
      return {compute(first), call(C::kAllReduce), compute(second), call(C::kAllReduce)};
    case TpKind::kSequence:
      if (forward) {
        return {call(C::kAllGather), compute(0), call(C::kReduceScatter),
                call(C::kAllGather), compute(1), call(C::kReduceScatter)};
      }
      return {call(C::kAllGather), compute(1), call(C::kAllGather), call(C::kReduceScatter),
              call(C::kAllGather), compute(0), call(C::kAllGather), call(C::kReduceScatter)};
  }
  return {};
}

std::vector<TpCall> tpCalls(TpKind k, bool forward, uint64_t elements) {
  std::vector<TpCall> out;
  for (const auto& s : tpBlockSteps(k, forward, elements)) {
    if (!s.compute) out.push_back(s.call);
  }
  return out;
}

std::string tpStepsText(const std::vector<TpStep>& steps) {
  std::string out;
  for (const auto& s : steps) {
    if (!out.empty()) out += ' ';
    if (s.compute) {
      out += s.part == 0 ? "attn" : "mlp";
    } else {
      out += s.call.coll == Collective::kAllReduce   ? "AR"
             : s.call.coll == Collective::kAllGather ? "AG"
                                                     : "RS";
    }
  }
  return out;
}

size_t tpCount(const TpCall& c, int t) {
  if (c.coll == Collective::kAllReduce) return c.elements;
  return (c.elements + t - 1) / t;
}

constexpr EnumRow<DpKind> kDpKinds[] = {{DpKind::kAllReduce, "allreduce"},
                                        {DpKind::kParameterServer, "ps", "parameter-server"},
                                        {DpKind::kSharded, "sharded", "zero fsdp"}};
std::string_view dpKindName(DpKind k) { return enumName(kDpKinds, k); }
DpKind parseDpKind(std::string_view name) {
  return parseEnum(kDpKinds, name, "data-parallel form");
}

uint64_t partBegin(uint64_t total, int parts, int i) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(total) * i) / parts);
}

}  // namespace cb::proxy
