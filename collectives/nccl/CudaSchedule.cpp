// The CUDA schedule executor (see CudaSchedule.h).
#include "collectives/nccl/CudaSchedule.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "collectives/ScheduleVariants.h"
#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/DeviceCall.h"
#include "collectives/nccl/DeviceReduce.h"
#include "collectives/nccl/GpuBuffers.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/GpuOptions.h"
#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/NcclVariants.h"
#include "core/Error.h"

namespace cb {
namespace {

bool isLocal(StepKind k) {
  return k == StepKind::kCopy || k == StepKind::kReduce || k == StepKind::kScale;
}

class CudaScheduleRun final : public PreparedCollective {
 public:
  CudaScheduleRun(const CollArgs& args, int nranks, Schedule schedule, const GpuOptions& options,
                  int device, std::shared_ptr<NcclComm> nccl)
      : args_(args),
        nranks_(nranks),
        elem_(dataTypeSize(args.dtype)),
        schedule_(std::move(schedule)),
        device_(device),
        nccl_(std::move(nccl)),
        runner_(device, options, nccl_) {
    for (const auto& phase : schedule_.phases) plans_.push_back(planCudaPhase(phase));
    if (schedule_.scratchCount) {
      scratch_ = std::make_unique<DeviceBuffer>(device_, schedule_.scratchCount * elem_);
      scratch_->faultIn();
    }
    if (size_t staging = cudaStagingCount(schedule_)) {
      staging_ = std::make_unique<DeviceBuffer>(device_, staging * elem_);
      staging_->faultIn();
    }
  }

  ~CudaScheduleRun() override {
    if (nccl_->usable()) cudaStreamSynchronize(runner_.stream());
  }

  void run(const void* send, void* recv, Deadline d) override {
    last_.reset();
    ScopedDevice on(device_);
    last_ = runner_.run(callFor(send, recv, d), d);
  }

  void prepareBatch(const void* send, void* recv, int calls, BatchShift shift,
                    Deadline d) override {
    ScopedDevice on(device_);
    runner_.prepareBatch(callFor(send, recv, d), calls, shift);
  }

  std::optional<double> runBatch(const void* send, void* recv, int calls, BatchShift shift,
                                 Deadline d) override {
    ScopedDevice on(device_);
    return runner_.runBatch(callFor(send, recv, d), calls, shift, d);
  }

  std::optional<double> lastDeviceSeconds() const override { return last_; }

 private:
  DeviceCall callFor(const void* send, void* recv, Deadline d) {
    DeviceCall call;
    call.body = [this, send, recv, d](cudaStream_t s, size_t moved) {
      enqueue(static_cast<const char*>(send) + moved, static_cast<char*>(recv) + moved, s, d);
    };
    call.key = {send, recv};
    return call;
  }

  void enqueue(const void* send, void* recv, cudaStream_t s, Deadline d) {
    char* staging = staging_ ? static_cast<char*>(staging_->data()) : nullptr;
    const DeviceSpans spans{send, recv, scratch_ ? scratch_->data() : nullptr, elem_};
    for (const auto& plan : plans_) {
      enqueueLocalSteps(plan, spans, args_.dtype, args_.op, nranks_, s);
      bool any = std::any_of(plan.sends.begin(), plan.sends.end(),
                             [](const Step& st) { return st.src.count > 0; }) ||
                 std::any_of(plan.receives.begin(), plan.receives.end(),
                             [](const auto& r) { return r.step.dst.count > 0; });
      if (!any) continue;
      nccl_->call("ncclGroupStart", d, [](ncclComm_t) { return ncclGroupStart(); });
      for (const auto& step : plan.sends) {
        if (step.src.count == 0) continue;
        nccl_->call("ncclSend (schedule)", d, [&](ncclComm_t c) {
          return ncclSend(spans.at(step.src), step.src.count * elem_, ncclUint8, step.peer, c, s);
        });
      }
      for (const auto& r : plan.receives) {
        if (r.step.dst.count == 0) continue;
        char* into = r.step.kind == StepKind::kRecvReduce ? staging + r.stagingOffset * elem_
                                                          : spans.at(r.step.dst);
        nccl_->call("ncclRecv (schedule)", d, [&](ncclComm_t c) {
          return ncclRecv(into, r.step.dst.count * elem_, ncclUint8, r.step.peer, c, s);
        });
      }
      nccl_->call("ncclGroupEnd (schedule phase)", d, [](ncclComm_t) { return ncclGroupEnd(); });
      enqueueRecvReduces(plan, spans, staging, args_.dtype, args_.op, s);
    }
  }

