// The NCCL backend variants (see NcclVariants.h).
//
// One call = one NCCL collective (or one group of sends and receives) on the rank's stream,
// between two CUDA events; the event time is the device time the engine reports. Buffer
// registration (-R): 1 registers the engine's buffers with ncclCommRegister the first time they
// are seen; 2 needs memory from ncclMemAlloc registered as symmetric windows
// (ncclCommWindowRegister, a collective call), so the prepared collective owns two such buffers
// and stages the engine's data through them with device copies outside the timed events.
#include "collectives/nccl/NcclVariants.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/DeviceCall.h"
#include "collectives/nccl/GpuBuffers.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/GpuOptions.h"
#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/NcclPointToPoint.h"
#include "collectives/nccl/NcclTuning.h"
#include "collectives/transport/ShmTransport.h"
#include "core/Error.h"

namespace cb {
namespace {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
constexpr bool kHaveWindows = true;
#else
constexpr bool kHaveWindows = false;
#endif

int ncclRuntimeVersion() {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

std::string describe(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "NCCL ncclAllReduce on device memory";
    case Collective::kAllGather: return "NCCL ncclAllGather on device memory";
    case Collective::kReduceScatter: return "NCCL ncclReduceScatter on device memory";
    case Collective::kBroadcast: return "NCCL ncclBroadcast on device memory";
    case Collective::kReduce: return "NCCL ncclReduce on device memory";
    case Collective::kAllToAll: return "NCCL grouped ncclSend/ncclRecv to every peer (nccl-tests)";
    case Collective::kSendRecv: return "NCCL ncclSend to rank+1 / ncclRecv from rank-1, grouped";
  }
  return "NCCL";
}

class NcclPrepared final : public PreparedCollective {
 public:
  NcclPrepared(const CollArgs& args, int nranks, const GpuOptions& options, int device,
               std::shared_ptr<NcclComm> nccl, Deadline setup)
      : args_(args),
        nranks_(nranks),
        options_(options),
        device_(device),
        dtype_(*toNcclDataType(args.dtype)),
        op_(toNcclRedOp(args.op).value_or(ncclSum)),
        sendBytes_(sendCount(args, nranks) * dataTypeSize(args.dtype)),
        recvBytes_(recvCount(args, nranks) * dataTypeSize(args.dtype)),
        nccl_(std::move(nccl)),
        runner_(device, options, nccl_) {
    if (options_.bufferRegistration == 2) {
      // The communicator's windows, registered once per run at the largest size (NcclWindows.h).
      windows_ =
          nccl_->windows(setup).ensure(std::max(sendBytes_, recvBytes_), options_.largestBytes);
    }
  }

  // One call on a one-element problem with the same type, op and root, so that NCCL's refusal of
  // forced settings ("no algorithm/protocol available", decided per collective and type, not
  // per size) surfaces at prepare time rather than in the middle of the timed loop.
  void probe(Deadline d) {
    if (args_.count == 0) return;
    CollArgs one = args_;
    one.count = 1;
    size_t elem = dataTypeSize(args_.dtype);
    DeviceBuffer send(device_, sendCount(one, nranks_) * elem);
    DeviceBuffer recv(device_, recvCount(one, nranks_) * elem);
    send.faultIn();
    CollArgs saved = args_;
    args_ = one;
    try {
      runner_.runOnce([&](cudaStream_t s) { enqueue(send.data(), recv.data(), s, d); }, d);
    } catch (...) {
      args_ = saved;
      throw;
    }
    args_ = saved;
  }

  ~NcclPrepared() override {
    if (!nccl_->usable()) return;
    try {
      setThreadDevice(device_);
    } catch (const Error&) {
      return;
    }
    cudaStreamSynchronize(runner_.stream());
  }

  void run(const void* send, void* recv, Deadline d) override {
    last_.reset();
    ScopedDevice on(device_);
    last_ = runner_.run(callFor(send, recv, {}, d), d);
  }

