#include "training_proxies/Proxy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include "bench/Verify.h"
#include "collectives/transport/Transports.h"
#include "core/Buffer.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/RankBoard.h"
#include "core/Reduce.h"
#include "core/Stats.h"
#include "training_proxies/PipeIdle.h"

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

std::string_view optimizerName(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::kNone: return "none";
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kAdam: return "adam";
  }
  return "?";
}

OptimizerKind parseOptimizer(std::string_view name) {
  if (name == "none") return OptimizerKind::kNone;
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "adam" || name == "adamw") return OptimizerKind::kAdam;
  throw UsageError(fmt::format("unknown optimizer '{}' (none, sgd, adam)", name));
}

OptimizerKind optimizerFor(const ProxyOptions& o) {
  if (o.optimizer != OptimizerKind::kNone || o.zero == 0) return o.optimizer;
  return OptimizerKind::kAdam;  // ZeRO shards an optimizer's state: Adam's, as in the paper
}

bool shardedParams(const ProxyOptions& o) { return o.dpKind == DpKind::kSharded || o.zero == 3; }

std::string algoFor(const ProxyOptions& o, Collective coll, const std::string& algo) {
  const Registry& reg = o.registry ? *o.registry : Registry::builtin();
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
    if (o.mode != ProxyMode::kDp)
      throw UsageError("the parameter server runs with `proxy dp` only");
    if (o.microBatches > 1) {
      throw UsageError("the parameter server runs one batch per step: no -m");
    }
    if (o.servers < 1 || o.servers >= worldSize) {
      throw UsageError(fmt::format("--servers {} must leave at least one worker of the {} ranks",
                                   o.servers, worldSize));
    }
  }
  if (o.scaling != ScalingKind::kNone && o.mode == ProxyMode::kHybrid) {
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
  const Registry& reg = o.registry ? *o.registry : Registry::builtin();
  const std::string algo = effectiveAlgo(o, kind);
  Layout l = resolveLayout(o, worldSize, 0);
  std::vector<Collective> need;
  if (o.mode == ProxyMode::kDp && o.dpKind == DpKind::kParameterServer) return;
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
      // A job queued while the stream was busy starts at the previous job's target end, one
      // queued on an idle stream when it was queued (a kernel launched to an idle GPU stream
      // starts at once): this thread's late wake-ups are made up by the sleep, not added to it.
      const auto start = j.enqueued <= chain ? chain : j.enqueued;
      chain = start +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(j.seconds));
      if (j.seconds > 0) std::this_thread::sleep_until(chain);
      const auto end = Clock::now();
      const auto recStart = std::max(std::min(start, now), lastEnd);
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
  bool async = false;     // may overlap the compute enqueued after it
  bool prefetch = false;  // issued at once, while the stream computes (ZeRO-3 / FSDP prefetch)
  bool pipe = false;      // a pipeline exchange: its exposed time splits into transfer and wait
  // The call kinds this op counts as (index into the rank's kinds, calls or messages per op).
  std::vector<std::pair<int, int>> stats;
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  bool stepEnd = false;  // async pipeline: a step ends with this op
};

// The communicators of a step: the DP, TP and PP groups of the layout, the embedding group (first
// and last pipeline stage: Megatron's tied word embedding), the model-parallel group (TP x PP
// ranks of one DP replica: the gradient norm) and the whole world (the norm of sharded gradients).
enum CommId : int { kCommDp, kCommTp, kCommPp, kCommEmb, kCommMp, kCommWorld, kComms };

struct CallKey {
  int comm;
  Collective coll;
  DataType dtype;
  size_t count;
  auto operator<=>(const CallKey&) const = default;
};

struct StatKey {
  std::string group, coll;
  uint64_t bytes;
  int nranks;
  DataType dtype;
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
  // Per step: interval metrics of this rank (exposed = exposed collectives + pipeline transfers;
  // transfer = the pipeline transfers alone; bubble = waiting in pipeline exchanges on a stage that
  // was computing).
  std::vector<double> step, compute, comm, exposed, transfer, bubble;
  std::vector<std::string> timelineText;  // per step, serialized events
  std::vector<StatKey> order;             // call kinds in the order the step first issues them
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

void* at(const std::unique_ptr<DataBuffer>& b) { return b ? b->data() : nullptr; }

int64_t ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// One rank of one proxy run on a team of n ranks; without a team (planStep) it only builds the
// program, so its calls can be read without a world or buffers.
class RankProxy {
 public:
  RankProxy(Team* team, const ProxyOptions& o, const Layout& l, double batch, int n, int rank)
      : team_(team), o_(o), l_(l), batch_(batch), n_(n), rank_(rank), d_(o.timeoutSeconds) {}

  RankOutcome run();
  std::vector<CallStat> plan();

 private:
  Deadline deadline() const { return Deadline::after(d_); }
  double layerFwdSeconds(const Layer& layer) const;
  void build();
  void buildPs();
  int commSize(int comm) const;
  int addCall(int comm, Collective coll, DataType t, size_t count);
  int addStat(const std::string& group, const std::string& coll, uint64_t bytes, int nranks,
              DataType t = DataType::kUint8);
  void emitCompute(const std::string& name, double seconds);
  Op& emitColl(const std::string& name, const std::string& group, int comm, Collective coll,
               DataType t, size_t count, const void* send, void* recv, bool async);
  void emitTp(const std::string& name, Collective coll, uint64_t elements,
              DataType t = DataType::kUint8);
  void emitLayer(int li, bool forward, bool lastMicroBatch, int mb, bool firstOfPass);
  void emitStepEnd();
  void prepare();
  void allocate();
  void measureLink();
  void execute(RankOutcome& out, bool record);
  void attributePipeWaits(RankOutcome& out);
  void runComm(Op& op);
  int64_t verify();