  CollArgs args_;
  int nranks_;
  size_t elem_;
  Schedule schedule_;
  std::vector<CudaPhasePlan> plans_;
  int device_;
  std::shared_ptr<NcclComm> nccl_;  // before runner_: the runner goes first
  std::unique_ptr<DeviceBuffer> scratch_;
  std::unique_ptr<DeviceBuffer> staging_;
  DeviceCallRunner runner_;
  std::optional<double> last_;
};

void checkSpan(const Span& span, const Schedule& s, int phase, const char* what) {
  size_t limit = span.buf == BufferRef::kSend   ? s.sendCount
                 : span.buf == BufferRef::kRecv ? s.recvCount
                                                : s.scratchCount;
  if (span.offset > limit || span.count > limit - span.offset) {
    throw InternalError(
        fmt::format("schedule phase {}: {} range [{}, {}) outside a {}-element "
                    "buffer",
                    phase, what, span.offset, span.offset + span.count, limit));
  }
}

}  // namespace

char* DeviceSpans::at(const Span& span) const {
  char* base = nullptr;
  switch (span.buf) {
    case BufferRef::kSend: base = const_cast<char*>(static_cast<const char*>(send)); break;
    case BufferRef::kRecv: base = static_cast<char*>(recv); break;
    case BufferRef::kScratch: base = static_cast<char*>(scratch); break;
  }
  return base + span.offset * elementBytes;
}

void enqueueLocalSteps(const CudaPhasePlan& plan, const DeviceSpans& at, DataType t, RedOp op,
                       int nranks, cudaStream_t s) {
  for (const auto& step : plan.local) {
    char* dst = at.at(step.dst);
    size_t n = step.dst.count;
    if (n == 0) continue;
    switch (step.kind) {
      case StepKind::kCopy: {
        const char* src = at.at(step.src);
        if (src == dst) break;
        size_t bytes = n * at.elementBytes;
        if (src < dst + bytes && dst < src + bytes) {
          throw InternalError("schedule copy between partially overlapping ranges");
        }
        checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s),
                  "cudaMemcpyAsync (schedule copy)");
        break;
      }
      case StepKind::kReduce: deviceReduce(t, op, dst, dst, at.at(step.src), n, s); break;
      case StepKind::kScale: deviceScale(t, dst, n, nranks, s); break;
      default: break;
    }
  }
}

void enqueueRecvReduces(const CudaPhasePlan& plan, const DeviceSpans& at, char* staging, DataType t,
                        RedOp op, cudaStream_t s) {
  for (const auto& r : plan.receives) {
    if (r.step.kind != StepKind::kRecvReduce || r.step.dst.count == 0) continue;
    deviceReduce(t, op, at.at(r.step.dst), at.at(r.step.src),
                 staging + r.stagingOffset * at.elementBytes, r.step.dst.count, s);
  }
}

std::vector<OneDeviceAction> orderForOneDevice(
    const std::vector<std::vector<CudaPhasePlan>>& plans) {
  const int n = static_cast<int>(plans.size());
  struct Posted {
    size_t phase, index;
  };
  // channel[a][b]: a's sends to b and b's receives from a, posted and not yet matched.
  std::vector<std::vector<std::deque<Posted>>> sends(n, std::vector<std::deque<Posted>>(n));
  std::vector<std::vector<std::deque<Posted>>> receives(n, std::vector<std::deque<Posted>>(n));
  std::vector<size_t> phase(n, 0), outstanding(n, 0);
  std::vector<bool> entered(n, false);
  std::vector<OneDeviceAction> order;
  auto peerOf = [n](int r, int peer) {
    if (peer < 0 || peer >= n || peer == r) {
      throw InternalError(fmt::format("rank {} addresses invalid peer {}", r, peer));
    }
    return peer;
  };
  while (true) {
    bool progress = false, allDone = true;
    for (int r = 0; r < n; ++r) {
      if (phase[r] >= plans[r].size() || entered[r]) {
        allDone = allDone && phase[r] >= plans[r].size();
        continue;
      }
      allDone = false;
      const CudaPhasePlan& plan = plans[r][phase[r]];
      order.push_back({OneDeviceAction::kEnter, r, phase[r]});
      for (size_t i = 0; i < plan.sends.size(); ++i) {
        sends[r][peerOf(r, plan.sends[i].peer)].push_back({phase[r], i});
      }
      for (size_t i = 0; i < plan.receives.size(); ++i) {
        receives[peerOf(r, plan.receives[i].step.peer)][r].push_back({phase[r], i});
      }
      outstanding[r] = plan.sends.size() + plan.receives.size();
      entered[r] = true;
      progress = true;
    }
    if (allDone) break;
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        auto& out = sends[a][b];
        auto& in = receives[a][b];
        while (!out.empty() && !in.empty()) {
          const Step& send = plans[a][out.front().phase].sends[out.front().index];
          const Step& recv = plans[b][in.front().phase].receives[in.front().index].step;
          if (send.src.count != recv.dst.count) {
            throw InternalError(fmt::format(
                "rank {} (phase {}) sends {} elements to rank {}, whose receive (phase {}) "
                "expects {}",
                a, out.front().phase, send.src.count, b, in.front().phase, recv.dst.count));
          }
          OneDeviceAction t{OneDeviceAction::kTransfer, b, in.front().phase};
          t.from = a;
          t.fromPhase = out.front().phase;
          t.send = out.front().index;
          t.receive = in.front().index;
          order.push_back(t);
          out.pop_front();
          in.pop_front();
          --outstanding[a];
          --outstanding[b];
          progress = true;
        }
      }
    }
    for (int r = 0; r < n; ++r) {
      if (entered[r] && outstanding[r] == 0) {
        order.push_back({OneDeviceAction::kRecvReduces, r, phase[r]});
        entered[r] = false;
        ++phase[r];
        progress = true;
      }
    }
    if (!progress) {
      std::string waits;
      for (int r = 0; r < n; ++r) {
        if (phase[r] < plans[r].size()) {
          waits += fmt::format("{}rank {} in phase {}", waits.empty() ? "" : ", ", r, phase[r]);
        }
      }
      throw InternalError(fmt::format("the schedules deadlock: {} wait(s) for messages", waits));
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (!sends[a][b].empty() || !receives[a][b].empty()) {
        throw InternalError(fmt::format(
            "{} unmatched message(s) from rank {} to rank {} (phase {})",
            sends[a][b].size() + receives[a][b].size(), a, b,
            sends[a][b].empty() ? receives[a][b].front().phase : sends[a][b].front().phase));
      }
    }
  }
  return order;
}

