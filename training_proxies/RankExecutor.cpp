// RankProxy's execution: communicators and buffers, the timed steps on the modelled compute
// stream, the pipeline's idle split and the check round.
#include "training_proxies/RankProxy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/Verify.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/RankBoard.h"
#include "core/Reduce.h"
#include "core/Stats.h"

namespace cb::proxy::rank {

void RankProxy::prepare() {
  const Registry& reg = Registry::orBuiltin(o_.registry);
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
  if (parameterServer(o_)) {
    psTransport_ = &transportOf(*team_);
  }
}

// The time of one pipeline exchange when both sides are ready (a barrier, then every stage sends
// to the next and receives from the previous, then the reverse): the transfer part of an
// exchange; what an exchange takes beyond it is waiting for the peer (the bubble).
RankProxy::PipeExchange RankProxy::pipeExchange(int dir, int s, int p) const {
  PipeExchange x;
  const int to = dir == 0 ? s + 1 : s - 1;
  x.from = dir == 0 ? s - 1 : s + 1;
  x.out = dir == 0 ? sendFwdBytes_ : recvFwdBytes_;
  x.in = dir == 0 ? recvFwdBytes_ : sendFwdBytes_;
  if (to >= 0 && to < p) x.sends.push_back({to, pipeSend_->data(), x.out});
  if (x.from >= 0 && x.from < p) x.recvs.push_back({x.from, pipeRecv_->data(), x.in});
  return x;
}

void RankProxy::measureLink() {
  if (!ppTransport_) return;
  Team& pp = *teams_[kCommPp];
  const int s = pp.rank(), p = pp.size();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    double sum = 0;
    for (int dir = 0; dir < 2; ++dir) {
      const PipeExchange x = pipeExchange(dir, s, p);
      pp.comm().barrier(deadline());
      const auto a = Clock::now();
      ppTransport_->exchange(x.sends, x.recvs, deadline());
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
  const Execution ex = runOps();
  if (!record) return;
  recordTimeline(ex);
  const auto steps = stepIntervals(ex);
  accountSteps(ex, steps, out);
  recordCalls(ex, steps.size(), out);
}

// The step's ops in order: compute on the modelled stream, asynchronous collectives once the
// compute they wait for is done, the rest when the stream is idle (a prefetch with overlap: at
// once).
RankProxy::Execution RankProxy::runOps() {
  Execution ex;
  ex.timing.resize(ops_.size());
  ex.messages.resize(ops_.size());
  std::vector<std::pair<int, uint64_t>> pending;  // async op, the compute it waits for
  uint64_t lastSeq = 0;
  stopIfInterrupted(team_->comm(), deadline());  // the step's agreed stop point
  team_->comm().barrier(deadline());
  ex.t0 = Clock::now();
  auto runTimed = [&](int i) {
    ex.timing[i].start = Clock::now();
    if (ops_[i].pipe) {
      for (const auto& x : ops_[i].sends) {
        ex.messages[i].push_back(
            {true, x.peer, static_cast<uint32_t>(postings_.sends[x.peer].size())});
        postings_.record(ex.messages[i].back(), ns(ex.timing[i].start));
      }
      for (const auto& x : ops_[i].recvs) {
        ex.messages[i].push_back(
            {false, x.peer, static_cast<uint32_t>(postings_.recvs[x.peer].size())});
        postings_.record(ex.messages[i].back(), ns(ex.timing[i].start));
      }
    }
    runComm(ops_[i]);
    ex.timing[i].end = Clock::now();
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
  ex.t1 = Clock::now();
  ex.busy = stream_->take();
  for (const auto& b : ex.busy) ex.timing[b.op] = {b.start, b.end};
  return ex;
}

// Pipelined runs: the compute intervals and the collectives' for the pipeline's idle split.
void RankProxy::recordTimeline(const Execution& ex) {
  if (ppTransport_) {
    for (const auto& b : ex.busy) timeline_.compute.push_back({ns(b.start), ns(b.end)});
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind != OpKind::kCompute && !ops_[i].pipe) {
        timeline_.collectives.push_back({ns(ex.timing[i].start), ns(ex.timing[i].end)});
      }
    }
  }
}

// Step intervals: the whole execution, or (asynchronous pipeline) each stepEnd op.
std::vector<RankProxy::Interval> RankProxy::stepIntervals(const Execution& ex) const {
  std::vector<Interval> stepsIv;
  Clock::time_point from = ex.t0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].stepEnd) {
      stepsIv.emplace_back(from, ex.timing[i].end);
      from = ex.timing[i].end;
    }
  }
  if (stepsIv.empty())
    stepsIv.emplace_back(ex.t0, ex.t1);
  else
    stepsIv.back().second = ex.t1;
  return stepsIv;
}

// Per step: compute, communication, exposed communication, pipeline transfer and bubble.
void RankProxy::accountSteps(const Execution& ex, const std::vector<Interval>& steps,
                             RankOutcome& out) {
  std::vector<bool> logged(ops_.size());  // an exchange on a step boundary joins the first step
  for (const auto& [s, e] : steps) {
    double compute = 0, comm = 0, exposed = 0, transfer = 0, bubble = 0;
    for (const auto& b : ex.busy) {
      auto lo = std::max(s, b.start), hi = std::min(e, b.end);
      if (hi > lo) compute += secs(lo, hi);
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kCompute) continue;
      auto lo = std::max(s, ex.timing[i].start), hi = std::min(e, ex.timing[i].end);
      if (hi <= lo) continue;
      const double d = secs(lo, hi);
      const double idle = d - overlapWith(lo, hi, ex.busy);
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
          timeline_.exchanges.push_back({static_cast<int>(out.step.size()), ns(ex.timing[i].start),
                                         0, ns(ex.timing[i].end), -1});
          exchangeMessages_.push_back(ex.messages[i]);
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
}

// Every call's times by kind, the calls per step, and the step's events as text.
void RankProxy::recordCalls(const Execution& ex, size_t steps, RankOutcome& out) {
  std::map<int, int> perStep;
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (auto [st, count] : ops_[i].stats) {
      out.callTimes[stats_[st]].push_back(secs(ex.timing[i].start, ex.timing[i].end));
      perStep[st] += count;
    }
  }
  for (auto [s, c] : perStep) out.callsPerStep[stats_[s]] = c / static_cast<int>(steps);
  std::string text;
  for (size_t i = 0; i < ops_.size(); ++i) {
    text +=
        fmt::format("{}\t{:.9f}\t{:.9f}\t{}\n", ops_[i].kind == OpKind::kCompute ? 'c' : 'm',
                    secs(ex.t0, ex.timing[i].start), secs(ex.t0, ex.timing[i].end), ops_[i].name);
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
      const PipeExchange x = pipeExchange(dir, s, p);
      fillBytes(pipeSend_->data(), x.out, s, dir);
      std::memset(pipeRecv_->data(), 0, x.in);
      ppTransport_->exchange(x.sends, x.recvs, deadline());
      if (!x.recvs.empty()) wrong += wrongBytes(pipeRecv_->data(), x.in, x.from, dir);
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
  if (parameterServer(o_)) {
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

}  // namespace cb::proxy::rank
