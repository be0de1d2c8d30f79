// RankProxy's program: the model's layers, the layout's groups and the schedule as ops.
#include "training_proxies/RankProxy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/Error.h"
#include "core/Reduce.h"

namespace cb::proxy::rank {

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

// The stage's layers with this rank's TP share of them, its DDP buckets, the elements its
// optimizer step updates, and the activation bytes across its boundaries.
void RankProxy::shapeStage() {
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
}

void RankProxy::build() {
  shapeStage();
  allocate();
  emitSchedule();
}

// The step in the pipeline schedule's order (without a pipeline: the micro-batches one after
// another), each forward and backward pass's layers and the exchanges between the stages.
void RankProxy::emitSchedule() {
  const int p = l_.pp, stage = l_.ppIdx;
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

std::vector<CallStat> RankProxy::plan() {
  if (parameterServer(o_)) {
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

}  // namespace cb::proxy::rank