  void prepareBatch(const void* send, void* recv, int calls, BatchShift shift,
                    Deadline d) override {
    ScopedDevice on(device_);
    shift = shiftFor(shift);
    runner_.prepareBatch(callFor(send, recv, shift, d), calls, shift);
  }

  std::optional<double> runBatch(const void* send, void* recv, int calls, BatchShift shift,
                                 Deadline d) override {
    ScopedDevice on(device_);
    shift = shiftFor(shift);
    return runner_.runBatch(callFor(send, recv, shift, d), calls, shift, d);
  }

  std::optional<double> lastDeviceSeconds() const override { return last_; }

  std::optional<std::string> note() override {
    if (!NcclTuningLog::enabled() || nccl_->rank() != 0) return std::nullopt;
    auto lines = NcclTuningLog::drain();
    std::string algo, proto;
    for (const auto& [name, value] : nccl_->env()) {
      if (name == "NCCL_ALGO") algo = value;
      if (name == "NCCL_PROTO") proto = value;
    }
    auto choice = ncclChoiceFor(lines, args_.coll, args_.count * dataTypeSize(args_.dtype));
    std::string text = ncclChoiceNote(choice, algo, proto);
    if (text.empty()) return std::nullopt;
    return text;
  }

 private:
  void enqueue(const void* send, void* recv, cudaStream_t s, Deadline d) {
    size_t count = args_.count;
    switch (args_.coll) {
      case Collective::kAllReduce:
        nccl_->call("ncclAllReduce", d, [&](ncclComm_t c) {
          return ncclAllReduce(send, recv, count, dtype_, op_, c, s);
        });
        break;
      case Collective::kAllGather:
        nccl_->call("ncclAllGather", d,
                    [&](ncclComm_t c) { return ncclAllGather(send, recv, count, dtype_, c, s); });
        break;
      case Collective::kReduceScatter:
        nccl_->call("ncclReduceScatter", d, [&](ncclComm_t c) {
          return ncclReduceScatter(send, recv, count, dtype_, op_, c, s);
        });
        break;
      case Collective::kBroadcast:
        nccl_->call("ncclBroadcast", d, [&](ncclComm_t c) {
          return ncclBroadcast(send, recv, count, dtype_, args_.root, c, s);
        });
        break;
      case Collective::kReduce:
        nccl_->call("ncclReduce", d, [&](ncclComm_t c) {
          return ncclReduce(send, recv, count, dtype_, op_, args_.root, c, s);
        });
        break;
      case Collective::kAllToAll: {
        size_t chunk = count * dataTypeSize(args_.dtype);
        nccl_->call("ncclGroupStart", d, [](ncclComm_t) { return ncclGroupStart(); });
        for (int peer = 0; peer < nranks_; ++peer) {
          nccl_->call("ncclSend", d, [&](ncclComm_t c) {
            return ncclSend(static_cast<const char*>(send) + peer * chunk, count, dtype_, peer, c,
                            s);
          });
          nccl_->call("ncclRecv", d, [&](ncclComm_t c) {
            return ncclRecv(static_cast<char*>(recv) + peer * chunk, count, dtype_, peer, c, s);
          });
        }
        nccl_->call("ncclGroupEnd (alltoall)", d, [](ncclComm_t) { return ncclGroupEnd(); });
        break;
      }
      case Collective::kSendRecv: {
        int rank = nccl_->rank();
        nccl_->call("ncclGroupStart", d, [](ncclComm_t) { return ncclGroupStart(); });
        nccl_->call("ncclSend", d, [&](ncclComm_t c) {
          return ncclSend(send, count, dtype_, (rank + 1) % nranks_, c, s);
        });
        nccl_->call("ncclRecv", d, [&](ncclComm_t c) {
          return ncclRecv(recv, count, dtype_, (rank + nranks_ - 1) % nranks_, c, s);
        });
        nccl_->call("ncclGroupEnd (sendrecv)", d, [](ncclComm_t) { return ncclGroupEnd(); });
        break;
      }
    }
  }

