#include "training_proxies/Proxy.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "bench/Verify.h"
#include "collectives/transport/Transports.h"
#include "core/Buffer.h"
#include "core/Error.h"
#include "core/Reduce.h"
#include "core/Stats.h"

namespace cb::proxy {

std::string_view proxyModeName(ProxyMode m) {
  switch (m) {
    case ProxyMode::kDp: return "dp";
    case ProxyMode::kTp: return "tp";
    case ProxyMode::kPp: return "pp";
    case ProxyMode::kHybrid: return "hybrid";
  }
  return "?";
}

ProxyMode parseProxyMode(std::string_view name) {
  if (name == "dp") return ProxyMode::kDp;
  if (name == "tp") return ProxyMode::kTp;
  if (name == "pp") return ProxyMode::kPp;
  if (name == "hybrid") return ProxyMode::kHybrid;
  throw UsageError(fmt::format("unknown proxy '{}' (dp, tp, pp, hybrid)", name));
}

Layout resolveLayout(const ProxyOptions& o, int worldSize, int rank) {
  Layout l;
  switch (o.mode) {
    case ProxyMode::kDp: l.dp = worldSize; break;
    case ProxyMode::kTp: l.tp = worldSize; break;
    case ProxyMode::kPp: l.pp = worldSize; break;
    case ProxyMode::kHybrid: {
      int given = 1, unset = 0;
      for (int v : {o.dp, o.tp, o.pp}) {
        if (v < 0) throw UsageError("--dp, --tp and --pp must not be negative");
        if (v > 0)
          given *= v;
        else
          ++unset;
      }
      if (unset > 1) throw UsageError("hybrid: give at least two of --dp, --tp, --pp");
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
      break;
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
    if (o.mode != ProxyMode::kDp)
      throw UsageError("the parameter server runs with `proxy dp` only");
    if (o.servers < 1 || o.servers >= worldSize) {
      throw UsageError(fmt::format("--servers {} must leave at least one worker of the {} ranks",
                                   o.servers, worldSize));
    }
  }
  if (o.scaling != ScalingKind::kNone && o.mode == ProxyMode::kHybrid) {
    throw UsageError("--scaling varies one dimension: use it with dp, tp or pp");
  }
  if (o.scaling != ScalingKind::kNone && o.dpKind == DpKind::kParameterServer) {
    throw UsageError("--scaling with the parameter server is not supported (servers fixed)");
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
  const Registry& reg = o.registry ? *o.registry : Registry::builtin();
  const std::string algo = effectiveAlgo(o, kind);
  Layout l = resolveLayout(o, worldSize, 0);
  std::vector<Collective> need;
  if (o.mode == ProxyMode::kDp && o.dpKind == DpKind::kParameterServer) return;
  if (l.dp > 1 || o.scaling != ScalingKind::kNone) {
    if (o.dpKind == DpKind::kSharded) {
      need.push_back(Collective::kAllGather);
      need.push_back(Collective::kReduceScatter);
    } else {
      need.push_back(Collective::kAllReduce);
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

namespace {

using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The stand-in for a GPU stream: runs compute ops in order by sleeping, chained on target times.
class ComputeStream {
 public:
  struct Interval {
    int op;
    Clock::time_point start, end;
  };

  ComputeStream() : thread_([this] { loop(); }) {}
  ~ComputeStream() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  uint64_t enqueue(double seconds, int op) {
    std::lock_guard<std::mutex> g(mu_);
    jobs_.push_back({seconds, op, Clock::now()});
    ++enqueued_;
    cv_.notify_all();
    return enqueued_;
  }
  void waitDone(uint64_t seq, Deadline d) {
    std::unique_lock<std::mutex> lk(mu_);
    while (done_ < seq) {
      if (doneCv_.wait_until(lk, d.at()) == std::cv_status::timeout && done_ < seq) {
        d.check("modelled compute");
      }
    }
  }
  void waitIdle(Deadline d) {
    uint64_t target;
    {
      std::lock_guard<std::mutex> g(mu_);
      target = enqueued_;
    }
    waitDone(target, d);
  }
  std::vector<Interval> take() {
    std::lock_guard<std::mutex> g(mu_);
    return std::exchange(intervals_, {});
  }

 private:
  struct Job {
    double seconds;
    int op;
    Clock::time_point enqueued;
  };
  void loop() {
    Clock::time_point chain{}, lastEnd{};
    for (;;) {
      Job j;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
        if (stop_ && jobs_.empty()) return;
        j = jobs_.front();
        jobs_.pop_front();
      }
      const auto now = Clock::now();
      // A job queued while the stream was busy starts at the previous job's target end, so a
      // late wake-up is made up by the next sleep instead of accumulating.
      const auto start = j.enqueued <= chain ? chain : std::max(now, j.enqueued);
      chain = start +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(j.seconds));
      if (j.seconds > 0) std::this_thread::sleep_until(chain);
      const auto end = Clock::now();
      const auto recStart = std::max(now, lastEnd);
      lastEnd = end;
      std::lock_guard<std::mutex> g(mu_);
      intervals_.push_back({j.op, std::min(recStart, end), end});
      ++done_;
      doneCv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, doneCv_;
  std::deque<Job> jobs_;
  std::vector<Interval> intervals_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

enum class OpKind : uint8_t { kCompute, kColl, kExchange, kServerReduce };

struct Op {
  OpKind kind = OpKind::kCompute;
  std::string name;
  double seconds = 0;  // compute
  int call = -1;       // kColl: index into the prepared calls
  const void* send = nullptr;
  void* recv = nullptr;
  bool async = false;  // may overlap the compute enqueued after it
  int stat = -1;       // index into the rank's call kinds
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  bool stepEnd = false;  // async pipeline: a step ends with this op
};

struct CallKey {
  int comm;  // 0 dp, 1 tp
  Collective coll;
  size_t count;
  auto operator<=>(const CallKey&) const = default;
};

struct StatKey {
  std::string group, coll;
  uint64_t bytes;
  int nranks;
  auto operator<=>(const StatKey&) const = default;
};

// Fills a byte pattern that depends on the sender and the message, for point-to-point checks.
void fillBytes(void* p, size_t n, int src, int salt) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(i * 131 + src * 17 + salt);
}
int64_t wrongBytes(const void* p, size_t n, int src, int salt) {
  const auto* b = static_cast<const unsigned char*>(p);
  int64_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    w += b[i] != static_cast<unsigned char>(i * 131 + src * 17 + salt);
  }
  return w;
}

struct RankOutcome {
  // Per step: interval metrics of this rank.
  std::vector<double> step, compute, comm, exposed;
  std::vector<std::string> timelineText;  // per step, serialized events
  std::map<StatKey, std::vector<double>> callTimes;
  std::map<StatKey, int> callsPerStep;
  uint64_t commBytes = 0;
  int64_t wrong = 0;
};

double overlapWith(Clock::time_point s, Clock::time_point e,
                   const std::vector<ComputeStream::Interval>& busy) {
  double o = 0;
  for (const auto& b : busy) {
    auto lo = std::max(s, b.start), hi = std::min(e, b.end);
    if (hi > lo) o += secs(lo, hi);
  }
  return o;
}

// One rank of one proxy run on `comm` (n ranks).
class RankProxy {
 public:
  RankProxy(Team& team, const ProxyOptions& o, const Layout& l, double batch)
      : team_(team), comm_(team.comm()), o_(o), l_(l), batch_(batch), d_(o.timeoutSeconds) {}

  RankOutcome run();

 private:
  Deadline deadline() const { return Deadline::after(d_); }
  double layerFwdSeconds(const Layer& layer) const;
  void build();
  void buildPs();
  int addCall(int comm, Collective coll, size_t count);
  int addStat(const std::string& group, const std::string& coll, uint64_t bytes, int nranks);
  void emitCompute(const std::string& name, double seconds);
  void emitColl(const std::string& name, const std::string& group, int comm, Collective coll,
                size_t count, const void* send, void* recv, bool async);
  void emitLayer(int li, bool forward, bool lastMicroBatch, int mb);
  void prepare();
  void allocate();
  void execute(RankOutcome& out, bool record);
  void runComm(Op& op);
  int64_t verify();

  Team& team_;
  Communicator& comm_;
  const ProxyOptions& o_;
  Layout l_;
  double batch_;
  double d_;
  // Sub-teams (own communicator and transport cache); the transports are theirs.
  std::unique_ptr<Team> dpTeam_, tpTeam_, ppTeam_;
  Transport* ppTransport_ = nullptr;
  Transport* psTransport_ = nullptr;
  std::vector<Op> ops_;
  std::vector<CallKey> callKeys_;
  std::map<CallKey, int> callIndex_;
  std::vector<std::unique_ptr<PreparedCollective>> prepared_;
  std::vector<StatKey> stats_;
  std::map<StatKey, int> statIndex_;
  // Stage layers [lo_, hi_) and their DDP buckets (layer indices relative to lo_).
  int lo_ = 0, hi_ = 0;
  Model stageModel_;
  std::vector<Bucket> buckets_;
  // Buffers (real data of the modelled sizes).
  std::unique_ptr<DataBuffer> grad_, work_, workOut_, actA_, actB_, pipeSend_, pipeRecv_;
  std::vector<std::unique_ptr<DataBuffer>> psSlots_;
  uint64_t actElems_ = 0;    // b x s x h of a micro-batch (TP), padded to a multiple of tp
  uint64_t pipeBytes_ = 0;   // one stage-to-stage message
  uint64_t shardElems_ = 0;  // sharded: largest layer shard; ps: shard per server
  std::vector<uint64_t> psShard_;
  std::string algo_;
  std::unique_ptr<ComputeStream> stream_;
};

double RankProxy::layerFwdSeconds(const Layer& layer) const {
  if (o_.computeScale <= 0 || o_.tflops <= 0) return 0;
  double w = o_.stageWeights.empty() ? 1.0 : o_.stageWeights[l_.ppIdx];
  return layer.fwdFlopsPerSample * batch_ / (o_.tflops * 1e12) / l_.tp * w * o_.computeScale;
}

int RankProxy::addCall(int comm, Collective coll, size_t count) {
  CallKey k{comm, coll, count};
  auto it = callIndex_.find(k);
  if (it != callIndex_.end()) return it->second;
  callKeys_.push_back(k);
  return callIndex_[k] = static_cast<int>(callKeys_.size()) - 1;
}

int RankProxy::addStat(const std::string& group, const std::string& coll, uint64_t bytes,
                       int nranks) {
  StatKey k{group, coll, bytes, nranks};
  auto it = statIndex_.find(k);
  if (it != statIndex_.end()) return it->second;
  stats_.push_back(k);
  return statIndex_[k] = static_cast<int>(stats_.size()) - 1;
}

void RankProxy::emitCompute(const std::string& name, double seconds) {
  Op op;
  op.kind = OpKind::kCompute;
  op.name = name;
  op.seconds = seconds;
  ops_.push_back(std::move(op));
}

void RankProxy::emitColl(const std::string& name, const std::string& group, int comm,
                         Collective coll, size_t count, const void* send, void* recv, bool async) {
  Op op;
  op.kind = OpKind::kColl;
  op.name = name;
  op.call = addCall(comm, coll, count);
  op.send = send;
  op.recv = recv;
  op.async = async;
  const int n = comm == 0 ? l_.dp : l_.tp;
  CollArgs a{coll, comm == 0 ? o_.gradType : o_.actType, RedOp::kSum, 0, count};
  op.stat = addStat(group, std::string(collectiveName(coll)), algBytes(a, n), n);
  ops_.push_back(std::move(op));
}

// Forward or backward of one layer of this stage (li relative to the stage), with its TP calls
// and, for the last micro-batch's backward, the DP calls its gradients trigger.
void RankProxy::emitLayer(int li, bool forward, bool lastMicroBatch, int mb) {
  const Layer& layer = stageModel_.layers[li];
  const double f = layerFwdSeconds(layer) * (forward ? 1.0 : 2.0);
  const std::string dir = forward ? "fwd" : "bwd";
  const std::string tag = l_.pp > 1 ? fmt::format(" mb{}", mb) : "";
  const size_t gElem = dataTypeSize(o_.gradType);
  const bool sharded = l_.dp > 1 && o_.dpKind == DpKind::kSharded;
  if (sharded) {
    // Parameters gathered before use, in forward and again in backward (ZeRO-3 / FSDP).
    const size_t shard = (layer.params() + l_.dp - 1) / l_.dp;
    emitColl(fmt::format("allgather params {}{}", layer.name, tag), "sharded", 0,
             Collective::kAllGather, shard, work_->data(), workOut_->data(), false);
  }
  if (layer.block && l_.tp > 1) {
    auto calls = tpCalls(o_.tpKind, forward, actElems_);
    // Compute split around the calls: half before the first half of the calls, half after.
    const size_t half = calls.size() / 2;
    for (size_t part = 0; part < 2; ++part) {
      emitCompute(fmt::format("{} {}{} {}", dir, layer.name, tag, part == 0 ? "attn" : "mlp"),
                  f / 2);
      for (size_t c = part * half; c < (part + 1) * half; ++c) {
        const size_t count = tpCount(calls[c], l_.tp);
        const bool ar = calls[c].coll == Collective::kAllReduce;
        emitColl(fmt::format("tp {} {}{}", collectiveName(calls[c].coll), layer.name, tag), "tp", 1,
                 calls[c].coll, count, ar ? actB_->data() : actA_->data(), actB_->data(), false);
      }
    }
  } else {
    emitCompute(fmt::format("{} {}{}", dir, layer.name, tag), f);
  }
  if (forward || !lastMicroBatch || l_.dp <= 1) return;
  if (sharded) {
    const size_t shard = (layer.params() + l_.dp - 1) / l_.dp;
    emitColl(fmt::format("reduce_scatter grads {}", layer.name), "sharded", 0,
             Collective::kReduceScatter, shard, workOut_->data(), work_->data(), true);
    return;
  }
  if (o_.dpKind != DpKind::kAllReduce) return;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    if (buckets_[k].firstLayer != li) continue;
    auto* p = static_cast<std::byte*>(grad_->data()) + buckets_[k].offsetBytes;
    emitColl(fmt::format("dp bucket {} ({} B)", k, buckets_[k].bytes), "dp", 0,
             Collective::kAllReduce, buckets_[k].bytes / gElem, p, p, true);
  }
}

void RankProxy::allocate() {
  HostAllocator alloc;
  auto buf = [&](uint64_t bytes) {
    auto b = alloc.allocate(std::max<uint64_t>(bytes, 64));
    b->faultIn();
    return b;
  };
  const size_t gElem = dataTypeSize(o_.gradType), aElem = dataTypeSize(o_.actType);
  uint64_t gradBytes = 0;
  for (const auto& b : buckets_) gradBytes += b.bytes;
  grad_ =
      buf(o_.dpKind == DpKind::kAllReduce || o_.dpKind == DpKind::kParameterServer ? gradBytes : 0);
  uint64_t largest = 0;
  for (const auto& layer : stageModel_.layers) largest = std::max(largest, layer.params());
  const bool sharded = l_.dp > 1 && o_.dpKind == DpKind::kSharded;
  shardElems_ = sharded ? (largest + l_.dp - 1) / l_.dp : 0;
  work_ = buf(shardElems_ * gElem);
  workOut_ = buf(shardElems_ * l_.dp * gElem);
  if (l_.tp > 1) {
    uint64_t bsh = static_cast<uint64_t>(std::ceil(batch_)) * o_.model.seq * o_.model.hidden;
    actElems_ = (bsh + l_.tp - 1) / l_.tp * l_.tp;
  }
  actA_ = buf(actElems_ * aElem);
  actB_ = buf(actElems_ * aElem);
  if (l_.pp > 1) {
    // The activation of a stage boundary (the last layer of the previous stage's output).
    const Layer& last = stageModel_.layers.back();
    const uint64_t elems = std::max<uint64_t>(last.activationPerSample, o_.model.hidden);
    pipeBytes_ = static_cast<uint64_t>(std::ceil(batch_)) * elems * aElem;
    // Every stage uses the largest boundary so both directions of a link agree on sizes.
    std::vector<uint64_t> all = comm_.allgather(pipeBytes_, deadline());
    pipeBytes_ = *std::max_element(all.begin(), all.end());
  }
  pipeSend_ = buf(pipeBytes_);
  pipeRecv_ = buf(pipeBytes_);
}

void RankProxy::build() {
  // Sub-communicators, TP innermost by default (resolveLayout's coordinates).
  auto color = [&](int a, int b, int sa) { return a * sa + b; };
  tpTeam_ = team_.split(color(l_.dpIdx, l_.ppIdx, l_.pp), l_.tpIdx);
  ppTeam_ = team_.split(color(l_.dpIdx, l_.tpIdx, l_.tp), l_.ppIdx);
  dpTeam_ = team_.split(color(l_.ppIdx, l_.tpIdx, l_.tp), l_.dpIdx);
  auto bounds = stageBoundaries(o_.model, l_.pp, {});
  lo_ = bounds[l_.ppIdx];
  hi_ = bounds[l_.ppIdx + 1];
  stageModel_ = o_.model;
  stageModel_.layers.assign(o_.model.layers.begin() + lo_, o_.model.layers.begin() + hi_);
  if (l_.tp > 1) {
    // A TP rank holds 1/t of each block's weights (so its gradient buckets shrink alike).
    for (auto& layer : stageModel_.layers) {
      if (!layer.block) continue;
      for (auto& t : layer.tensors) t = (t + l_.tp - 1) / l_.tp;
    }
  }
  buckets_ =
      ddpBuckets(stageModel_, dataTypeSize(o_.gradType), o_.bucketCapBytes, o_.firstBucketBytes);
  allocate();
  const int L = static_cast<int>(stageModel_.layers.size());
  const int p = l_.pp;
  const int m = p > 1 ? o_.microBatches : 1;
  const bool async = p > 1 && o_.schedule == PpSchedule::kAsync;
  const int window = async ? o_.steps : 1;
  auto order = p > 1 ? pipelineOrder(o_.schedule, l_.ppIdx, p, m, window)
                     : std::vector<PipeOp>{{true, 0}, {false, 0}};
  const int stage = l_.ppIdx;
  const int prev = stage - 1, next = stage + 1;
  auto inputRecv = [&](const PipeOp& op) -> std::optional<RecvOp> {
    if (p == 1) return std::nullopt;
    if (op.forward && stage > 0) return RecvOp{prev, pipeRecv_->data(), pipeBytes_};
    if (!op.forward && stage < p - 1) return RecvOp{next, pipeRecv_->data(), pipeBytes_};
    return std::nullopt;
  };
  auto outputSend = [&](const PipeOp& op) -> std::optional<SendOp> {
    if (p == 1) return std::nullopt;
    if (op.forward && stage < p - 1) return SendOp{next, pipeSend_->data(), pipeBytes_};
    if (!op.forward && stage > 0) return SendOp{prev, pipeSend_->data(), pipeBytes_};
    return std::nullopt;
  };
  const int ppStat = p > 1 ? addStat("pp", "sendrecv", pipeBytes_, 2) : -1;
  auto emitExchange = [&](std::optional<SendOp> s, std::optional<RecvOp> r, std::string name) {
    if (!s && !r) return false;
    Op op;
    op.kind = OpKind::kExchange;
    op.name = std::move(name);
    if (s) op.sends.push_back(*s);
    if (r) op.recvs.push_back(*r);
    op.stat = ppStat;
    ops_.push_back(std::move(op));
    return true;
  };
  auto opText = [](const PipeOp& op) {
    return fmt::format("{}{}", op.forward ? "act" : "grad", op.microBatch);
  };
  if (!order.empty()) {
    if (auto r = inputRecv(order[0])) emitExchange(std::nullopt, r, "recv " + opText(order[0]));
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const PipeOp& op = order[k];
    const bool last = op.microBatch % m == m - 1;
    if (op.forward) {
      for (int li = 0; li < L; ++li) emitLayer(li, true, last, op.microBatch);
    } else {
      for (int li = L - 1; li >= 0; --li) emitLayer(li, false, last, op.microBatch);
    }
    auto s = outputSend(op);
    std::optional<RecvOp> r;
    if (k + 1 < order.size()) r = inputRecv(order[k + 1]);
    std::string name;
    if (s) name = "send " + opText(op);
    if (r) name += std::string(name.empty() ? "" : " + ") + "recv " + opText(order[k + 1]);
    emitExchange(s, r, name);
    // The step of an asynchronous window ends with the last op of its last backward.
    if (async && !op.forward && last) ops_.back().stepEnd = true;
  }
}

void RankProxy::buildPs() {
  // Ranks 0 .. servers-1 are servers, the rest workers; gradient shard j lives on server j.
  const int servers = o_.servers, n = comm_.size(), workers = n - servers;
  const bool server = comm_.rank() < servers;
  stageModel_ = o_.model;
  buckets_ =
      ddpBuckets(stageModel_, dataTypeSize(o_.gradType), o_.bucketCapBytes, o_.firstBucketBytes);
  allocate();
  uint64_t total = 0;
  for (const auto& layer : stageModel_.layers) total += layer.params();
  const size_t e = dataTypeSize(o_.gradType);
  for (int j = 0; j < servers; ++j) {
    psShard_.push_back(partBegin(total, servers, j + 1) - partBegin(total, servers, j));
  }
  auto* g = static_cast<std::byte*>(grad_->data());
  const int statPush = addStat("ps", "push", psShard_[0] * e, n);
  const int statPull = addStat("ps", "pull", psShard_[0] * e, n);
  if (server) {
    const int j = comm_.rank();
    HostAllocator alloc;
    for (int w = 0; w < workers; ++w) {
      psSlots_.push_back(alloc.allocate(std::max<uint64_t>(psShard_[j] * e, 64)));
      psSlots_.back()->faultIn();
    }
    Op push;
    push.kind = OpKind::kExchange;
    push.name = fmt::format("server {}: receive {} pushes", j, workers);
    push.stat = statPush;
    for (int w = 0; w < workers; ++w) {
      push.recvs.push_back(RecvOp{servers + w, psSlots_[w]->data(), psShard_[j] * e});
    }
    ops_.push_back(std::move(push));
    Op red;
    red.kind = OpKind::kServerReduce;
    red.name = "server: average and update";
    ops_.push_back(std::move(red));
    Op pull;
    pull.kind = OpKind::kExchange;
    pull.name = fmt::format("server {}: send parameters", j);
    pull.stat = statPull;
    for (int w = 0; w < workers; ++w) {
      pull.sends.push_back(SendOp{servers + w, psSlots_[0]->data(), psShard_[j] * e});
    }
    ops_.push_back(std::move(pull));
    return;
  }
  for (const auto& layer : stageModel_.layers) {
    emitCompute("fwd " + layer.name, layerFwdSeconds(layer));
  }
  for (auto it = stageModel_.layers.rbegin(); it != stageModel_.layers.rend(); ++it) {
    emitCompute("bwd " + it->name, 2 * layerFwdSeconds(*it));
  }
  Op push, pull;
  push.kind = pull.kind = OpKind::kExchange;
  push.name = "push gradients";
  pull.name = "pull parameters";
  push.stat = statPush;
  pull.stat = statPull;
  for (int j = 0; j < servers; ++j) {
    void* shard = g + partBegin(total, servers, j) * e;
    push.sends.push_back(SendOp{j, shard, psShard_[j] * e});
    pull.recvs.push_back(RecvOp{j, shard, psShard_[j] * e});
  }
  ops_.push_back(std::move(push));
  ops_.push_back(std::move(pull));
}

void RankProxy::prepare() {
  const Registry& reg = o_.registry ? *o_.registry : Registry::builtin();
  std::vector<int> order(callKeys_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  // Every rank prepares in the same (communicator, collective, count) order.
  std::sort(order.begin(), order.end(), [&](int a, int b) { return callKeys_[a] < callKeys_[b]; });
  prepared_.resize(callKeys_.size());
  VariantOptions vo = o_.variant;
  vo.prepareTimeoutSeconds = o_.timeoutSeconds;
  for (int i : order) {
    const CallKey& k = callKeys_[i];
    Team& c = k.comm == 0 ? *dpTeam_ : *tpTeam_;
    const VariantInfo* info = reg.find(k.coll, algo_);
    if (!info) {
      throw UsageError(fmt::format("--algo {}: no such {} variant (see collbench list)", algo_,
                                   collectiveName(k.coll)));
    }
    CollArgs a{k.coll, k.comm == 0 ? o_.gradType : o_.actType, RedOp::kSum, 0, k.count};
    std::optional<std::string> why;
    if (info->unsupported) why = info->unsupported(c, a, vo);
    auto reasons = c.comm().allgatherStrings(why ? *why : "", deadline());
    for (const auto& r : reasons) {
      if (!r.empty()) {
        throw EnvironmentError(
            fmt::format("{} {} can't run here: {}", collectiveName(k.coll), algo_, r));
      }
    }
    prepared_[i] = info->prepare(c, a, vo);
  }
  // The pipeline and the parameter server use the transport of the hand-written variants:
  // --transport, else the team's default; set up once per team and cached by it.
  auto transportOf = [&](Team& t) -> Transport& {
    return t.transport(o_.variant.schedule.transport.empty() ? t.defaultTransport()
                                                             : o_.variant.schedule.transport);
  };
  if (l_.pp > 1) ppTransport_ = &transportOf(*ppTeam_);
  if (o_.dpKind == DpKind::kParameterServer && o_.mode == ProxyMode::kDp) {
    psTransport_ = &transportOf(team_);
  }
}

void RankProxy::runComm(Op& op) {
  switch (op.kind) {
    case OpKind::kColl: prepared_[op.call]->run(op.send, op.recv, deadline()); break;
    case OpKind::kExchange: {
      Transport& t = psTransport_ ? *psTransport_ : *ppTransport_;
      t.exchange(op.sends, op.recvs, deadline());
      break;
    }
    case OpKind::kServerReduce: {
      const size_t count = psShard_[comm_.rank()];
      for (size_t w = 1; w < psSlots_.size(); ++w) {
        reduce(o_.gradType, RedOp::kSum, psSlots_[0]->data(), psSlots_[0]->data(),
               psSlots_[w]->data(), count);
      }
      break;
    }
    case OpKind::kCompute: break;
  }
}

void RankProxy::execute(RankOutcome& out, bool record) {
  struct Timing {
    Clock::time_point start, end;
  };
  std::vector<Timing> timing(ops_.size());
  std::vector<std::pair<int, uint64_t>> pending;  // async op, the compute it waits for
  uint64_t lastSeq = 0;
  comm_.barrier(deadline());
  const auto t0 = Clock::now();
  auto runTimed = [&](int i) {
    timing[i].start = Clock::now();
    runComm(ops_[i]);
    timing[i].end = Clock::now();
  };
  auto drain = [&] {
    for (auto [i, seq] : pending) {
      stream_->waitDone(seq, deadline());
      runTimed(i);
    }
    pending.clear();
  };
  for (size_t i = 0; i < ops_.size(); ++i) {
    Op& op = ops_[i];
    if (op.kind == OpKind::kCompute) {
      lastSeq = stream_->enqueue(op.seconds, static_cast<int>(i));
      continue;
    }
    if (op.async && o_.overlap) {
      pending.emplace_back(static_cast<int>(i), lastSeq);
      continue;
    }
    drain();
    stream_->waitIdle(deadline());
    runTimed(static_cast<int>(i));
  }
  drain();
  stream_->waitIdle(deadline());
  const auto t1 = Clock::now();
  auto busy = stream_->take();
  for (const auto& b : busy) timing[b.op] = {b.start, b.end};
  if (!record) return;
  // Step intervals: the whole execution, or (asynchronous pipeline) each stepEnd op.
  std::vector<std::pair<Clock::time_point, Clock::time_point>> stepsIv;
  Clock::time_point from = t0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].stepEnd) {
      stepsIv.emplace_back(from, timing[i].end);
      from = timing[i].end;
    }
  }
  if (stepsIv.empty())
    stepsIv.emplace_back(t0, t1);
  else
    stepsIv.back().second = t1;
  for (const auto& [s, e] : stepsIv) {
    double compute = 0, comm = 0, exposed = 0;
    for (const auto& b : busy) {
      auto lo = std::max(s, b.start), hi = std::min(e, b.end);
      if (hi > lo) compute += secs(lo, hi);
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kCompute) continue;
      auto lo = std::max(s, timing[i].start), hi = std::min(e, timing[i].end);
      if (hi <= lo) continue;
      const double d = secs(lo, hi);
      comm += d;
      exposed += d - overlapWith(lo, hi, busy);
    }
    out.step.push_back(secs(s, e));
    out.compute.push_back(compute);
    out.comm.push_back(comm);
    out.exposed.push_back(exposed);
  }
  std::map<int, int> perStep;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (op.stat < 0) continue;
    out.callTimes[stats_[op.stat]].push_back(secs(timing[i].start, timing[i].end));
    ++perStep[op.stat];
  }
  for (auto [s, c] : perStep) out.callsPerStep[stats_[s]] = c / static_cast<int>(stepsIv.size());
  std::string text;
  for (size_t i = 0; i < ops_.size(); ++i) {
    text += fmt::format("{}\t{:.9f}\t{:.9f}\t{}\n", ops_[i].kind == OpKind::kCompute ? 'c' : 'm',
                        secs(t0, timing[i].start), secs(t0, timing[i].end), ops_[i].name);
  }
  out.timelineText.push_back(std::move(text));
}

int64_t RankProxy::verify() {
  int64_t wrong = 0;
  const uint64_t seed = 0x5eed;
  // Collectives: each distinct call once, on its own buffers, with bench/Verify's patterns.
  std::vector<int> order(callKeys_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return callKeys_[a] < callKeys_[b]; });
  for (int i : order) {
    const CallKey& k = callKeys_[i];
    Communicator& c = k.comm == 0 ? dpTeam_->comm() : tpTeam_->comm();
    CollArgs a{k.coll, k.comm == 0 ? o_.gradType : o_.actType, RedOp::kSum, 0, k.count};
    const int n = c.size(), r = c.rank();
    const size_t e = dataTypeSize(a.dtype);
    // The buffer the timed op uses.
    const Op* op = nullptr;
    for (const auto& o : ops_) {
      if (o.kind == OpKind::kColl && o.call == i) {
        op = &o;
        break;
      }
    }
    HostBuffer expected(std::max<size_t>(recvCount(a, n) * e, 1));
    HostBuffer input(std::max<size_t>(sendCount(a, n) * e, 1));
    fillInput(a, r, n, seed + i, input.data());
    std::memcpy(const_cast<void*>(op->send), input.data(), sendCount(a, n) * e);
    // Out of place: poison the output so a value the call never writes is caught.
    if (op->recv != op->send) std::memset(op->recv, 0xff, recvCount(a, n) * e);
    prepared_[i]->run(op->send, op->recv, deadline());
    if (expectedOutput(a, r, n, seed + i, expected.data())) {
      wrong += countWrong(a.dtype, op->recv, expected.data(), recvCount(a, n));
    }
  }
  // Pipeline links: a pattern each way over every stage boundary.
  if (ppTransport_) {
    const int s = ppTeam_->rank(), p = ppTeam_->size();
    for (int dir = 0; dir < 2; ++dir) {
      std::vector<SendOp> sends;
      std::vector<RecvOp> recvs;
      const int to = dir == 0 ? s + 1 : s - 1, from = dir == 0 ? s - 1 : s + 1;
      fillBytes(pipeSend_->data(), pipeBytes_, s, dir);
      std::memset(pipeRecv_->data(), 0, pipeBytes_);
      if (to >= 0 && to < p) sends.push_back({to, pipeSend_->data(), pipeBytes_});
      if (from >= 0 && from < p) recvs.push_back({from, pipeRecv_->data(), pipeBytes_});
      ppTransport_->exchange(sends, recvs, deadline());
      if (!recvs.empty()) wrong += wrongBytes(pipeRecv_->data(), pipeBytes_, from, dir);
    }
  }
  // Parameter server: workers push bench/Verify patterns, servers sum, workers check the pull
  // against the sum of the patterns (the allreduce of the workers).
  if (psTransport_) {
    const int servers = o_.servers, workers = comm_.size() - servers;
    const size_t e = dataTypeSize(o_.gradType);
    const Op& push = comm_.rank() < servers ? ops_[0] : ops_[ops_.size() - 2];
    if (comm_.rank() >= servers) {
      const int w = comm_.rank() - servers;
      for (int j = 0; j < servers; ++j) {
        CollArgs a{Collective::kAllReduce, o_.gradType, RedOp::kSum, 0, psShard_[j]};
        fillInput(a, w, workers, seed + 100 + j, const_cast<void*>(push.sends[j].data));
      }
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind != OpKind::kCompute) runComm(ops_[i]);
    }
    if (comm_.rank() >= servers) {
      const int w = comm_.rank() - servers;
      const Op& pull = ops_.back();
      for (int j = 0; j < servers; ++j) {
        CollArgs a{Collective::kAllReduce, o_.gradType, RedOp::kSum, 0, psShard_[j]};
        HostBuffer expected(std::max<size_t>(psShard_[j] * e, 1));
        expectedOutput(a, w, workers, seed + 100 + j, expected.data());
        wrong += countWrong(o_.gradType, pull.recvs[j].dst, expected.data(), psShard_[j]);
      }
    }
  }
  return wrong;
}