  Team* team_;
  const ProxyOptions& o_;
  Layout l_;
  double batch_;
  int n_, rank_;
  double d_;
  bool dry() const { return team_ == nullptr; }
  // Sub-teams by CommId (own communicator and transport cache); the transports are theirs.
  std::unique_ptr<Team> teams_[kComms];
  Transport* ppTransport_ = nullptr;
  Transport* psTransport_ = nullptr;
  // Pipeline: when this stage posted each message; the timed steps' timeline (the exchanges'
  // `ready` and `on` filled in by attributePipeWaits) and each timed exchange's messages.
  PipePostings postings_;
  StageTimeline timeline_;
  std::vector<std::vector<PipeMessage>> exchangeMessages_;
  std::vector<Op> ops_;
  std::vector<CallKey> callKeys_;
  std::map<CallKey, int> callIndex_;
  std::vector<std::unique_ptr<PreparedCollective>> prepared_;
  std::vector<StatKey> stats_;
  std::map<StatKey, int> statIndex_;
  // Stage layers [lo_, hi_) and their DDP buckets (layer indices relative to lo_).
  int lo_ = 0, hi_ = 0;
  int m_ = 1;  // micro-batches per step (pipeline, or gradient accumulation)
  Model stageModel_;
  std::vector<Bucket> buckets_;
  std::vector<uint64_t> bucketOffset_;  // bytes into grad_, each bucket padded to dp elements
  // Buffers (real data of the modelled sizes).
  std::unique_ptr<DataBuffer> grad_, work_, workOut_, actA_, actB_, aux_, pipeSend_, pipeRecv_;
  std::vector<std::unique_ptr<DataBuffer>> psSlots_;
  uint64_t actElems_ = 0;      // b x s x h of a micro-batch (TP), padded to a multiple of tp
  uint64_t lossElems_ = 0;     // b x s: the cross-entropy's all-reduces (float)
  uint64_t sendFwdBytes_ = 0;  // activation to the next stage (its gradient comes back)
  uint64_t recvFwdBytes_ = 0;  // activation from the previous stage (its gradient goes back)
  uint64_t shardElems_ = 0;    // sharded: largest layer shard; ZeRO 1/2: largest bucket shard
  uint64_t normElems_ = 0;     // sequence parallel: replicated (norm, bias) gradients of the stage
  uint64_t vocabElems_ = 0;    // tied embedding gradient (the TP shard) under PP
  uint64_t updateElems_ = 0;   // parameters this rank's optimizer step updates
  uint64_t bufferFloats_ = 0, bufferInts_ = 0;  // DDP's broadcast buffers of the stage
  double xfer_ = 0;  // measured time of one pipeline exchange with both sides ready
  std::vector<uint64_t> psShard_;
  std::string algo_;
  std::unique_ptr<ComputeStream> stream_;
};

double RankProxy::layerFwdSeconds(const Layer& layer) const {
  if (o_.computeScale <= 0 || o_.tflops <= 0) return 0;
  double w = o_.stageWeights.empty() ? 1.0 : o_.stageWeights[l_.ppIdx];
  return layer.fwdFlopsPerSample * batch_ / (o_.tflops * 1e12) / l_.tp * w * o_.computeScale;
}

int RankProxy::commSize(int comm) const {
  switch (comm) {
    case kCommDp: return l_.dp;
    case kCommTp: return l_.tp;
    case kCommPp: return l_.pp;
    case kCommEmb: return 2;
    case kCommMp: return l_.tp * l_.pp;
    default: return n_;
  }
}

int RankProxy::addCall(int comm, Collective coll, DataType t, size_t count) {
  CallKey k{comm, coll, t, count};
  auto it = callIndex_.find(k);
  if (it != callIndex_.end()) return it->second;
  callKeys_.push_back(k);
  return callIndex_[k] = static_cast<int>(callKeys_.size()) - 1;
}

int RankProxy::addStat(const std::string& group, const std::string& coll, uint64_t bytes,
                       int nranks, DataType t) {
  StatKey k{group, coll, bytes, nranks, t};
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

Op& RankProxy::emitColl(const std::string& name, const std::string& group, int comm,
                        Collective coll, DataType t, size_t count, const void* send, void* recv,
                        bool async) {
  Op op;
  op.kind = OpKind::kColl;
  op.name = name;
  op.call = addCall(comm, coll, t, count);
  op.send = send;
  op.recv = recv;
  op.async = async;
  const int n = commSize(comm);
  CollArgs a{coll, t, RedOp::kSum, 0, count};
  op.stats.push_back({addStat(group, std::string(collectiveName(coll)), algBytes(a, n), n, t), 1});
  ops_.push_back(std::move(op));
  return ops_.back();
}

// A TP call on `elements` of the activation (b x s x h, or b x s floats for the loss, type t;
// uint8: the activation type): all-reduce in place, all-gather and reduce-scatter of
// elements / t per rank.
void RankProxy::emitTp(const std::string& name, Collective coll, uint64_t elements, DataType t) {
  const bool ar = coll == Collective::kAllReduce;
  const size_t count = tpCount({coll, elements}, l_.tp);
  emitColl(fmt::format("tp {} {}", collectiveName(coll), name), "tp", kCommTp, coll,
           t == DataType::kUint8 ? o_.actType : t, count, ar ? at(actB_) : at(actA_), at(actB_),
           false);
}

// Forward or backward of one layer of this stage (li relative to the stage), with its TP calls
// (Megatron-LM: the embedding's all-reduce, the block's, the head's input and the vocab-parallel
// cross-entropy's three) and, for the last micro-batch's backward, the DP calls its gradients
// trigger (earlier micro-batches accumulate: DDP's no_sync).
void RankProxy::emitLayer(int li, bool forward, bool lastMicroBatch, int mb, bool firstOfPass) {
  const Layer& layer = stageModel_.layers[li];
  const double f = layerFwdSeconds(layer) * (forward ? 1.0 : 2.0);
  const std::string dir = forward ? "fwd" : "bwd";
  const std::string tag = m_ > 1 ? fmt::format(" mb{}", mb) : "";
  const std::string name = layer.name + tag;
  const size_t gElem = dataTypeSize(o_.gradType);
  const bool sharded = l_.dp > 1 && shardedParams(o_);
  if (sharded) {
    // Parameters gathered before use, in forward and again in backward (ZeRO-3 / FSDP), the
    // next layer's gather issued while this one computes (FSDP's prefetch).
    const size_t shard = (layer.params() + l_.dp - 1) / l_.dp;
    if (firstOfPass) {
      emitColl(fmt::format("allgather params {}", name), "sharded", kCommDp, Collective::kAllGather,
               o_.actType, shard, at(work_), at(workOut_), false);
    }
  }
  const bool tp = l_.tp > 1 && o_.model.transformer;
  const bool sp = o_.tpKind == TpKind::kSequence;
  auto compute = [&](const std::string& part, double seconds) {
    emitCompute(fmt::format("{} {}{}", dir, name, part), seconds);
  };
  if (tp && layer.kind == LayerKind::kBlock) {
    for (const auto& s : tpBlockSteps(o_.tpKind, forward, actElems_)) {
      if (s.compute) {
        compute(s.part == 0 ? " attn" : " mlp", f / 2);
      } else {
        emitTp(name, s.call.coll, s.call.elements);
      }
    }
  } else if (tp && layer.kind == LayerKind::kEmbedding) {
    // VocabParallelEmbedding: each rank looks up its vocabulary rows, an all-reduce sums them;
    // with sequence parallelism Megatron reduce-scatters instead (with learned positions it
    // all-reduces, adds them and keeps its sequence part); backward gathers the sequence.
    if (forward) {
      compute("", f);
      emitTp(name,
             sp && !o_.model.learnedPositions ? Collective::kReduceScatter : Collective::kAllReduce,
             actElems_);
    } else {
      if (sp) emitTp(name, Collective::kAllGather, actElems_);
      compute("", f);
    }
  } else if (tp && layer.kind == LayerKind::kHead) {
    // Column-parallel output layer (vocab split): its input is copied (forward identity,
    // backward all-reduce) or, with sequence parallelism, gathered (backward reduce-scatter);
    // vocab_parallel_cross_entropy all-reduces the logits' max, the target logit and the sum of
    // exponentials over b x s floats.
    if (forward) {
      if (sp) emitTp(name, Collective::kAllGather, actElems_);
      compute("", f);
      for (int i = 0; i < 3; ++i) {
        emitTp(name + " loss", Collective::kAllReduce, lossElems_, DataType::kFloat);
      }
    } else {
      compute("", f);
      emitTp(name, sp ? Collective::kReduceScatter : Collective::kAllReduce, actElems_);
    }
  } else {
    compute("", f);
  }
  if (sharded) {
    const int next = forward ? li + 1 : li - 1;
    if (next >= 0 && next < static_cast<int>(stageModel_.layers.size())) {
      const Layer& nl = stageModel_.layers[next];
      const size_t shard = (nl.params() + l_.dp - 1) / l_.dp;
      emitColl(fmt::format("allgather params {}{}", nl.name, tag), "sharded", kCommDp,
               Collective::kAllGather, o_.actType, shard, at(work_), at(workOut_), false)
          .prefetch = true;
    }
  }
  if (forward || !lastMicroBatch || l_.dp <= 1) return;
  if (sharded) {
    const size_t shard = (layer.params() + l_.dp - 1) / l_.dp;
    emitColl(fmt::format("reduce_scatter grads {}", layer.name), "sharded", kCommDp,
             Collective::kReduceScatter, o_.gradType, shard, at(workOut_), at(work_), true);
    return;
  }
  if (o_.dpKind != DpKind::kAllReduce) return;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    if (buckets_[k].firstLayer != li) continue;
    auto* p = dry() ? nullptr : static_cast<std::byte*>(grad_->data()) + bucketOffset_[k];
    const uint64_t elems = buckets_[k].bytes / gElem;
    if (o_.zero == 2) {
      // ZeRO-2 / Megatron's distributed optimizer: each rank keeps the reduced shard it updates.
      emitColl(fmt::format("dp reduce_scatter bucket {}", k), "dp", kCommDp,
               Collective::kReduceScatter, o_.gradType, (elems + l_.dp - 1) / l_.dp, p, at(work_),
               true);
    } else {
      emitColl(fmt::format("dp bucket {} ({} B)", k, buckets_[k].bytes), "dp", kCommDp,
               Collective::kAllReduce, o_.gradType, elems, p, p, true);
    }
  }
}

// After the last backward (Megatron's finalize_model_grads, then the optimizer): the sequence-
// parallel norm gradients all-reduced over TP, the tied embedding's gradient over the first and
// last stage, then with --optimizer the loss and gradient-norm all-reduces, the step, and with
// ZeRO 1/2 the updated parameters all-gathered per bucket.
void RankProxy::emitStepEnd() {
  const bool first = l_.ppIdx == 0, last = l_.ppIdx == l_.pp - 1;
  if (normElems_ > 0) {
    emitColl("tp allreduce norm grads", "tp", kCommTp, Collective::kAllReduce, o_.gradType,
             normElems_, at(aux_), at(aux_), false);
  }
  if (vocabElems_ > 0 && (first || last)) {
    emitColl("pp allreduce tied embedding grads", "emb", kCommEmb, Collective::kAllReduce,
             o_.gradType, vocabElems_, at(aux_), at(aux_), false);
  }
  const OptimizerKind opt = optimizerFor(o_);
  if (opt == OptimizerKind::kNone) return;
  if (last && l_.dp > 1 && o_.model.transformer) {
    // The step's loss and token count averaged over DP for the log (2 floats).
    emitColl("dp allreduce loss", "dp", kCommDp, Collective::kAllReduce, DataType::kFloat, 2,
             at(aux_), at(aux_), false);
  }
  // The squared norm's parts: the model-parallel ranks hold different parameters; sharded
  // gradients (ZeRO 2/3) are split over DP too.
  const bool shardedGrads = (o_.zero >= 2 || shardedParams(o_)) && l_.dp > 1;
  const int normComm = shardedGrads ? kCommWorld : kCommMp;
  if (commSize(normComm) > 1) {
    emitColl("allreduce grad norm", shardedGrads ? "world" : "mp", normComm, Collective::kAllReduce,
             DataType::kFloat, 1, at(aux_), at(aux_), false);
  }
  const double bytesPerParam = opt == OptimizerKind::kAdam ? 28 : 12;
  emitCompute("optimizer step", o_.computeScale > 0 && o_.memGbps > 0
                                    ? static_cast<double>(updateElems_) * bytesPerParam /
                                          (o_.memGbps * 1e9) * o_.computeScale
                                    : 0);
  if ((o_.zero == 1 || o_.zero == 2) && l_.dp > 1) {
    const size_t gElem = dataTypeSize(o_.gradType);
    for (size_t k = 0; k < buckets_.size(); ++k) {
      auto* p = dry() ? nullptr : static_cast<std::byte*>(grad_->data()) + bucketOffset_[k];
      const uint64_t elems = buckets_[k].bytes / gElem;
      emitColl(fmt::format("dp allgather params bucket {}", k), "dp", kCommDp,
               Collective::kAllGather, o_.actType, (elems + l_.dp - 1) / l_.dp, at(work_), p,
               false);
    }
  }
}

void RankProxy::allocate() {
  const size_t gElem = dataTypeSize(o_.gradType), aElem = dataTypeSize(o_.actType);
  const size_t elem = std::max(gElem, aElem);
  uint64_t gradBytes = 0;
  bucketOffset_.clear();
  uint64_t largestShard = 0;
  for (const auto& b : buckets_) {
    bucketOffset_.push_back(gradBytes);
    const uint64_t shard = (b.bytes / gElem + l_.dp - 1) / l_.dp;
    largestShard = std::max(largestShard, shard);
    gradBytes += shard * l_.dp * elem;
  }
  uint64_t largest = 0;
  for (const auto& layer : stageModel_.layers) largest = std::max(largest, layer.params());
  const bool sharded = l_.dp > 1 && shardedParams(o_);
  shardElems_ = sharded ? (largest + l_.dp - 1) / l_.dp : o_.zero > 0 ? largestShard : 0;
  if (l_.tp > 1) {
    uint64_t bsh = static_cast<uint64_t>(std::ceil(batch_)) * o_.model.seq * o_.model.hidden;
    actElems_ = (bsh + l_.tp - 1) / l_.tp * l_.tp;
    lossElems_ = static_cast<uint64_t>(std::ceil(batch_)) * o_.model.seq;
  }
  if (dry()) return;
  HostAllocator alloc;
  auto buf = [&](uint64_t bytes) {
    auto b = alloc.allocate(std::max<uint64_t>(bytes, 64));
    b->faultIn();
    return b;
  };
  // Only data parallelism reduces gradients: a TP or PP rank alone needs no gradient buffer.
  grad_ = buf(shardedParams(o_) || l_.dp <= 1 ? 0 : gradBytes);
  work_ = buf(shardElems_ * elem);
  workOut_ = buf(shardElems_ * l_.dp * elem);
  actA_ = buf(actElems_ * aElem);
  actB_ = buf(std::max(actElems_ * aElem, lossElems_ * sizeof(float)));
  aux_ = buf(std::max<uint64_t>({normElems_ * gElem, vocabElems_ * gElem, 2 * gElem,
                                 bufferFloats_ * sizeof(float), bufferInts_ * sizeof(int64_t)}));
  pipeSend_ = buf(std::max(sendFwdBytes_, recvFwdBytes_));
  pipeRecv_ = buf(std::max(sendFwdBytes_, recvFwdBytes_));
}

void RankProxy::build() {
  const Model& model = o_.model;
  auto bounds = stageBoundaries(model, l_.pp, {});
  const int p = l_.pp, stage = l_.ppIdx;
  lo_ = bounds[stage];
  hi_ = bounds[stage + 1];
  stageModel_ = model;
  stageModel_.layers.assign(model.layers.begin() + lo_, model.layers.begin() + hi_);
  const uint64_t h = model.hidden, t = l_.tp;
  const uint64_t vocabRows = (static_cast<uint64_t>(model.vocab) + t - 1) / t;
  // Megatron's last stage holds a copy of the tied word embedding for the output layer; its
  // gradient joins the embedding's over the first and last stage.
  const bool tiedAcross = p > 1 && model.tiedHead && model.vocab > 0;
  if (tiedAcross && stage == p - 1 && stageModel_.layers.back().kind == LayerKind::kHead) {
    stageModel_.layers.back().tensors.push_back(static_cast<uint64_t>(model.vocab) * h);
    stageModel_.layers.back().split.push_back(TensorSplit::kVocab);
  }
  if (tiedAcross && (stage == 0 || stage == p - 1)) vocabElems_ = vocabRows * h;
  if (l_.tp > 1 && model.transformer) {
    // A TP rank holds 1/t of the split tensors, ceil(V/t) vocabulary rows, and the replicated
    // ones whole (so its gradient buckets shrink alike).
    for (auto& layer : stageModel_.layers) {
      for (size_t i = 0; i < layer.tensors.size(); ++i) {
        auto& n = layer.tensors[i];
        switch (layer.splitOf(i)) {
          case TensorSplit::kSplit: n = (n + t - 1) / t; break;
          case TensorSplit::kVocab: n = vocabRows * h; break;
          case TensorSplit::kReplicated:
            // Sequence parallel: the blocks' and the final norm's replicated gradients differ
            // per rank (each saw its sequence part) and are all-reduced over TP.
            if (o_.tpKind == TpKind::kSequence && layer.kind != LayerKind::kEmbedding) {
              normElems_ += n;
            }
            break;
        }
      }
    }
  }
  buckets_ =
      ddpBuckets(stageModel_, dataTypeSize(o_.gradType), o_.bucketCapBytes, o_.firstBucketBytes);
  for (const auto& layer : stageModel_.layers) {
    updateElems_ += layer.params();
    bufferFloats_ += layer.bufferFloats;
    bufferInts_ += layer.bufferInts;
  }
  if ((o_.zero > 0 || shardedParams(o_)) && l_.dp > 1) {
    updateElems_ = (updateElems_ + l_.dp - 1) / l_.dp;
  }
  // Stage boundaries: the output of a stage's last layer (b x s x h for a transformer; the
  // sequence shard, b x s x h / t, under sequence parallelism, as Megatron sends it).
  const size_t aElem = dataTypeSize(o_.actType);
  auto boundary = [&](int s) -> uint64_t {
    if (s < 0 || s >= p - 1) return 0;
    uint64_t elems = static_cast<uint64_t>(std::ceil(batch_)) *
                     std::max<uint64_t>(model.layers[bounds[s + 1] - 1].activationPerSample, 1);
    if (l_.tp > 1 && o_.tpKind == TpKind::kSequence && model.transformer) {
      elems = (elems + t - 1) / t;
    }
    return elems * aElem;
  };
  sendFwdBytes_ = boundary(stage);
  recvFwdBytes_ = boundary(stage - 1);
  allocate();
  const int L = static_cast<int>(stageModel_.layers.size());
  m_ = microBatchesFor(o_, l_);
  const int m = m_;
  const bool async = p > 1 && o_.schedule == PpSchedule::kAsync;
  const int window = async ? o_.steps : 1;
  // Without a pipeline the micro-batches are gradient accumulation: forward, backward, repeat.
  auto order = pipelineOrder(p > 1 ? o_.schedule : PpSchedule::k1F1B, stage, p, m, window);
  const int prev = stage - 1, next = stage + 1;
  auto inputRecv = [&](const PipeOp& op) -> std::optional<RecvOp> {
    if (p == 1) return std::nullopt;
    if (op.forward && stage > 0) return RecvOp{prev, at(pipeRecv_), recvFwdBytes_};
    if (!op.forward && stage < p - 1) return RecvOp{next, at(pipeRecv_), sendFwdBytes_};
    return std::nullopt;
  };
  auto outputSend = [&](const PipeOp& op) -> std::optional<SendOp> {
    if (p == 1) return std::nullopt;
    if (op.forward && stage < p - 1) return SendOp{next, at(pipeSend_), sendFwdBytes_};
    if (!op.forward && stage > 0) return SendOp{prev, at(pipeSend_), recvFwdBytes_};
    return std::nullopt;
  };
  // Every message counts: a merged exchange (1F1B's send-forward-receive-backward) is two.
  auto emitExchange = [&](std::optional<SendOp> s, std::optional<RecvOp> r, std::string name) {
    if (!s && !r) return false;
    Op op;
    op.kind = OpKind::kExchange;
    op.pipe = true;
    op.name = std::move(name);
    if (s) {
      op.sends.push_back(*s);
      op.stats.push_back({addStat("pp", "send", s->bytes, 2), 1});
    }
    if (r) {
      op.recvs.push_back(*r);
      op.stats.push_back({addStat("pp", "recv", r->bytes, 2), 1});
    }
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
      // DDP (broadcast_buffers) sends rank 0's module buffers before every forward.
      if (l_.dp > 1 && o_.dpKind == DpKind::kAllReduce) {
        if (bufferFloats_ > 0) {
          emitColl("dp broadcast buffers", "dp", kCommDp, Collective::kBroadcast, DataType::kFloat,
                   bufferFloats_, at(aux_), at(aux_), false);
        }
        if (bufferInts_ > 0) {
          emitColl("dp broadcast buffers", "dp", kCommDp, Collective::kBroadcast, DataType::kInt64,
                   bufferInts_, at(aux_), at(aux_), false);
        }
      }
      for (int li = 0; li < L; ++li) emitLayer(li, true, last, op.microBatch, li == 0);
    } else {
      for (int li = L - 1; li >= 0; --li) emitLayer(li, false, last, op.microBatch, li == L - 1);
    }
    auto s = outputSend(op);
    std::optional<RecvOp> r;
    if (k + 1 < order.size()) r = inputRecv(order[k + 1]);
    std::string name;
    if (s) name = "send " + opText(op);
    if (r) name += std::string(name.empty() ? "" : " + ") + "recv " + opText(order[k + 1]);
    emitExchange(s, r, name);
    if (!op.forward && last) {
      emitStepEnd();
      // The step of an asynchronous window ends with the last op of its last backward.
      if (async) ops_.back().stepEnd = true;
    }
  }
}

