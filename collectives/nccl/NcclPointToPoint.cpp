// NCCL point-to-point as a Transport (see NcclPointToPoint.h).
#include "collectives/nccl/NcclPointToPoint.h"

#include <fmt/format.h>
#include <nccl.h>

#include "collectives/nccl/DeviceCall.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/GpuOptions.h"
#include "collectives/nccl/NcclComm.h"
#include "core/Error.h"

namespace cb {
namespace {

class NcclPointToPoint final : public Transport {
 public:
  NcclPointToPoint(int rank, int size, int device, std::shared_ptr<NcclComm> nccl)
      : rank_(rank),
        size_(size),
        device_(device),
        nccl_(std::move(nccl)),
        runner_(device, GpuOptions{}, nccl_) {}

  std::string_view name() const override { return "nccl-p2p"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override {
    for (const auto& r : recvs) {
      if (r.reduce) {
        throw InternalError("NCCL point-to-point: a receive that reduces (use the CUDA executor)");
      }
    }
    if (sends.empty() && recvs.empty()) return;
    ScopedDevice on(device_);
    runner_.runOnce(
        [&](cudaStream_t s) {
          nccl_->call("ncclGroupStart", d, [](ncclComm_t) { return ncclGroupStart(); });
          for (const auto& x : sends) {
            if (x.bytes == 0) continue;
            nccl_->call("ncclSend", d, [&](ncclComm_t c) {
              return ncclSend(x.data, x.bytes, ncclUint8, x.peer, c, s);
            });
          }
          for (const auto& x : recvs) {
            if (x.bytes == 0) continue;
            nccl_->call("ncclRecv", d, [&](ncclComm_t c) {
              return ncclRecv(x.dst, x.bytes, ncclUint8, x.peer, c, s);
            });
          }
          nccl_->call("ncclGroupEnd (exchange)", d, [](ncclComm_t) { return ncclGroupEnd(); });
        },
        d);
  }

 private:
  int rank_, size_, device_;
  std::shared_ptr<NcclComm> nccl_;  // before runner_: the runner (and its watchdog) goes first
  DeviceCallRunner runner_;
};

}  // namespace

std::unique_ptr<Transport> makeNcclPointToPoint(Team& team, double setupSeconds) {
  if (auto why = gpuUnavailableReason()) throw EnvironmentError(*why);
  Communicator& comm = team.comm();
  Deadline d = Deadline::after(setupSeconds);
  int device = deviceForRank(comm);
  setThreadDevice(device);
  checkDistinctDevices(comm, device, d);
  auto nccl = NcclCommPool::forThisThread().acquire(comm, device, {}, d);
  return std::make_unique<NcclPointToPoint>(comm.rank(), comm.size(), device, std::move(nccl));
}

}  // namespace cb