RankOutcome RankProxy::run() {
  algo_ = effectiveAlgo(o_, comm_.worldKind());
  if (o_.dpKind == DpKind::kParameterServer && o_.mode == ProxyMode::kDp) {
    buildPs();
  } else {
    build();
  }
  prepare();
  stream_ = std::make_unique<ComputeStream>();
  RankOutcome out;
  for (const auto& op : ops_) {
    for (const auto& s : op.sends) out.commBytes += s.bytes;
    if (op.kind == OpKind::kColl) {
      const CallKey& k = callKeys_[op.call];
      CollArgs a{k.coll, k.comm == 0 ? o_.gradType : o_.actType, RedOp::kSum, 0, k.count};
      out.commBytes += sendCount(a, k.comm == 0 ? l_.dp : l_.tp) * dataTypeSize(a.dtype);
    }
  }
  const bool async = l_.pp > 1 && o_.schedule == PpSchedule::kAsync;
  if (async) {
    // One window of o.steps steps back to back; warm-up: one untimed window.
    if (o_.warmup > 0) execute(out, false);
    execute(out, true);
  } else {
    for (int i = 0; i < o_.warmup; ++i) execute(out, false);
    for (int i = 0; i < o_.steps; ++i) execute(out, true);
  }
  stream_.reset();
  out.wrong = o_.checkRounds > 0 ? verify() : -1;
  return out;
}

