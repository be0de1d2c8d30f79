// The reference executor: every rank's schedule runs in one process, phase by phase, with
// rendezvous matching (a send completes only when its receive is posted, as on a transport
// without buffering). It finds deadlocks, size mismatches, out-of-bounds spans and data hazards
// (a phase writing memory that it also reads or writes elsewhere), which host runs would only
// show as wrong numbers or hangs.
#include "collectives/schedule/ReferenceExecutor.h"

#include <fmt/format.h>
#include <cstring>
#include <deque>
#include <map>

#include "core/Error.h"
#include "core/Reduce.h"

namespace cb {
namespace {

struct Resolved {
  std::byte* send;
  std::byte* recv;
  std::vector<std::byte> scratch;
};

struct Region {
  const std::byte* begin;
  const std::byte* end;
  bool overlaps(const Region& o) const { return begin < o.end && o.begin < end; }
};

class Reference {
 public:
  Reference(const std::vector<Schedule>& schedules, const CollArgs& args,
            std::vector<RankBuffers>& buffers)
      : sched_(schedules), args_(args), es_(dataTypeSize(args.dtype)) {
    int n = static_cast<int>(schedules.size());
    res_.resize(n);
    for (int r = 0; r < n; ++r) {
      validateBounds(sched_[r], r);
      auto& b = buffers[r];
      size_t sc = sendCount(args, n), rc = recvCount(args, n);
      if (b.inPlace) {
        if (args.coll == Collective::kReduceScatter) {
          if (b.send.size() < sc * es_) throw InternalError("reference: send buffer too small");
          res_[r].send = b.send.data();
          res_[r].recv = b.send.data() + inPlaceRecvOffset(args, r) * es_;
        } else {
          if (b.recv.size() < rc * es_) throw InternalError("reference: recv buffer too small");
          res_[r].recv = b.recv.data();
          res_[r].send = b.recv.data() + inPlaceSendOffset(args, r) * es_;
        }
      } else {
        if (b.send.size() < sc * es_ || b.recv.size() < rc * es_) {
          throw InternalError("reference: buffers smaller than the collective needs");
        }
        res_[r].send = b.send.data();
        res_[r].recv = b.recv.data();
      }
      res_[r].scratch.resize(sched_[r].scratchCount * es_);
    }
  }

  void run() {
    int n = static_cast<int>(sched_.size());
    std::vector<size_t> phase(n, 0);
    std::vector<bool> entered(n, false);
    std::vector<size_t> outstanding(n, 0);
    while (true) {
      bool progress = false;
      bool allDone = true;
      for (int r = 0; r < n; ++r) {
        if (phase[r] >= sched_[r].phases.size()) continue;
        allDone = false;
        if (!entered[r]) {
          outstanding[r] = enter(r, phase[r]);
          entered[r] = true;
          progress = true;
        }
      }
      if (allDone) break;
      for (auto& [key, ch] : channels_) {
        while (!ch.sends.empty() && !ch.recvs.empty()) {
          match(key.first, key.second, ch.sends.front(), ch.recvs.front());
          ch.sends.pop_front();
          ch.recvs.pop_front();
          --outstanding[key.first];
          --outstanding[key.second];
          progress = true;
        }
      }
      for (int r = 0; r < n; ++r) {
        if (entered[r] && outstanding[r] == 0) {
          entered[r] = false;
          ++phase[r];
          progress = true;
        }
      }
      if (!progress) throw InternalError(deadlockReport(phase));
    }
    for (const auto& [key, ch] : channels_) {
      if (!ch.sends.empty() || !ch.recvs.empty()) {
        throw InternalError(fmt::format("{} unmatched message(s) from rank {} to rank {}",
                                        ch.sends.size() + ch.recvs.size(), key.first, key.second));
      }
    }
  }

 private:
  struct Channel {
    std::deque<const Step*> sends;
    std::deque<const Step*> recvs;
  };

  std::byte* ptr(int r, const Span& s) {
    std::byte* base = s.buf == BufferRef::kSend   ? res_[r].send
                      : s.buf == BufferRef::kRecv ? res_[r].recv
                                                  : res_[r].scratch.data();
    return base + s.offset * es_;
  }
  Region region(int r, const Span& s) {
    auto* p = ptr(r, s);
    return {p, p + s.count * es_};
  }