  // -R 2 stages each call through the windows at their start: its calls are not moved.
  BatchShift shiftFor(BatchShift shift) const {
    return options_.bufferRegistration == 2 ? BatchShift{} : shift;
  }

  DeviceCall callFor(const void* send, void* recv, BatchShift shift, Deadline d) {
    DeviceCall call;
    if (options_.bufferRegistration == 2) {
      stageThroughWindows(call, send, recv, d);
      return call;
    }
    if (options_.bufferRegistration == 1) {
      // The whole range the batch's moved calls reach, as nccl-tests registers its buffers.
      size_t reach = shift.at(shift.steps - 1);
      registerOnce(const_cast<void*>(send), sendBytes_ + reach, d);
      registerOnce(recv, recvBytes_ + reach, d);
    }
    call.body = [this, send, recv, d](cudaStream_t s, size_t moved) {
      enqueue(static_cast<const char*>(send) + moved, static_cast<char*>(recv) + moved, s, d);
    };
    call.key = {send, recv};
    return call;
  }

  // Once per buffer and run: the communicator keeps the registration across points.
  void registerOnce(void* ptr, size_t bytes, Deadline d) {
    nccl_->registrations(d).ensure(ptr, bytes);
  }

  // Copies in (pre), runs on the windows (body, timed), copies the result out (post).
  void stageThroughWindows(DeviceCall& call, const void* send, void* recv, Deadline d) {
    auto* s = static_cast<const char*>(send);
    auto* r = static_cast<char*>(recv);
    char* a = windows_.a;
    char* b = windows_.b;
    bool overlap = s < r + recvBytes_ && r < s + sendBytes_ && sendBytes_ && recvBytes_;
    if (s == r) overlap = true;
    const char* inSend;
    char* inRecv;
    const char* copyFrom;
    size_t copyBytes;
    if (overlap) {  // in place: keep the layout (send and receive inside one range)
      const char* base = std::min<const char*>(s, r);
      size_t extent = std::max<const char*>(s + sendBytes_, r + recvBytes_) - base;
      if (extent > windows_.bytes) {
        throw InternalError(fmt::format("in-place range of {} bytes exceeds the {}-byte window",
                                        extent, windows_.bytes));
      }
      inSend = a + (s - base);
      inRecv = a + (r - base);
      copyFrom = base;
      copyBytes = extent;
    } else {
      inSend = a;
      inRecv = b;
      copyFrom = s;
      copyBytes = sendBytes_;
    }
    call.pre = [a, copyFrom, copyBytes](cudaStream_t st) {
      if (copyBytes) {
        checkCuda(cudaMemcpyAsync(a, copyFrom, copyBytes, cudaMemcpyDeviceToDevice, st),
                  "cudaMemcpyAsync (into the symmetric window)");
      }
    };
    call.body = [this, inSend, inRecv, d](cudaStream_t st, size_t) {
      enqueue(inSend, inRecv, st, d);
    };
    size_t outBytes = recvBytes_;
    call.post = [r, inRecv, outBytes](cudaStream_t st) {
      if (outBytes) {
        checkCuda(cudaMemcpyAsync(r, inRecv, outBytes, cudaMemcpyDeviceToDevice, st),
                  "cudaMemcpyAsync (out of the symmetric window)");
      }
    };
    call.key = {inSend, inRecv};
  }