// ---- gathering a run's outcome on rank 0 ----

std::string serializeStats(const RankOutcome& o) {
  std::string s;
  for (const auto& [k, times] : o.callTimes) {
    std::vector<double> t = times;
    s += fmt::format("{}\t{}\t{}\t{}\t{}\t{:.9g}\n", k.group, k.coll, k.bytes, k.nranks,
                     o.callsPerStep.at(k), summarize(t).median);
  }
  return s;
}

std::vector<std::string> splitLines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::vector<std::string> splitTabs(const std::string& line, int parts) {
  std::vector<std::string> out;
  size_t start = 0;
  for (int i = 0; i < parts - 1; ++i) {
    size_t t = line.find('\t', start);
    if (t == std::string::npos) break;
    out.push_back(line.substr(start, t - start));
    start = t + 1;
  }
  out.push_back(line.substr(start));
  return out;
}

double busFactorFor(const std::string& coll, int n) {
  if (coll == "allreduce") return busBwFactor(Collective::kAllReduce, n);
  if (coll == "allgather") return busBwFactor(Collective::kAllGather, n);
  if (coll == "reduce_scatter") return busBwFactor(Collective::kReduceScatter, n);
  return 1;
}

ProxyRun gatherRun(Communicator& comm, const ProxyOptions& o, const Layout& layout0, double batch,
                   RankOutcome& mine) {
  const int n = comm.size();
  Deadline d = Deadline::after(o.timeoutSeconds);
  ProxyRun run;
  run.n = n;
  run.layout = layout0;
  run.batchPerRank = batch;
  const int steps = static_cast<int>(mine.step.size());
  run.steps = steps;
  // step, compute, comm, exposed of every rank and step.
  std::vector<double> flat;
  for (auto* v : {&mine.step, &mine.compute, &mine.comm, &mine.exposed}) {
    flat.insert(flat.end(), v->begin(), v->end());
  }
  auto bytes = comm.allgatherBytes(flat.data(), flat.size() * sizeof(double), d);
  std::vector<double> all(bytes.size() / sizeof(double));
  std::memcpy(all.data(), bytes.data(), bytes.size());
  auto at = [&](int r, int metric, int k) { return all[(r * 4 + metric) * steps + k]; };
  std::vector<Layout> layouts(n);
  for (int r = 0; r < n; ++r) layouts[r] = resolveLayout(o, n, r);
  std::vector<double> combined(steps), comp(steps), com(steps), exp(steps);
  for (int k = 0; k < steps; ++k) {
    for (int r = 0; r < n; ++r) {
      combined[k] = std::max(combined[k], at(r, 0, k));
      comp[k] = std::max(comp[k], at(r, 1, k));
      com[k] = std::max(com[k], at(r, 2, k));
      exp[k] = std::max(exp[k], at(r, 3, k));
    }
  }
  run.stepSamples = combined;
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < steps; ++k) run.rankSteps.push_back(at(r, 0, k));
  }
  Summary s = summarize(combined);
  run.step = s.median;
  run.stepMin = s.min;
  run.stepMax = s.max;
  run.stepCv = s.cv;
  run.compute = summarize(comp).median;
  run.comm = summarize(com).median;
  run.exposed = summarize(exp).median;
  run.overlapPct = run.comm > 0 ? 100.0 * std::max(0.0, 1 - run.exposed / run.comm) : 0;
  const int pp = layout0.pp;
  if (pp > 1) {
    run.bubbleIdeal = idealBubble(pp, o.microBatches);
    for (int st = 0; st < pp; ++st) {
      std::vector<double> frac;
      for (int k = 0; k < steps; ++k) {
        double sum = 0;
        int cnt = 0;
        for (int r = 0; r < n; ++r) {
          if (layouts[r].ppIdx != st) continue;
          sum += (combined[k] - at(r, 1, k)) / combined[k];
          ++cnt;
        }
        frac.push_back(sum / cnt);
      }
      run.bubblePerStage.push_back(summarize(frac).median);
    }
  }
  const int dp = layout0.dp;
  double workers =
      o.dpKind == DpKind::kParameterServer && o.mode == ProxyMode::kDp ? n - o.servers : dp;
  const double samples = batch * workers * (pp > 1 ? o.microBatches : 1);
  run.samplesPerSecond = run.step > 0 ? samples / run.step : 0;
  run.tokensPerSecond = run.samplesPerSecond * o.model.tokensPerSample();
  run.commBytesPerStep = comm.broadcastValue(mine.commBytes, 0, d);
  // Calls: each rank's medians; the call's time is the slowest rank's.
  auto statTexts = comm.allgatherStrings(serializeStats(mine), d);
  std::map<StatKey, CallStat> calls;
  for (const auto& text : statTexts) {
    for (const auto& line : splitLines(text)) {
      auto f = splitTabs(line, 6);
      if (f.size() != 6) continue;
      StatKey k{f[0], f[1], std::stoull(f[2]), std::stoi(f[3])};
      CallStat& c = calls[k];
      c.group = k.group;
      c.coll = k.coll;
      c.bytes = k.bytes;
      c.nranks = k.nranks;
      c.callsPerStep = std::max(c.callsPerStep, std::stoi(f[4]));
      c.seconds = std::max(c.seconds, std::stod(f[5]));
    }
  }
  for (auto& [k, c] : calls) {
    c.algbw = c.seconds > 0 ? c.bytes / c.seconds / 1e9 : 0;
    c.busbw = c.algbw * busFactorFor(c.coll, c.nranks);
    run.calls.push_back(c);
  }
  // Timeline of the median step (synchronous) or of the window (asynchronous pipeline).
  int pick = 0;
  if (mine.timelineText.size() > 1) {
    std::vector<std::pair<double, int>> byTime;
    for (int k = 0; k < steps; ++k) byTime.emplace_back(combined[k], k);
    std::sort(byTime.begin(), byTime.end());
    pick = byTime[byTime.size() / 2].second;
  }
  pick = comm.broadcastValue(pick, 0, d);
  auto tl = comm.allgatherStrings(mine.timelineText.empty() ? "" : mine.timelineText[pick], d);
  for (const auto& text : tl) {
    std::vector<TimelineEvent> ev;
    for (const auto& line : splitLines(text)) {
      auto f = splitTabs(line, 4);
      if (f.size() != 4) continue;
      ev.push_back({f[3], f[0][0], std::stod(f[1]), std::stod(f[2])});
    }
    run.timeline.push_back(std::move(ev));
  }
  auto wrong = comm.allgather(mine.wrong, d);
  run.wrong = -1;
  for (int64_t w : wrong) {
    if (w >= 0) run.wrong = std::max<int64_t>(run.wrong, 0) + w;
  }
  return run;
}

