// UCX transport (see UcxTransport.h).
//
// exchange() posts every receive, then every send (ucp_tag_recv_nbx / ucp_tag_send_nbx), and
// progresses the worker until all requests complete, polling their status. A reducing receive
// lands in a staging buffer kept between calls (grown, never shrunk) and is reduced into its
// destination as soon as it completes. Past the deadline, or on SIGINT/SIGTERM, the pending
// requests are cancelled and the transport refuses further use: the per-pair sequence numbers
// are no longer in step with the peers'.
#include "collectives/transport/UcxTransport.h"

#include <fmt/format.h>
#include <sched.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/Buffer.h"
#include "core/Clock.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Reduce.h"

namespace cb {
namespace {

// Tag = source rank in the high 24 bits, the pair's message sequence number in the low 40.
constexpr int kSeqBits = 40;
constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;
constexpr ucp_tag_t kFullMask = ~ucp_tag_t{0};
constexpr int kMaxRanks = 1 << 23;
constexpr size_t kStagingAlign = 64;
constexpr int kBusyPolls = 1000;  // idle polls before each check of deadline and signals
constexpr double kCloseSeconds = 2;

ucp_tag_t makeTag(int src, uint64_t seq) {
  return (static_cast<ucp_tag_t>(src) << kSeqBits) | (seq & kSeqMask);
}

[[noreturn]] void throwUcx(const std::string& what, ucs_status_t s) {
  throw UcxError(fmt::format("{}: {}", what, ucs_status_string(s)));
}

void checkUcx(ucs_status_t s, const char* what) {
  if (s != UCS_OK) throwUcx(what, s);
}

// A UCP context and worker (RAII).
class UcpWorker {
 public:
  UcpWorker() {
    ucp_config_t* config = nullptr;
    checkUcx(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    ucs_status_t s = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    checkUcx(s, "ucp_init");
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    s = ucp_worker_create(context_, &wp, &worker_);
    if (s != UCS_OK) {
      ucp_cleanup(context_);
      throwUcx("ucp_worker_create", s);
    }
  }
  ~UcpWorker() {
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
  }
  UcpWorker(const UcpWorker&) = delete;
  UcpWorker& operator=(const UcpWorker&) = delete;

  ucp_worker_h get() const { return worker_; }

  std::string address() const {
    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
    checkUcx(ucp_worker_query(worker_, &attr), "ucp_worker_query");
    std::string out(reinterpret_cast<const char*>(attr.address), attr.address_length);
    ucp_worker_release_address(worker_, attr.address);
    return out;
  }

 private:
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
};

struct Pending {
  void* request = nullptr;  // null once complete
  bool recv = false;
  size_t index = 0;  // into the sends or the receives
  ucs_status_t status = UCS_OK;
};

class UcxTransport final : public Transport {
 public:
  UcxTransport(Communicator& comm, const UcxOptions& o);
  ~UcxTransport() override;

