// One rank of a proxy step, internal to training_proxies/: the ops of its program and the call
// kinds they count as, the program's builder (RankProgram.cpp: the model's layers, the layout's
// groups and the schedule into ops), its executor (RankExecutor.cpp: buffers, the timed steps,
// the pipeline's idle split, verification) and the gathering of every rank's outcome on rank 0
// (ProxyGather.cpp). Proxy.cpp drives them.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/transport/Transports.h"
#include "core/Buffer.h"
#include "training_proxies/ComputeStream.h"
#include "training_proxies/PipeIdle.h"
#include "training_proxies/Proxy.h"

namespace cb::proxy::rank {

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
inline void fillBytes(void* p, size_t n, int src, int salt) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(i * 131 + src * 17 + salt);
}
inline int64_t wrongBytes(const void* p, size_t n, int src, int salt) {
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

inline double overlapWith(Clock::time_point s, Clock::time_point e,
                          const std::vector<ComputeStream::Interval>& busy) {
  double o = 0;
  for (const auto& b : busy) {
    auto lo = std::max(s, b.start), hi = std::min(e, b.end);
    if (hi > lo) o += secs(lo, hi);
  }
  return o;
}

inline void* at(const std::unique_ptr<DataBuffer>& b) { return b ? b->data() : nullptr; }

inline int64_t ns(Clock::time_point t) {
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
  void build();  // shapeStage, allocate, emitSchedule
  void shapeStage();
  void emitSchedule();
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
  // Stage s of p's one message each way across its boundaries: dir 0 the activations forward
  // (to s+1, from s-1), dir 1 the gradients back.
  struct PipeExchange {
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    int from = -1;
    uint64_t out = 0, in = 0;
  };
  PipeExchange pipeExchange(int dir, int s, int p) const;
  void measureLink();
  // One execution of the step: each op's interval, the pipeline messages it posted, the compute
  // stream's busy intervals, its start and end.
  struct OpTiming {
    Clock::time_point start, end;
  };
  struct Execution {
    std::vector<OpTiming> timing;
    std::vector<std::vector<PipeMessage>> messages;
    std::vector<ComputeStream::Interval> busy;
    Clock::time_point t0, t1;
  };
  using Interval = std::pair<Clock::time_point, Clock::time_point>;
  void execute(RankOutcome& out, bool record);  // runOps, then (record) the outcome's figures
  Execution runOps();
  void recordTimeline(const Execution& ex);
  std::vector<Interval> stepIntervals(const Execution& ex) const;
  void accountSteps(const Execution& ex, const std::vector<Interval>& steps, RankOutcome& out);
  void recordCalls(const Execution& ex, size_t steps, RankOutcome& out);
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

// Rank 0 gathers every rank's outcome (`mine` on each) into the run's figures: steps, compute,
// communication, the pipeline's idle split per stage, the calls of a step. Collective over `comm`.
ProxyRun gatherRun(Communicator& comm, const ProxyOptions& o, const Layout& layout0, double batch,
                   RankOutcome& mine);

}  // namespace cb::proxy::rank
