#include "collectives/schedule/HostExecutor.h"

#include <cstring>
#include <vector>

#include "core/Error.h"
#include "core/Reduce.h"

namespace cb {

HostExecutor::HostExecutor(Transport& transport, Schedule schedule, const CollArgs& args)
    : transport_(transport), schedule_(std::move(schedule)), args_(args) {
  validateBounds(schedule_, transport_.rank());
  size_t bytes = schedule_.scratchCount * dataTypeSize(args_.dtype);
  if (bytes) {
    scratch_ = SharedHostBuffer(bytes);
    scratch_.faultIn();
  }
}

void HostExecutor::run(const void* send, void* recv, Deadline d) {
  const size_t es = dataTypeSize(args_.dtype);
  auto* sendBase = static_cast<std::byte*>(const_cast<void*>(send));
  auto* recvBase = static_cast<std::byte*>(recv);
  auto* scratchBase = static_cast<std::byte*>(scratch_.data());
  auto ptr = [&](const Span& s) {
    std::byte* base = s.buf == BufferRef::kSend   ? sendBase
                      : s.buf == BufferRef::kRecv ? recvBase
                                                  : scratchBase;
    return base + s.offset * es;
  };
  // Reused across phases so a timed run allocates only on its first phase.
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (const auto& phase : schedule_.phases) {
    sends.clear();
    recvs.clear();
    for (const auto& st : phase.steps) {
      switch (st.kind) {
        case StepKind::kCopy:
          if (st.src.count && ptr(st.src) != ptr(st.dst)) {
            std::memmove(ptr(st.dst), ptr(st.src), st.src.count * es);
          }
          break;
        case StepKind::kReduce:
          reduce(args_.dtype, args_.op, ptr(st.dst), ptr(st.dst), ptr(st.src), st.dst.count);
          break;
        case StepKind::kScale:
          scaleForAvg(args_.dtype, ptr(st.dst), st.dst.count, transport_.size());
          break;
        case StepKind::kSend: sends.push_back({st.peer, ptr(st.src), st.src.count * es}); break;
        case StepKind::kRecv: recvs.push_back({st.peer, ptr(st.dst), st.dst.count * es}); break;
        case StepKind::kRecvReduce:
          recvs.push_back(
              {st.peer, ptr(st.dst), st.dst.count * es, true, ptr(st.src), args_.dtype, args_.op});
          break;
      }
    }
    if (!sends.empty() || !recvs.empty()) transport_.exchange(sends, recvs, d);
  }
}

}  // namespace cb