void runSchedulesOnOneDevice(const std::vector<Schedule>& schedules,
                             const std::vector<DeviceSpans>& buffers,
                             const std::vector<char*>& staging, const CollArgs& args,
                             cudaStream_t s) {
  const int n = static_cast<int>(schedules.size());
  if (buffers.size() != schedules.size() || staging.size() != schedules.size()) {
    throw InternalError("runSchedulesOnOneDevice: one buffer set and staging per schedule");
  }
  std::vector<std::vector<CudaPhasePlan>> plans(n);
  for (int r = 0; r < n; ++r) {
    for (const auto& phase : schedules[r].phases) plans[r].push_back(planCudaPhase(phase));
  }
  for (const OneDeviceAction& a : orderForOneDevice(plans)) {
    const CudaPhasePlan& plan = plans[a.rank][a.phase];
    const DeviceSpans& at = buffers[a.rank];
    switch (a.kind) {
      case OneDeviceAction::kEnter: enqueueLocalSteps(plan, at, args.dtype, args.op, n, s); break;
      case OneDeviceAction::kRecvReduces:
        enqueueRecvReduces(plan, at, staging[a.rank], args.dtype, args.op, s);
        break;
      case OneDeviceAction::kTransfer: {
        const Step& send = plans[a.from][a.fromPhase].sends[a.send];
        const CudaPhasePlan::Receive& r = plan.receives[a.receive];
        if (r.step.dst.count == 0) break;
        char* into = r.step.kind == StepKind::kRecvReduce
                         ? staging[a.rank] + r.stagingOffset * at.elementBytes
                         : at.at(r.step.dst);
        checkCuda(cudaMemcpyAsync(into, buffers[a.from].at(send.src),
                                  r.step.dst.count * at.elementBytes, cudaMemcpyDeviceToDevice, s),
                  "cudaMemcpyAsync (one-device message)");
        break;
      }
    }
  }
}

CudaPhasePlan planCudaPhase(const Phase& phase) {
  CudaPhasePlan plan;
  for (const auto& step : phase.steps) {
    if (isLocal(step.kind)) {
      plan.local.push_back(step);
    } else if (step.kind == StepKind::kSend) {
      plan.sends.push_back(step);
    } else {
      CudaPhasePlan::Receive r{step, 0};
      if (step.kind == StepKind::kRecvReduce) {
        r.stagingOffset = plan.stagingCount;
        plan.stagingCount += step.dst.count;
      }
      plan.receives.push_back(r);
    }
  }
  return plan;
}

size_t cudaStagingCount(const Schedule& s) {
  size_t most = 0;
  for (const auto& phase : s.phases) most = std::max(most, planCudaPhase(phase).stagingCount);
  return most;
}

