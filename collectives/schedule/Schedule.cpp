#include "collectives/schedule/Schedule.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/Error.h"

namespace cb {

Cost rankCost(const Schedule& s, size_t elementSize) {
  return rankCostByLink(s, elementSize, [](int) { return false; }).local;
}

LinkCost rankCostByLink(const Schedule& s, size_t elementSize,
                        const std::function<bool(int peer)>& remote) {
  LinkCost out;
  for (const auto& phase : s.phases) {
    size_t largest = 0;
    size_t reduced = 0;
    bool comm = false, far = false;
    for (const auto& st : phase.steps) {
      if (st.kind == StepKind::kSend || st.kind == StepKind::kRecv ||
          st.kind == StepKind::kRecvReduce) {
        far = far || remote(st.peer);
      }
      switch (st.kind) {
        case StepKind::kSend:
          comm = true;
          largest = std::max(largest, st.src.count);
          break;
        case StepKind::kRecv:
          comm = true;
          largest = std::max(largest, st.dst.count);
          break;
        case StepKind::kRecvReduce:
          comm = true;
          largest = std::max(largest, st.dst.count);
          reduced += st.dst.count;
          break;
        case StepKind::kReduce: reduced += st.dst.count; break;
        default: break;
      }
    }
    Cost& c = far ? out.remote : out.local;
    if (comm) c.messages += 1;
    c.bytes += static_cast<double>(largest * elementSize);
    out.local.reducedBytes += static_cast<double>(reduced * elementSize);
  }
  return out;
}

namespace {

size_t capacity(const Schedule& s, BufferRef b) {
  switch (b) {
    case BufferRef::kSend: return s.sendCount;
    case BufferRef::kRecv: return s.recvCount;
    case BufferRef::kScratch: return s.scratchCount;
  }
  return 0;
}

void checkSpan(const Schedule& s, const Span& sp, int rank, size_t phase, const char* what) {
  size_t cap = capacity(s, sp.buf);
  if (sp.offset > cap || sp.count > cap - sp.offset) {
    static constexpr const char* kNames[] = {"send", "recv", "scratch"};
    throw InternalError(fmt::format(
        "schedule of rank {} phase {}: {} span [{}, {}) outside the {} buffer of {} elements", rank,
        phase, what, sp.offset, sp.offset + sp.count, kNames[static_cast<int>(sp.buf)], cap));
  }
}

}  // namespace

void validateBounds(const Schedule& s, int rank) {
  for (size_t p = 0; p < s.phases.size(); ++p) {
    for (const auto& st : s.phases[p].steps) {
      switch (st.kind) {
        case StepKind::kSend: checkSpan(s, st.src, rank, p, "send source"); break;
        case StepKind::kRecv: checkSpan(s, st.dst, rank, p, "receive destination"); break;
        case StepKind::kScale: checkSpan(s, st.dst, rank, p, "scale"); break;
        default:
          checkSpan(s, st.src, rank, p, "source");
          checkSpan(s, st.dst, rank, p, "destination");
          if (st.src.count != st.dst.count) {
            throw InternalError(
                fmt::format("schedule of rank {} phase {}: source and destination "
                            "counts differ ({} vs {})",
                            rank, p, st.src.count, st.dst.count));
          }
      }
    }
  }
}

Schedule ScheduleBuilder::build() && {
  std::erase_if(s_.phases, [](const Phase& p) { return p.steps.empty(); });
  return std::move(s_);
}

}  // namespace cb