ProxyRun runOnce(Team& team, const ProxyOptions& o, double batch) {
  Layout l = resolveLayout(o, team.size(), team.rank());
  RankProxy rp(team, o, l, batch);
  RankOutcome out = rp.run();
  return gatherRun(team.comm(), o, resolveLayout(o, team.size(), 0), batch, out);
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
      DataType t = c.group == "tp" ? o.actType : o.gradType;
      CollArgs a{coll, t, RedOp::kSum, 0, 1};
      const size_t count = c.bytes / (algBytes(a, c.nranks));
      samples.push_back(
          {costFeatures(coll, t, count, c.nranks, algo, &res.fitModelledAs), c.seconds});
    }
  }
  res.fit = fitCost(samples);
  if (!res.fit.ok || o.scaling == ScalingKind::kNone || o.mode != ProxyMode::kDp ||
      o.dpKind != DpKind::kAllReduce) {
    return;
  }
  // DP all-reduce steps for 8 .. 1024 ranks past the measured ones.
  const double t1 = res.runs.front().n == 1 ? res.runs.front().step : 0;
  for (int n = 8; n <= 1024; n *= 2) {
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
    std::vector<double> comm;
    for (const auto& b : buckets) {
      comm.push_back(res.fit.predict(costFeatures(Collective::kAllReduce, o.gradType,
                                                  b.bytes / dataTypeSize(o.gradType), n, algo)));
    }
    DpStepSim sim = simulateDpStep(fwd, bwd, buckets, comm, o.overlap);
    ScalingRow row;
    row.n = n;
    row.predicted = true;
    row.stepSeconds = sim.step;
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
  const Registry& reg = o.registry ? *o.registry : Registry::builtin();
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