void checkScheduleForDevice(const Schedule& s, const CollArgs& args, int nranks) {
  if (s.sendCount < sendCount(args, nranks) || s.recvCount < recvCount(args, nranks)) {
    throw InternalError(
        fmt::format("schedule built for {} send / {} recv elements, the collective needs {} / {}",
                    s.sendCount, s.recvCount, sendCount(args, nranks), recvCount(args, nranks)));
  }
  for (size_t p = 0; p < s.phases.size(); ++p) {
    for (const auto& step : s.phases[p].steps) {
      int phase = static_cast<int>(p);
      switch (step.kind) {
        case StepKind::kCopy:
        case StepKind::kReduce:
          checkSpan(step.src, s, phase, "source");
          checkSpan(step.dst, s, phase, "destination");
          if (step.src.count != step.dst.count) {
            throw InternalError(
                fmt::format("schedule phase {}: source and destination sizes "
                            "differ ({} vs {})",
                            phase, step.src.count, step.dst.count));
          }
          break;
        case StepKind::kRecvReduce:
          checkSpan(step.src, s, phase, "source");
          checkSpan(step.dst, s, phase, "destination");
          if (step.src.count != step.dst.count) {
            throw InternalError(
                fmt::format("schedule phase {}: recv-reduce operand sizes differ", phase));
          }
          break;
        case StepKind::kSend: checkSpan(step.src, s, phase, "send"); break;
        case StepKind::kRecv:
        case StepKind::kScale: checkSpan(step.dst, s, phase, "destination"); break;
      }
      if ((step.kind == StepKind::kSend || step.kind == StepKind::kRecv ||
           step.kind == StepKind::kRecvReduce) &&
          (step.peer < 0 || step.peer >= nranks)) {
        throw InternalError(fmt::format("schedule phase {}: peer {} is not a rank of {}", phase,
                                        step.peer, nranks));
      }
    }
  }
}

std::unique_ptr<PreparedCollective> prepareCudaSchedule(Communicator& comm, const CollArgs& args,
                                                        Schedule schedule,
                                                        const VariantOptions& options) {
  if (auto why = gpuUnavailableReason()) throw EnvironmentError(*why);
  checkScheduleForDevice(schedule, args, comm.size());
  GpuOptions gpu = gpuOptionsFrom(options);
  Deadline d = Deadline::after(gpu.prepareTimeoutSeconds);
  int device = deviceForRank(comm);
  setThreadDevice(device);
  checkDistinctDevices(comm, device, d);
  auto nccl = NcclCommPool::forThisThread().acquire(comm, device, {}, d);
  return std::make_unique<CudaScheduleRun>(args, comm.size(), std::move(schedule), gpu, device,
                                           std::move(nccl));
}

VariantInfo makeCudaScheduleVariant(const AlgorithmInfo& algo, std::string name) {
  VariantInfo info;
  info.coll = algo.coll;
  info.name = std::move(name);
  info.backend = "hand";
  info.description = fmt::format("{} (CUDA executor, NCCL point-to-point)", algo.description);
  info.constraints = algo.constraints;
  info.cost = algo.cost;
  info.memory = MemoryKind::kDevice;
  info.allocator = [](const Communicator& comm) {
    return makeGpuAllocator(comm, MemoryKind::kDevice);
  };
  info.unsupported = [algo](Team& team, const CollArgs& args,
                            const VariantOptions& o) -> std::optional<std::string> {
    const Communicator& comm = team.comm();
    if (auto why = gpuUnavailableReason()) return why;
    if (!redOpValidFor(args.op, args.dtype)) {
      return fmt::format("{} is not defined for {}", redOpName(args.op), dataTypeName(args.dtype));
    }
    if (hasRoot(args.coll) && (args.root < 0 || args.root >= comm.size())) {
      return fmt::format("root {} is not a rank of {}", args.root, comm.size());
    }
    if (algo.unsupported) {
      if (auto why = algo.unsupported(comm.size(), args, algoOptions(args, o.schedule))) return why;
    }
    auto choice = chooseDevice(comm);
    if (choice.device < 0) return choice.reason;
    return std::nullopt;
  };
  info.prepare = [algo](Team& team, const CollArgs& args, const VariantOptions& o) {
    auto schedule =
        algo.build(team.rank(), team.size(), args, algoOptionsFor(team, args, o.schedule));
    return prepareCudaSchedule(team.comm(), args, std::move(schedule), o);
  };
  return info;
}

const VariantInfo* deviceScheduleVariant(Collective c, std::string_view name) {
  static const Registry devices = [] {
    Registry r;
    for (const AlgorithmInfo& algo : algorithms()) r.add(makeCudaScheduleVariant(algo, algo.name));
    return r;
  }();
  return devices.find(c, name);
}

}  // namespace cb
