#include "training_proxies/PipeIdle.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/Error.h"

namespace cb::proxy {

void PipePostings::record(const PipeMessage& m, int64_t startNs) {
  auto& list = (m.send ? sends : recvs)[m.peer];
  if (list.size() != m.ordinal) {
    throw InternalError(
        fmt::format("pipeline message {} to/from stage {} posted out of order", m.ordinal, m.peer));
  }
  list.push_back(startNs);
}

std::pair<int64_t, int> PipePostings::ready(int stage, int64_t start,
                                            const std::vector<PipeMessage>& messages,
                                            const std::vector<PipePostings>& byStage) {
  std::pair<int64_t, int> out{start, -1};
  for (const auto& m : messages) {
    if (m.peer < 0 || m.peer >= static_cast<int>(byStage.size())) {
      throw InternalError(fmt::format("pipeline peer {} out of range", m.peer));
    }
    // My send is the peer's receive from me, and the other way round.
    const auto& table = m.send ? byStage[m.peer].recvs : byStage[m.peer].sends;
    auto it = table.find(stage);
    if (it == table.end() || m.ordinal >= it->second.size()) {
      throw InternalError(fmt::format("stage {} has no counterpart of message {} with stage {}",
                                      m.peer, m.ordinal, stage));
    }
    if (it->second[m.ordinal] > out.first) out = {it->second[m.ordinal], m.peer};
  }
  return out;
}

namespace {

class Writer {
 public:
  void put(int64_t v) { s_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  int64_t get() {
    if (at_ + sizeof(int64_t) > s_.size()) throw InternalError("truncated pipeline timeline");
    int64_t v;
    std::memcpy(&v, s_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // A count of records of `fields` values each, which the rest of the string must hold.
  size_t count(size_t fields) {
    const int64_t n = get();
    if (n < 0 || static_cast<size_t>(n) > (s_.size() - at_) / (fields * sizeof(int64_t))) {
      throw InternalError("malformed pipeline timeline");
    }
    return static_cast<size_t>(n);
  }
  void end() const {
    if (at_ != s_.size()) throw InternalError("trailing bytes in pipeline timeline");
  }

 private:
  const std::string& s_;
  size_t at_ = 0;
};

}  // namespace

// Sends then recvs: the number of peers, then per peer: stage, count, the times.
std::string PipePostings::encode() const {
  Writer w;
  for (const auto* table : {&sends, &recvs}) {
    w.put(static_cast<int64_t>(table->size()));
    for (const auto& [peer, times] : *table) {
      w.put(peer);
      w.put(static_cast<int64_t>(times.size()));
      for (int64_t t : times) w.put(t);
    }
  }
  return w.take();
}

PipePostings PipePostings::decode(const std::string& s) {
  PipePostings p;
  Reader r(s);
  for (auto* table : {&p.sends, &p.recvs}) {
    const size_t peers = r.count(2);
    for (size_t i = 0; i < peers; ++i) {
      const int peer = static_cast<int>(r.get());
      const size_t n = r.count(1);
      auto& times = (*table)[peer];
      for (size_t k = 0; k < n; ++k) times.push_back(r.get());
    }
  }
  r.end();
  return p;
}

std::string StageTimeline::encode() const {
  Writer w;
  for (const auto* spans : {&compute, &collectives}) {
    w.put(static_cast<int64_t>(spans->size()));
    for (const auto& x : *spans) {
      w.put(x.start);
      w.put(x.end);
    }
  }
  w.put(static_cast<int64_t>(exchanges.size()));
  for (const auto& x : exchanges) {
    for (int64_t v :
         {static_cast<int64_t>(x.step), x.start, x.ready, x.end, static_cast<int64_t>(x.on)}) {
      w.put(v);
    }
  }
  return w.take();
}

StageTimeline StageTimeline::decode(const std::string& s) {
  StageTimeline t;
  Reader r(s);
  for (auto* spans : {&t.compute, &t.collectives}) {
    spans->resize(r.count(2));
    for (auto& x : *spans) {
      x.start = r.get();
      x.end = r.get();
    }
  }
  t.exchanges.resize(r.count(5));
  for (auto& x : t.exchanges) {
    x.step = static_cast<int>(r.get());
    x.start = r.get();
    x.ready = r.get();
    x.end = r.get();
    x.on = static_cast<int>(r.get());
  }
  r.end();
  return t;
}

namespace {

struct Blame {
  double bubble = 0, transfer = 0, exposed = 0, other = 0;  // seconds
};

// A chain of waits longer than this is cut (and counted as a host gap): a wait points to a stage
// that posts later, so real chains are a few stages long.
constexpr int kMaxDepth = 32;

bool inside(int64_t t, int64_t a, int64_t b) { return t >= a && t < b; }

// What stage s did during [a, b), and so why a stage waiting on it then was idle. `self`: s is
// the waiting stage, looking at its own exchange: its own compute there is not idle time.
void blame(const std::vector<StageTimeline>& all, int s, int64_t a, int64_t b, int depth, bool self,
           Blame& out) {
  if (b <= a) return;
  const StageTimeline& t = all[s];
  std::vector<int64_t> cuts{a, b};
  auto cut = [&](int64_t u) {
    if (u > a && u < b) cuts.push_back(u);
  };
  for (const auto* spans : {&t.compute, &t.collectives}) {
    for (const auto& x : *spans) {
      cut(x.start);
      cut(x.end);
    }
  }
  for (const auto& x : t.exchanges) {
    cut(x.start);
    cut(x.ready);
    cut(x.end);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const int64_t u = cuts[i], v = cuts[i + 1], mid = u + (v - u) / 2;
    const double dt = static_cast<double>(v - u) * 1e-9;
    auto covers = [&](const TimeSpan& x) { return inside(mid, x.start, x.end); };
    if (std::any_of(t.compute.begin(), t.compute.end(), covers)) {
      if (!self) out.bubble += dt;
      continue;
    }
    auto x = std::find_if(t.exchanges.begin(), t.exchanges.end(),
                          [&](const ExchangeSpan& e) { return inside(mid, e.start, e.end); });
    if (x != t.exchanges.end()) {
      if (mid >= x->ready) {
        out.transfer += dt;
      } else if (x->on >= 0 && x->on != s && depth < kMaxDepth) {
        blame(all, x->on, u, v, depth + 1, false, out);
      } else {
        out.other += dt;
      }
    } else if (std::any_of(t.collectives.begin(), t.collectives.end(), covers)) {
      out.exposed += dt;
    } else {
      out.other += dt;
    }
  }
}

}  // namespace

PipeIdleSplit splitPipeIdle(int stage, const std::vector<StageTimeline>& byStage, int steps) {
  if (stage < 0 || stage >= static_cast<int>(byStage.size())) {
    throw InternalError(fmt::format("pipeline stage {} out of range", stage));
  }
  PipeIdleSplit out;
  for (auto* v : {&out.bubble, &out.transfer, &out.exposed, &out.other}) v->assign(steps, 0);
  for (const auto& x : byStage[stage].exchanges) {
    if (x.step < 0 || x.step >= steps) continue;
    Blame b;
    blame(byStage, stage, x.start, x.end, 0, true, b);
    out.bubble[x.step] += b.bubble;
    out.transfer[x.step] += b.transfer;
    out.exposed[x.step] += b.exposed;
    out.other[x.step] += b.other;
  }
  return out;
}

WaitSplit splitWait(double wait, double scheduleIdle, double transfer, double exposed) {
  WaitSplit out{wait, transfer, exposed};
  const double excess = wait - std::max(scheduleIdle, 0.0);
  if (excess <= 0) {
    // The stage's own messages moved while the schedule had it idle anyway: they cost nothing.
    const double hidden = std::min(-excess, transfer);
    out.bubble += hidden;
    out.transfer -= hidden;
    return out;
  }
  out.bubble -= excess;
  const double toTransfer =
      transfer + exposed > 0 ? excess * transfer / (transfer + exposed) : excess;
  out.transfer += toTransfer;
  out.exposed += excess - toTransfer;
  return out;
}

}  // namespace cb::proxy