  CollArgs args_;
  int nranks_;
  GpuOptions options_;
  int device_;
  ncclDataType_t dtype_;
  ncclRedOp_t op_;
  size_t sendBytes_;
  size_t recvBytes_;
  std::shared_ptr<NcclComm> nccl_;  // before runner_: the runner (and its watchdog) goes first
  DeviceCallRunner runner_;
  SymmetricWindows::Pair windows_{nullptr, nullptr, 0};  // -R 2: the communicator's windows
  std::optional<double> last_;
};

// Turns NCCL's refusal of forced settings into "unsupported" and remembers it for the column
// (NcclRefusals); anything else propagates.
template <class Fn>
auto refusalsAsUnsupported(const NcclEnv& env, const CollArgs& args, int registration, Fn&& fn) {
  try {
    return fn();
  } catch (const NcclCallError& e) {
    if (auto why = ncclRefusalReason(env, args, registration, e)) throw EnvironmentError(*why);
    throw;
  }
}

// A prepared collective whose run() maps refusals of forced settings to "unsupported".
class NcclPlanPrepared final : public PreparedCollective {
 public:
  NcclPlanPrepared(std::unique_ptr<PreparedCollective> inner, NcclEnv env, const CollArgs& args,
                   int registration)
      : inner_(std::move(inner)), env_(std::move(env)), args_(args), registration_(registration) {}
  void run(const void* send, void* recv, Deadline d) override {
    refusalsAsUnsupported(env_, args_, registration_, [&] { inner_->run(send, recv, d); });
  }
  void prepareBatch(const void* send, void* recv, int calls, BatchShift shift,
                    Deadline d) override {
    refusalsAsUnsupported(env_, args_, registration_,
                          [&] { inner_->prepareBatch(send, recv, calls, shift, d); });
  }
  std::optional<double> runBatch(const void* send, void* recv, int calls, BatchShift shift,
                                 Deadline d) override {
    return refusalsAsUnsupported(env_, args_, registration_,
                                 [&] { return inner_->runBatch(send, recv, calls, shift, d); });
  }
  std::optional<double> lastDeviceSeconds() const override { return inner_->lastDeviceSeconds(); }
  std::optional<std::string> note() override { return inner_->note(); }