  // Runs the local steps, posts the communication; returns the number of comm ops posted.
  size_t enter(int r, size_t p) {
    const auto& ph = sched_[r].phases[p];
    checkHazards(r, p, ph);
    size_t posted = 0;
    for (const auto& st : ph.steps) {
      switch (st.kind) {
        case StepKind::kCopy:
          if (ptr(r, st.src) != ptr(r, st.dst) && st.src.count) {
            std::memmove(ptr(r, st.dst), ptr(r, st.src), st.src.count * es_);
          }
          break;
        case StepKind::kReduce:
          reduce(args_.dtype, args_.op, ptr(r, st.dst), ptr(r, st.dst), ptr(r, st.src),
                 st.dst.count);
          break;
        case StepKind::kScale:
          scaleForAvg(args_.dtype, ptr(r, st.dst), st.dst.count, static_cast<int>(sched_.size()));
          break;
        case StepKind::kSend:
          checkPeer(r, st.peer);
          channels_[{r, st.peer}].sends.push_back(&st);
          ++posted;
          break;
        case StepKind::kRecv:
        case StepKind::kRecvReduce:
          checkPeer(r, st.peer);
          channels_[{st.peer, r}].recvs.push_back(&st);
          ++posted;
          break;
      }
    }
    // The phase's communication is counted once per op on each side.
    return posted;
  }

  void match(int src, int dst, const Step* s, const Step* r) {
    if (s->src.count != r->dst.count) {
      throw InternalError(fmt::format("rank {} sends {} elements to rank {}, which expects {}", src,
                                      s->src.count, dst, r->dst.count));
    }
    if (r->kind == StepKind::kRecv) {
      if (s->src.count) std::memcpy(ptr(dst, r->dst), ptr(src, s->src), s->src.count * es_);
    } else {
      reduce(args_.dtype, args_.op, ptr(dst, r->dst), ptr(dst, r->src), ptr(src, s->src),
             r->dst.count);
    }
  }

  void checkPeer(int r, int peer) const {
    if (peer < 0 || peer >= static_cast<int>(sched_.size()) || peer == r) {
      throw InternalError(fmt::format("rank {} addresses invalid peer {}", r, peer));
    }
  }

  // Within one phase, communication writes (receive destinations) must not overlap anything else
  // the phase's communication touches: they run concurrently on a real transport.
  void checkHazards(int r, size_t p, const Phase& ph) {
    std::vector<Region> writes, reads;
    for (const auto& st : ph.steps) {
      if (st.kind == StepKind::kSend) reads.push_back(region(r, st.src));
      if (st.kind == StepKind::kRecv) writes.push_back(region(r, st.dst));
      if (st.kind == StepKind::kRecvReduce) {
        writes.push_back(region(r, st.dst));
        if (ptr(r, st.src) != ptr(r, st.dst)) reads.push_back(region(r, st.src));
      }
    }
    for (size_t i = 0; i < writes.size(); ++i) {
      if (writes[i].begin == writes[i].end) continue;
      for (size_t j = i + 1; j < writes.size(); ++j) {
        if (writes[i].overlaps(writes[j])) {
          throw InternalError(
              fmt::format("rank {} phase {}: two receives write overlapping memory", r, p));
        }
      }
      for (const auto& rd : reads) {
        if (writes[i].overlaps(rd)) {
          throw InternalError(fmt::format(
              "rank {} phase {}: a receive writes memory the same phase sends or reads", r, p));
        }
      }
    }
  }

  std::string deadlockReport(const std::vector<size_t>& phase) const {
    std::string msg = "deadlock:";
    for (size_t r = 0; r < phase.size(); ++r) {
      if (phase[r] < sched_[r].phases.size()) {
        msg += fmt::format(" rank {} stuck in phase {}/{};", r, phase[r], sched_[r].phases.size());
      }
    }
    return msg;
  }

  const std::vector<Schedule>& sched_;
  CollArgs args_;
  size_t es_;
  std::vector<Resolved> res_;
  std::map<std::pair<int, int>, Channel> channels_;
};

}  // namespace

void runReference(const std::vector<Schedule>& schedules, const CollArgs& args,
                  std::vector<RankBuffers>& buffers) {
  if (schedules.size() != buffers.size()) {
    throw InternalError("reference: one schedule and one buffer set per rank");
  }
  Reference(schedules, args, buffers).run();
}

}  // namespace cb