void RankProxy::buildPs() {
  // Ranks 0 .. servers-1 are servers, the rest workers; gradient shard j lives on server j.
  const int servers = o_.servers, n = n_, workers = n - servers;
  const bool server = rank_ < servers;
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
  auto* g = static_cast<std::byte*>(at(grad_));
  const int statPush = addStat("ps", "push", psShard_[0] * e, n);
  const int statPull = addStat("ps", "pull", psShard_[0] * e, n);
  if (server) {
    const int j = rank_;
    HostAllocator alloc;
    for (int w = 0; w < workers && !dry(); ++w) {
      psSlots_.push_back(alloc.allocate(std::max<uint64_t>(psShard_[j] * e, 64)));
      psSlots_.back()->faultIn();
    }
    Op push;
    push.kind = OpKind::kExchange;
    push.name = fmt::format("server {}: receive {} pushes", j, workers);
    push.stats = {{statPush, 1}};
    for (int w = 0; w < workers; ++w) {
      push.recvs.push_back(
          RecvOp{servers + w, dry() ? nullptr : psSlots_[w]->data(), psShard_[j] * e});
    }
    ops_.push_back(std::move(push));
    Op red;
    red.kind = OpKind::kServerReduce;
    red.name = "server: average and update";
    ops_.push_back(std::move(red));
    Op pull;
    pull.kind = OpKind::kExchange;
    pull.name = fmt::format("server {}: send parameters", j);
    pull.stats = {{statPull, 1}};
    for (int w = 0; w < workers; ++w) {
      pull.sends.push_back(
          SendOp{servers + w, dry() ? nullptr : psSlots_[0]->data(), psShard_[j] * e});
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
  push.stats = {{statPush, 1}};
  pull.stats = {{statPull, 1}};
  for (int j = 0; j < servers; ++j) {
    void* shard = g ? g + partBegin(total, servers, j) * e : nullptr;
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
  // Every rank prepares in the same (communicator, collective, type, count) order.
  std::sort(order.begin(), order.end(), [&](int a, int b) { return callKeys_[a] < callKeys_[b]; });
  prepared_.resize(callKeys_.size());
  VariantOptions vo = o_.variant;
  vo.prepareTimeoutSeconds = o_.timeoutSeconds;
  for (int i : order) {
    const CallKey& k = callKeys_[i];
    Team& c = *teams_[k.comm];
    const std::string algo = algoFor(o_, k.coll, algo_);
    const VariantInfo* info = reg.find(k.coll, algo);
    if (!info) {
      throw UsageError(fmt::format("--algo {}: no such {} variant (see collbench list)", algo,
                                   collectiveName(k.coll)));
    }
    CollArgs a{k.coll, k.dtype, RedOp::kSum, 0, k.count};
    std::optional<std::string> why;
    if (info->unsupported) why = info->unsupported(c, a, vo);
    auto reasons = c.comm().allgatherStrings(why ? *why : "", deadline());
    for (const auto& r : reasons) {
      if (!r.empty()) {
        throw EnvironmentError(
            fmt::format("{} {} can't run here: {}", collectiveName(k.coll), algo, r));
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
  if (l_.pp > 1) ppTransport_ = &transportOf(*teams_[kCommPp]);
  if (o_.dpKind == DpKind::kParameterServer && o_.mode == ProxyMode::kDp) {
    psTransport_ = &transportOf(*team_);
  }
}

// The time of one pipeline exchange when both sides are ready (a barrier, then every stage sends
// to the next and receives from the previous, then the reverse): the transfer part of an
// exchange; what an exchange takes beyond it is waiting for the peer (the bubble).
void RankProxy::measureLink() {
  if (!ppTransport_) return;
  Team& pp = *teams_[kCommPp];
  const int s = pp.rank(), p = pp.size();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    double sum = 0;
    for (int dir = 0; dir < 2; ++dir) {
      std::vector<SendOp> sends;
      std::vector<RecvOp> recvs;
      const int to = dir == 0 ? s + 1 : s - 1, from = dir == 0 ? s - 1 : s + 1;
      const uint64_t out = dir == 0 ? sendFwdBytes_ : recvFwdBytes_;
      const uint64_t in = dir == 0 ? recvFwdBytes_ : sendFwdBytes_;
      if (to >= 0 && to < p) sends.push_back({to, pipeSend_->data(), out});
      if (from >= 0 && from < p) recvs.push_back({from, pipeRecv_->data(), in});
      pp.comm().barrier(deadline());
      const auto a = Clock::now();
      ppTransport_->exchange(sends, recvs, deadline());
      sum += secs(a, Clock::now());
    }
    t.push_back(sum / 2);
  }
  xfer_ = summarize(t).median;
}

// Collective over the pipeline team (two allgathers): when each stage posted its messages, then
// every stage's timeline; each exchange's idle time is split by what the stages it waited for
// were doing meanwhile (PipeIdle.h). Stages on several hosts keep the estimate from the measured
// exchange time: their clocks do not compare.
void RankProxy::attributePipeWaits(RankOutcome& out) {
  if (!ppTransport_) return;
  Team& pp = *teams_[kCommPp];
  auto posted = pp.comm().allgatherStrings(postings_.encode(), deadline());
  if (!pp.hosts().oneHost()) return;
  std::vector<PipePostings> byStage;
  for (const auto& a : posted) byStage.push_back(PipePostings::decode(a));
  for (size_t i = 0; i < timeline_.exchanges.size(); ++i) {
    auto& x = timeline_.exchanges[i];
    std::tie(x.ready, x.on) =
        PipePostings::ready(pp.rank(), x.start, exchangeMessages_[i], byStage);
  }
  std::vector<StageTimeline> timelines;
  for (const auto& a : pp.comm().allgatherStrings(timeline_.encode(), deadline())) {
    timelines.push_back(StageTimeline::decode(a));
  }
  auto split = splitPipeIdle(pp.rank(), timelines, static_cast<int>(out.step.size()));
  for (size_t k = 0; k < out.step.size(); ++k) {
    out.exposed[k] += split.transfer[k] + split.exposed[k] - out.transfer[k];
    out.transfer[k] = split.transfer[k];
    out.bubble[k] = split.bubble[k];
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
      const size_t count = psShard_[rank_];
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
  std::vector<std::vector<PipeMessage>> messages(ops_.size());
  stopIfInterrupted(team_->comm(), deadline());  // the step's agreed stop point
  team_->comm().barrier(deadline());
  const auto t0 = Clock::now();
  auto runTimed = [&](int i) {
    timing[i].start = Clock::now();
    if (ops_[i].pipe) {
      for (const auto& x : ops_[i].sends) {
        messages[i].push_back(
            {true, x.peer, static_cast<uint32_t>(postings_.sends[x.peer].size())});
        postings_.record(messages[i].back(), ns(timing[i].start));
      }
      for (const auto& x : ops_[i].recvs) {
        messages[i].push_back(
            {false, x.peer, static_cast<uint32_t>(postings_.recvs[x.peer].size())});
        postings_.record(messages[i].back(), ns(timing[i].start));
      }
    }
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
    if (!op.prefetch || !o_.overlap) stream_->waitIdle(deadline());
    runTimed(static_cast<int>(i));
  }
  drain();
  stream_->waitIdle(deadline());
  const auto t1 = Clock::now();
  auto busy = stream_->take();
  for (const auto& b : busy) timing[b.op] = {b.start, b.end};
  if (!record) return;
  if (ppTransport_) {
    for (const auto& b : busy) timeline_.compute.push_back({ns(b.start), ns(b.end)});
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind != OpKind::kCompute && !ops_[i].pipe) {
        timeline_.collectives.push_back({ns(timing[i].start), ns(timing[i].end)});
      }
    }
  }
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
  std::vector<bool> logged(ops_.size());  // an exchange on a step boundary joins the first step
  for (const auto& [s, e] : stepsIv) {
    double compute = 0, comm = 0, exposed = 0, transfer = 0, bubble = 0;
    for (const auto& b : busy) {
      auto lo = std::max(s, b.start), hi = std::min(e, b.end);
      if (hi > lo) compute += secs(lo, hi);
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kCompute) continue;
      auto lo = std::max(s, timing[i].start), hi = std::min(e, timing[i].end);
      if (hi <= lo) continue;
      const double d = secs(lo, hi);
      const double idle = d - overlapWith(lo, hi, busy);
      comm += d;
      if (ops_[i].pipe) {
        // A pipeline exchange waits for its peer's compute: only the transfer is
        // communication, the rest of its idle time is the schedule's bubble. The measured time
        // of an exchange with both sides ready splits it here; attributePipeWaits replaces that
        // with what the awaited stages were doing, where the stages share a clock.
        const double x = std::min(idle, xfer_);
        transfer += x;
        exposed += x;
        bubble += idle - x;
        if (!logged[i]) {
          logged[i] = true;
          timeline_.exchanges.push_back(
              {static_cast<int>(out.step.size()), ns(timing[i].start), 0, ns(timing[i].end), -1});
          exchangeMessages_.push_back(messages[i]);
        }
      } else {
        exposed += idle;
      }
    }
    out.step.push_back(secs(s, e));
    out.compute.push_back(compute);
    out.comm.push_back(comm);
    out.exposed.push_back(exposed);
    out.transfer.push_back(transfer);
    out.bubble.push_back(bubble);
  }
  std::map<int, int> perStep;
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (auto [st, count] : ops_[i].stats) {
      out.callTimes[stats_[st]].push_back(secs(timing[i].start, timing[i].end));
      perStep[st] += count;
    }
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
    Communicator& c = teams_[k.comm]->comm();
    CollArgs a{k.coll, k.dtype, RedOp::kSum, 0, k.count};
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
    // The pattern's seed from the call itself: the members of a group (the embedding group's two
    // stages) list their calls in different orders.
    const uint64_t callSeed = seed + k.count * 131 + static_cast<uint64_t>(k.coll) * 17 +
                              static_cast<uint64_t>(k.dtype) * 5 + static_cast<uint64_t>(k.comm);
    fillInput(a, r, n, callSeed, input.data());
    std::memcpy(const_cast<void*>(op->send), input.data(), sendCount(a, n) * e);
    // Out of place: poison the output so a value the call never writes is caught.
    if (op->recv != op->send) std::memset(op->recv, 0xff, recvCount(a, n) * e);
    prepared_[i]->run(op->send, op->recv, deadline());
    if (expectedOutput(a, r, n, callSeed, expected.data())) {
      wrong += countWrong(a.dtype, op->recv, expected.data(), recvCount(a, n));
    }
  }
  // Pipeline links: a pattern each way over every stage boundary.
  if (ppTransport_) {
    Team& pp = *teams_[kCommPp];
    const int s = pp.rank(), p = pp.size();
    for (int dir = 0; dir < 2; ++dir) {
      std::vector<SendOp> sends;
      std::vector<RecvOp> recvs;
      const int to = dir == 0 ? s + 1 : s - 1, from = dir == 0 ? s - 1 : s + 1;
      const uint64_t out = dir == 0 ? sendFwdBytes_ : recvFwdBytes_;
      const uint64_t in = dir == 0 ? recvFwdBytes_ : sendFwdBytes_;
      fillBytes(pipeSend_->data(), out, s, dir);
      std::memset(pipeRecv_->data(), 0, in);
      if (to >= 0 && to < p) sends.push_back({to, pipeSend_->data(), out});
      if (from >= 0 && from < p) recvs.push_back({from, pipeRecv_->data(), in});
      ppTransport_->exchange(sends, recvs, deadline());
      if (!recvs.empty()) wrong += wrongBytes(pipeRecv_->data(), in, from, dir);
    }
  }
  // Parameter server: workers push bench/Verify patterns, servers sum, workers check the pull
  // against the sum of the patterns (the allreduce of the workers).
  if (psTransport_) {
    const int servers = o_.servers, workers = n_ - servers;
    const size_t e = dataTypeSize(o_.gradType);
    const Op& push = rank_ < servers ? ops_[0] : ops_[ops_.size() - 2];
    if (rank_ >= servers) {
      const int w = rank_ - servers;
      for (int j = 0; j < servers; ++j) {
        CollArgs a{Collective::kAllReduce, o_.gradType, RedOp::kSum, 0, psShard_[j]};
        fillInput(a, w, workers, seed + 100 + j, const_cast<void*>(push.sends[j].data));
      }
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind != OpKind::kCompute) runComm(ops_[i]);
    }
    if (rank_ >= servers) {
      const int w = rank_ - servers;
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
  Communicator& comm = team_->comm();
  algo_ = effectiveAlgo(o_, comm.worldKind());
  if (o_.dpKind == DpKind::kParameterServer && o_.mode == ProxyMode::kDp) {
    buildPs();
  } else {
    // Sub-communicators, TP innermost by default (resolveLayout's coordinates).
    auto color = [&](int a, int b, int sa) { return a * sa + b; };
    teams_[kCommTp] = team_->split(color(l_.dpIdx, l_.ppIdx, l_.pp), l_.tpIdx);
    teams_[kCommPp] = team_->split(color(l_.dpIdx, l_.tpIdx, l_.tp), l_.ppIdx);
    teams_[kCommDp] = team_->split(color(l_.ppIdx, l_.tpIdx, l_.tp), l_.dpIdx);
    // The first and last stage of each (dp, tp) pair; the middle stages form a group that
    // never calls.
    const bool end = l_.ppIdx == 0 || l_.ppIdx == l_.pp - 1;
    teams_[kCommEmb] = team_->split(color(l_.dpIdx, l_.tpIdx, l_.tp) * 2 + (end ? 0 : 1), l_.ppIdx);
    teams_[kCommMp] = team_->split(l_.dpIdx, l_.ppIdx * l_.tp + l_.tpIdx);
    teams_[kCommWorld] = team_->split(0, comm.rank());
    build();
  }
  prepare();
  measureLink();
  stream_ = std::make_unique<ComputeStream>();
  RankOutcome out;
  out.order = stats_;
  for (const auto& op : ops_) {
    for (const auto& s : op.sends) out.commBytes += s.bytes;
    if (op.kind == OpKind::kColl) {
      const CallKey& k = callKeys_[op.call];
      CollArgs a{k.coll, k.dtype, RedOp::kSum, 0, k.count};
      out.commBytes += sendCount(a, commSize(k.comm)) * dataTypeSize(a.dtype);
    }
  }
  const bool async = l_.pp > 1 && o_.schedule == PpSchedule::kAsync;
  if (async) {
    // One window of o.steps steps back to back; warm-up: one untimed window.
    publishActivity("proxy step window", o_.warmup > 0 ? 2 : 1);
    int window = 0;
    if (o_.warmup > 0) {
      publishIteration(++window);
      execute(out, false);
    }
    publishIteration(++window);
    execute(out, true);
  } else {
    publishActivity("proxy step", o_.warmup + o_.steps);
    for (int i = 0; i < o_.warmup + o_.steps; ++i) {
      publishIteration(i + 1);
      execute(out, i >= o_.warmup);
    }
  }
  attributePipeWaits(out);
  stream_.reset();
  out.wrong = o_.checkRounds > 0 ? verify() : -1;
  return out;
}

std::vector<CallStat> RankProxy::plan() {
  if (o_.dpKind == DpKind::kParameterServer && o_.mode == ProxyMode::kDp) {
    buildPs();
  } else {
    build();
  }
  std::vector<int> perStep(stats_.size(), 0);
  for (const auto& op : ops_) {
    for (auto [st, count] : op.stats) perStep[st] += count;
  }
  const int window = l_.pp > 1 && o_.schedule == PpSchedule::kAsync ? o_.steps : 1;
  std::vector<CallStat> out;
  for (size_t i = 0; i < stats_.size(); ++i) {
    CallStat c;
    c.group = stats_[i].group;
    c.coll = stats_[i].coll;
    c.bytes = stats_[i].bytes;
    c.nranks = stats_[i].nranks;
    c.dtype = stats_[i].dtype;
    c.callsPerStep = perStep[i] / window;
    out.push_back(c);
  }
  return out;
}

// ---- gathering a run's outcome on rank 0 ----

std::string serializeStats(const RankOutcome& o) {
  std::string s;
  for (const auto& k : o.order) {
    auto it = o.callTimes.find(k);
    if (it == o.callTimes.end()) continue;
    std::vector<double> t = it->second;
    s += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{:.9g}\n", k.group, k.coll, k.bytes, k.nranks,
                     dataTypeName(k.dtype), o.callsPerStep.at(k), summarize(t).median);
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
  // step, compute, comm, exposed, transfer, bubble of every rank and step.
  constexpr int kMetrics = 6;
  std::vector<double> flat;
  for (auto* v :
       {&mine.step, &mine.compute, &mine.comm, &mine.exposed, &mine.transfer, &mine.bubble}) {
    flat.insert(flat.end(), v->begin(), v->end());
  }
  auto bytes = comm.allgatherBytes(flat.data(), flat.size() * sizeof(double), d);
  std::vector<double> all(bytes.size() / sizeof(double));
  std::memcpy(all.data(), bytes.data(), bytes.size());
  auto at = [&](int r, int metric, int k) { return all[(r * kMetrics + metric) * steps + k]; };
  std::vector<Layout> layouts(n);
  for (int r = 0; r < n; ++r) layouts[r] = resolveLayout(o, n, r);
  std::vector<double> combined(steps), comp(steps), com(steps), exp(steps), xfer(steps);
  for (int k = 0; k < steps; ++k) {
    for (int r = 0; r < n; ++r) {
      combined[k] = std::max(combined[k], at(r, 0, k));
      comp[k] = std::max(comp[k], at(r, 1, k));
      com[k] = std::max(com[k], at(r, 2, k));
      exp[k] = std::max(exp[k], at(r, 3, k));
      xfer[k] = std::max(xfer[k], at(r, 4, k));
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
  run.transfer = summarize(xfer).median;
  run.overlapPct = run.comm > 0 ? 100.0 * std::max(0.0, 1 - run.exposed / run.comm) : 0;
  const int pp = layout0.pp;
  const int m = microBatchesFor(o, layout0);
  if (pp > 1) {
    run.bubbleIdeal = idealBubble(pp, m);
    // Per step, the idle the schedule imposes on each stage with the stages' measured compute
    // (mean over a stage's ranks) and instant transfers; the asynchronous schedule over its
    // window of steps, with the mean compute.
    const bool async = o.schedule == PpSchedule::kAsync;
    std::vector<std::vector<double>> perStage(steps, std::vector<double>(pp, 0));
    std::vector<double> ranksOf(pp, 0), meanCompute(pp, 0);
    for (int r = 0; r < n; ++r) ranksOf[layouts[r].ppIdx] += 1;
    for (int k = 0; k < steps; ++k) {
      for (int r = 0; r < n; ++r) {
        const double c = at(r, 1, k) / ranksOf[layouts[r].ppIdx];
        perStage[k][layouts[r].ppIdx] += c;
        meanCompute[layouts[r].ppIdx] += c / steps;
      }
    }
    std::vector<std::vector<double>> schedIdle(steps);
    for (int k = 0; k < steps; ++k) {
      schedIdle[k] =
          async ? (k == 0 ? scheduleIdlePerStep(o.schedule, m, steps, meanCompute) : schedIdle[0])
                : scheduleIdlePerStep(o.schedule, m, 1, perStage[k]);
    }
    for (int st = 0; st < pp; ++st) {
      // Per step, the stage's mean over its ranks of idle and its parts, and the bubble's share
      // of the stage's compute plus bubble.
      std::vector<double> idle, transfer, exposed, bubble, other, sched;
      for (int k = 0; k < steps; ++k) {
        double i = 0, x = 0, e = 0, b = 0, sb = 0;
        int cnt = 0;
        for (int r = 0; r < n; ++r) {
          if (layouts[r].ppIdx != st) continue;
          i += (combined[k] - at(r, 1, k)) / combined[k];
          // A stage done before the slowest one waits for the flush: bubble as well. Beyond the
          // schedule's own idle, the wait is the transfers' and collectives' that made a peer's
          // compute late (PipeIdle.h, splitWait).
          const WaitSplit w = splitWait(at(r, 5, k) + combined[k] - at(r, 0, k), schedIdle[k][st],
                                        at(r, 4, k), at(r, 3, k) - at(r, 4, k));
          x += w.transfer / combined[k];
          e += w.exposed / combined[k];
          b += w.bubble / combined[k];
          sb += at(r, 1, k) + w.bubble > 0 ? w.bubble / (at(r, 1, k) + w.bubble) : 0;
          ++cnt;
        }
        idle.push_back(i / cnt);
        transfer.push_back(x / cnt);
        exposed.push_back(e / cnt);
        bubble.push_back(b / cnt);
        other.push_back((i - x - e - b) / cnt);
        sched.push_back(sb / cnt);
      }
      run.idlePerStage.push_back(summarize(idle).median);
      run.transferPerStage.push_back(summarize(transfer).median);
      run.exposedPerStage.push_back(summarize(exposed).median);
      run.bubblePerStage.push_back(summarize(bubble).median);
      run.otherPerStage.push_back(summarize(other).median);
      run.scheduleBubblePerStage.push_back(summarize(sched).median);
    }
  }
  const int dp = layout0.dp;
  double workers =
      o.dpKind == DpKind::kParameterServer && o.mode == ProxyMode::kDp ? n - o.servers : dp;
  const double samples = batch * workers * m;
  run.samplesPerSecond = run.step > 0 ? samples / run.step : 0;
  run.tokensPerSecond = run.samplesPerSecond * o.model.tokensPerSample();
  run.commBytesPerStep = comm.broadcastValue(mine.commBytes, 0, d);
  // Calls: each rank's medians; the call's time is the slowest rank's.
  auto statTexts = comm.allgatherStrings(serializeStats(mine), d);
  std::map<StatKey, CallStat> calls;
  std::vector<StatKey> order;  // as rank 0 issues them, then what other ranks add
  for (const auto& text : statTexts) {
    for (const auto& line : splitLines(text)) {
      auto f = splitTabs(line, 7);
      if (f.size() != 7) continue;
      StatKey k{f[0], f[1], std::stoull(f[2]), std::stoi(f[3]), parseDataType(f[4])};
      if (!calls.count(k)) order.push_back(k);
      CallStat& c = calls[k];
      c.group = k.group;
      c.coll = k.coll;
      c.bytes = k.bytes;
      c.nranks = k.nranks;
      c.dtype = k.dtype;
      c.callsPerStep = std::max(c.callsPerStep, std::stoi(f[5]));
      c.seconds = std::max(c.seconds, std::stod(f[6]));
    }
  }
  for (const auto& k : order) {
    CallStat& c = calls[k];
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

}  // namespace

std::vector<CallStat> planStep(const ProxyOptions& o, int worldSize, int rank) {
  validateProxy(o, worldSize);
  RankProxy rp(nullptr, o, resolveLayout(o, worldSize, rank), o.batch, worldSize, rank);
  return rp.plan();
}

namespace {

ProxyRun runOnce(Team& team, const ProxyOptions& o, double batch) {
  Layout l = resolveLayout(o, team.size(), team.rank());
  RankProxy rp(&team, o, l, batch, team.size(), team.rank());
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
      const DataType t = c.dtype;
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