 private:
  std::unique_ptr<PreparedCollective> inner_;
  NcclEnv env_;
  CollArgs args_;
  int registration_;
};

VariantInfo ncclVariant(Collective c, std::string name, std::string description, NcclEnv env) {
  VariantInfo v;
  v.coll = c;
  v.name = std::move(name);
  v.backend = "nccl";
  v.description = std::move(description);
  v.constraints = "one GPU per rank";
  v.memory = MemoryKind::kDevice;
  v.allocator = [](const Communicator& comm) {
    return makeGpuAllocator(comm, MemoryKind::kDevice);
  };
  v.unsupported = [](const Communicator& comm, const CollArgs& args, const VariantOptions& o) {
    return ncclUnsupportedReason(comm, args, o);
  };
  v.prepare = [env](Communicator& comm, const CollArgs& args, const VariantOptions& o) {
    return prepareNccl(comm, args, o, env);
  };
  v.deviceTransport = [](Team& team, const VariantOptions& o) {
    return makeNcclPointToPoint(team, gpuOptionsFrom(o).prepareTimeoutSeconds);
  };
  return v;
}

}  // namespace

std::optional<ncclDataType_t> toNcclDataType(DataType t) {
  switch (t) {
    case DataType::kInt8: return ncclInt8;
    case DataType::kUint8: return ncclUint8;
    case DataType::kInt32: return ncclInt32;
    case DataType::kUint32: return ncclUint32;
    case DataType::kInt64: return ncclInt64;
    case DataType::kUint64: return ncclUint64;
    case DataType::kHalf: return ncclFloat16;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kFloat: return ncclFloat32;
    case DataType::kDouble: return ncclFloat64;
  }
  return std::nullopt;
}

std::optional<ncclRedOp_t> toNcclRedOp(RedOp op) {
  switch (op) {
    case RedOp::kSum: return ncclSum;
    case RedOp::kProd: return ncclProd;
    case RedOp::kMax: return ncclMax;
    case RedOp::kMin: return ncclMin;
    case RedOp::kAvg: return ncclAvg;
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> ncclUnsupportedReason(const Communicator& comm, const CollArgs& args,
                                                 const VariantOptions& options) {
  if (auto why = gpuUnavailableReason()) return why;
  if (hasReduction(args.coll) && !toNcclRedOp(args.op)) {
    return fmt::format("NCCL has no bitwise reductions ({})", redOpName(args.op));
  }
  if (!toNcclDataType(args.dtype)) {
    return fmt::format("NCCL has no type {}", dataTypeName(args.dtype));
  }
  if (hasRoot(args.coll) && (args.root < 0 || args.root >= comm.size())) {
    return fmt::format("root {} is not a rank of {}", args.root, comm.size());
  }
  if (options.gpu.bufferRegistration == 2 && (!kHaveWindows || ncclRuntimeVersion() < 22700)) {
    return fmt::format("symmetric windows (-R 2) need NCCL >= 2.27 (built with {}, running {})",
                       NCCL_VERSION_CODE, ncclRuntimeVersion());
  }
  if (options.gpu.bufferRegistration == 1 && ncclRuntimeVersion() < 21900) {
    return "buffer registration (-R 1) needs NCCL >= 2.19";
  }
  auto choice = chooseDevice(comm);
  if (choice.device < 0) return choice.reason;
  return std::nullopt;
}

std::unique_ptr<PreparedCollective> prepareNccl(Communicator& comm, const CollArgs& args,
                                                const VariantOptions& options, const NcclEnv& env) {
  if (auto why = ncclUnsupportedReason(comm, args, options)) throw EnvironmentError(*why);
  GpuOptions gpu = gpuOptionsFrom(options);
  Deadline d = Deadline::after(gpu.prepareTimeoutSeconds);
  int device = deviceForRank(comm);
  setThreadDevice(device);  // this rank's thread drives this GPU, from now on
  checkDistinctDevices(comm, device, d);
  auto prepared = refusalsAsUnsupported(env, args, gpu.bufferRegistration, [&] {
    auto nccl = NcclCommPool::forThisThread().acquire(comm, device, env, d);
    auto p = std::make_unique<NcclPrepared>(args, comm.size(), gpu, device, std::move(nccl), d);
    if (!env.empty()) p->probe(d);
    return p;
  });
  if (env.empty()) return prepared;
  return std::make_unique<NcclPlanPrepared>(std::move(prepared), env, args, gpu.bufferRegistration);
}

std::optional<std::string> ncclRefusalReason(const NcclEnv& env, const CollArgs& args,
                                             int bufferRegistration, const NcclCallError& e) {
  if (env.empty() || !isNcclRefusal(e.code(), e.lastError())) return std::nullopt;
  std::string why = fmt::format("unsupported: NCCL refused {} for {} {}: {}", ncclEnvText(env),
                                collectiveName(args.coll), dataTypeName(args.dtype), e.what());
  NcclRefusals::process().remember(env, args, bufferRegistration, why);
  return why;
}

void registerNcclVariants(Registry& r) {
  for (Collective c : allCollectives()) r.add(ncclVariant(c, "nccl", describe(c), {}));
}

void registerNcclPlanVariants(Registry& r, const std::vector<NcclVariantSpec>& plan) {
  for (const auto& spec : plan) {
    for (Collective c : allCollectives()) {
      VariantInfo v = ncclVariant(
          c, spec.name, fmt::format("{}, forced {}", describe(c), ncclEnvText(spec.env)), spec.env);
      v.unsupported = [spec](Team& team, const CollArgs& args,
                             const VariantOptions& o) -> std::optional<std::string> {
        if (auto why = ncclUnsupportedReason(team.comm(), args, o)) return why;
        // Whether all ranks share one host: the team's host map knows (no message).
        return ncclPlanColumnUnsupported(spec, args, o.gpu.bufferRegistration,
                                         team.hosts().oneHost());
      };
      r.add(std::move(v));
    }
  }
}

}  // namespace cb