  std::string_view name() const override { return "ucx"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override;

 private:
  void complete(Pending& p, std::span<const RecvOp> recvs, size_t length);
  void abandon();  // cancel and release every pending request
  void closeEndpoints();
  std::string pendingSummary(std::span<const SendOp> sends, std::span<const RecvOp> recvs) const;

  int rank_;
  int size_;
  std::unique_ptr<UcpWorker> worker_;
  std::vector<ucp_ep_h> eps_;
  std::vector<uint64_t> sendSeq_, recvSeq_;  // per peer
  // Reused by every exchange so a warmed-up call allocates nothing.
  std::vector<Pending> pending_;
  std::vector<size_t> stagingOffset_;
  HostBuffer staging_;
  bool broken_ = false;
};

UcxTransport::UcxTransport(Communicator& comm, const UcxOptions& o)
    : rank_(comm.rank()), size_(comm.size()) {
  if (size_ > kMaxRanks) {
    throw UsageError(fmt::format("the ucx transport supports up to {} ranks", kMaxRanks));
  }
  const Deadline d = Deadline::after(o.setupSeconds);
  // The first allgather carries each rank's worker address, or "!" and why it has none, so all
  // ranks fail together instead of waiting for a rank that never joins.
  std::string mine;
  try {
    worker_ = std::make_unique<UcpWorker>();
    mine = worker_->address();
  } catch (const Error& e) {
    mine = std::string("!") + e.what();
  }
  auto addresses = comm.allgatherStrings(mine, d);
  for (int r = 0; r < size_; ++r) {
    if (addresses[r].empty() || addresses[r][0] == '!') {
      throw UcxError(
          fmt::format("ucx transport on rank {}: {}", r,
                      addresses[r].empty() ? "no worker address" : addresses[r].substr(1)));
    }
  }
  std::string error;
  eps_.assign(size_, nullptr);
  try {
    for (int r = 0; r < size_ && error.empty(); ++r) {
      ucp_ep_params_t ep{};
      ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      ep.address = reinterpret_cast<const ucp_address_t*>(addresses[r].data());
      ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
      ucs_status_t s = ucp_ep_create(worker_->get(), &ep, &eps_[r]);
      if (s != UCS_OK) {
        eps_[r] = nullptr;
        error = fmt::format("ucp_ep_create to rank {}: {}", r, ucs_status_string(s));
      }
    }
    // Every rank learns whether every other one could reach all its peers.
    auto errors = comm.allgatherStrings(error, d);
    for (int r = 0; r < size_; ++r) {
      if (!errors[r].empty()) {
        throw UcxError(fmt::format("ucx transport on rank {}: {}", r, errors[r]));
      }
    }
  } catch (...) {
    closeEndpoints();  // the destructor won't run for a half-built object
    throw;
  }
  sendSeq_.assign(size_, 0);
  recvSeq_.assign(size_, 0);
}

UcxTransport::~UcxTransport() { closeEndpoints(); }

void UcxTransport::closeEndpoints() {
  if (!worker_) return;
  // Flush-close every endpoint (force-close after a failure), progressing for a bounded time:
  // a peer that is gone must not hang the destructor.
  std::vector<void*> closing;
  for (auto& ep : eps_) {
    if (!ep) continue;
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = broken_ ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    void* req = ucp_ep_close_nbx(ep, &p);
    if (req && !UCS_PTR_IS_ERR(req)) closing.push_back(req);
    ep = nullptr;
  }
  Deadline d = Deadline::after(kCloseSeconds);
  while (!closing.empty() && !d.expired()) {
    ucp_worker_progress(worker_->get());
    std::erase_if(closing, [](void* req) {
      if (ucp_request_check_status(req) == UCS_INPROGRESS) return false;
      ucp_request_free(req);
      return true;
    });
  }
  for (void* req : closing) ucp_request_free(req);
}

void UcxTransport::complete(Pending& p, std::span<const RecvOp> recvs, size_t length) {
  p.request = nullptr;
  if (p.status != UCS_OK) {
    throwUcx(fmt::format("ucx exchange on rank {}: {}", rank_, p.recv ? "receive" : "send"),
             p.status);
  }
  if (!p.recv) return;
  const RecvOp& r = recvs[p.index];
  if (length != r.bytes) {
    throw InternalError(fmt::format(
        "ucx exchange on rank {}: receive from rank {} expected {} bytes, the sender sent {} "
        "(mismatched schedules)",
        rank_, r.peer, r.bytes, length));
  }
  if (r.reduce) {
    const auto* incoming = static_cast<const std::byte*>(staging_.data()) + stagingOffset_[p.index];
    reduce(r.dtype, r.op, r.dst, r.local, incoming, r.bytes / dataTypeSize(r.dtype));
  }
}

void UcxTransport::exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                            Deadline d) {
  if (broken_) throw InternalError("ucx transport used again after an exchange failed");
  size_t staging = 0;
  stagingOffset_.assign(recvs.size(), 0);
  for (size_t i = 0; i < recvs.size(); ++i) {
    const RecvOp& r = recvs[i];
    if (r.peer < 0 || r.peer >= size_) {
      throw InternalError(fmt::format("ucx receive from rank {} outside 0..{}", r.peer, size_ - 1));
    }
    if (r.reduce) {
      if (r.bytes % dataTypeSize(r.dtype) != 0) {
        throw InternalError(fmt::format("reducing receive of {} bytes is not a whole number of {}",
                                        r.bytes, dataTypeName(r.dtype)));
      }
      stagingOffset_[i] = staging;
      staging += (r.bytes + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
    }
  }
  for (const auto& s : sends) {
    if (s.peer < 0 || s.peer >= size_) {
      throw InternalError(fmt::format("ucx send to rank {} outside 0..{}", s.peer, size_ - 1));
    }
  }
  if (staging > staging_.bytes()) {
    staging_ = HostBuffer(staging);
    staging_.faultIn();
  }

  pending_.assign(recvs.size() + sends.size(), Pending{});
  size_t left = 0;
  try {
    for (size_t i = 0; i < recvs.size(); ++i) {
      const RecvOp& r = recvs[i];
      Pending& p = pending_[i];
      p.recv = true;
      p.index = i;
      void* dst = r.reduce ? static_cast<std::byte*>(staging_.data()) + stagingOffset_[i] : r.dst;
      ucp_request_param_t prm{};
      // Always a request: UCX 1.13 leaves recv_info unset when a receive completes at once
      // (measured here), so the length is read from the request instead.
      prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
      prm.datatype = ucp_dt_make_contig(1);
      void* req = ucp_tag_recv_nbx(worker_->get(), dst, r.bytes,
                                   makeTag(r.peer, recvSeq_[r.peer]++), kFullMask, &prm);
      if (UCS_PTR_IS_ERR(req)) throwUcx("ucp_tag_recv_nbx", UCS_PTR_STATUS(req));
      p.request = req;
      ++left;
    }
    for (size_t i = 0; i < sends.size(); ++i) {
      const SendOp& s = sends[i];
      Pending& p = pending_[recvs.size() + i];
      p.index = i;
      ucp_request_param_t prm{};
      prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
      prm.datatype = ucp_dt_make_contig(1);
      void* req =
          ucp_tag_send_nbx(eps_[s.peer], s.data, s.bytes, makeTag(rank_, sendSeq_[s.peer]++), &prm);
      if (UCS_PTR_IS_ERR(req)) throwUcx("ucp_tag_send_nbx", UCS_PTR_STATUS(req));
      if (req) {
        p.request = req;
        ++left;
      }
    }
    int idle = 0;
    while (left) {
      bool progressed = ucp_worker_progress(worker_->get()) != 0;
      for (Pending& p : pending_) {
        if (!p.request) continue;
        ucs_status_t s;
        ucp_tag_recv_info_t info{};
        s = p.recv ? ucp_tag_recv_request_test(p.request, &info)
                   : ucp_request_check_status(p.request);
        if (s == UCS_INPROGRESS) continue;
        ucp_request_free(p.request);
        p.status = s;
        --left;
        progressed = true;
        complete(p, recvs, info.length);
      }
      if (progressed) {
        idle = 0;
        continue;
      }
      if (++idle % kBusyPolls) continue;
      if (interruptStopsWaits()) {
        throw InterruptedError(fmt::format("ucx exchange on rank {} interrupted by signal {}",
                                           rank_, interruptSignal()));
      }
      if (d.expired()) {
        d.check(fmt::format("ucx exchange on rank {} ({})", rank_, pendingSummary(sends, recvs)));
      }
      sched_yield();
    }
  } catch (...) {
    broken_ = true;
    abandon();
    throw;
  }
}

void UcxTransport::abandon() {
  for (Pending& p : pending_) {
    if (!p.request) continue;
    ucp_request_cancel(worker_->get(), p.request);
    ucp_request_free(p.request);  // UCX releases it once the cancellation completes
    p.request = nullptr;
  }
  ucp_worker_progress(worker_->get());
}

std::string UcxTransport::pendingSummary(std::span<const SendOp> sends,
                                         std::span<const RecvOp> recvs) const {
  std::string out;
  for (const Pending& p : pending_) {
    if (!p.request) continue;
    out += p.recv ? fmt::format("{}receive from rank {} ({} bytes)", out.empty() ? "" : ", ",
                                recvs[p.index].peer, recvs[p.index].bytes)
                  : fmt::format("{}send to rank {} ({} bytes)", out.empty() ? "" : ", ",
                                sends[p.index].peer, sends[p.index].bytes);
  }
  return out;
}

}  // namespace

std::optional<std::string> ucxUnavailable() {
  try {
    UcpWorker probe;
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  }
}

std::unique_ptr<Transport> makeUcxTransport(Communicator& comm, const UcxOptions& opts) {
  return std::make_unique<UcxTransport>(comm, opts);
}

}  // namespace cb
