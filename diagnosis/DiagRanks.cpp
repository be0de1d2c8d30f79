#include "diagnosis/DiagRanks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "core/Clock.h"
#include "core/Collective.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/SharedMemory.h"

namespace cb {

void ArrivalProbe::exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                            Deadline d) {
  if (first_ < 0) first_ = nowSeconds();
  inner_->exchange(sends, recvs, d);
}

namespace {

// The ring's other direction without another algorithm: the ring runs over virtual ranks
// v = (n - r) mod n, so "send to v + 1" reaches real rank r - 1. The map is its own inverse.
class ReversedRing final : public Transport {
 public:
  explicit ReversedRing(Transport& inner) : inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  int rank() const override { return flip(inner_.rank()); }
  int size() const override { return inner_.size(); }
  uint64_t zeroCopySends() const override { return inner_.zeroCopySends(); }
  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override {
    sends_.assign(sends.begin(), sends.end());
    recvs_.assign(recvs.begin(), recvs.end());
    for (SendOp& op : sends_) op.peer = flip(op.peer);
    for (RecvOp& op : recvs_) op.peer = flip(op.peer);
    inner_.exchange(sends_, recvs_, d);
  }

 private:
  int flip(int r) const { return (size() - r) % size(); }
  Transport& inner_;
  std::vector<SendOp> sends_;
  std::vector<RecvOp> recvs_;
};

}  // namespace

DiagRanksResult runDiagRanks(Team& team, ArrivalProbe& probe, Transport& top,
                             const DiagRanksOptions& o) {
  Communicator& comm = team.comm();
  const int n = comm.size();
  requireRanks(n, 3, "diag ranks", "a straggler is judged against the others");
  CollArgs args;
  args.coll = Collective::kAllReduce;
  args.dtype = DataType::kFloat;
  args.op = RedOp::kSum;
  args.count = std::max<size_t>(static_cast<size_t>(o.bytes / 4), static_cast<size_t>(n));
  ReversedRing reversed(top);
  HostExecutor forward(top, ringAllReduce(comm.rank(), n, args, {}), args);
  HostExecutor backward(reversed, ringAllReduce(reversed.rank(), n, args, {}), args);
  SharedHostBuffer send(args.count * 4), recv(args.count * 4);
  auto* s = static_cast<float*>(send.data());
  for (size_t i = 0; i < args.count; ++i) s[i] = static_cast<float>((i + comm.rank()) % 7);
  recv.faultIn();
  auto deadline = [&] { return Deadline::after(o.timeoutSeconds); };
  for (int i = 0; i < o.warmup; ++i) {
    for (HostExecutor* exec : {&forward, &backward}) {
      comm.barrier(deadline());
      exec->run(send.data(), recv.data(), deadline());
    }
  }
  // The directions alternate call by call, so what drifts during the run reaches both alike.
  const size_t iters = static_cast<size_t>(o.iterations);
  std::vector<double> mine(4 * iters);  // arrive, finish forward; arrive, finish backward
  const CpuUse cpuBefore = readCpuUse();
  for (size_t i = 0; i < iters; ++i) {
    stopIfInterrupted(comm, deadline());  // the iteration's agreed stop point
    for (size_t dir = 0; dir < 2; ++dir) {
      comm.barrier(deadline());
      Deadline d = deadline();
      probe.arm();
      double t0 = nowSeconds();
      (dir == 0 ? forward : backward).run(send.data(), recv.data(), d);
      double t1 = nowSeconds();
      double first = probe.firstPost();
      mine[2 * dir * iters + i] = (first < 0 ? t1 : first) - t0;
      mine[(2 * dir + 1) * iters + i] = t1 - t0;
    }
  }
  // Verified once per direction, untimed: values are small integers, so every order of the float
  // sum gives them exactly. Every rank learns of a wrong result and fails alike.
  std::string wrong;
  for (HostExecutor* exec : {&forward, &backward}) {
    comm.barrier(deadline());
    std::fill_n(static_cast<float*>(recv.data()), args.count, -1.0f);
    exec->run(send.data(), recv.data(), deadline());
    const auto* got = static_cast<const float*>(recv.data());
    for (size_t i = 0; i < args.count && wrong.empty(); ++i) {
      float want = 0;
      for (int r = 0; r < n; ++r) want += static_cast<float>((i + static_cast<size_t>(r)) % 7);
      if (got[i] != want) {
        wrong = fmt::format(
            "diag ranks: the {} ring's allreduce returned {} at element {} on rank {} (want {})",
            exec == &forward ? "forward" : "backward", got[i], i, comm.rank(), want);
      }
    }
  }
  for (const std::string& w : comm.allgatherStrings(wrong, deadline())) {
    if (!w.empty()) throw VerificationError(w);
  }
  auto all = comm.allgatherBytes(mine.data(), mine.size() * sizeof(double), deadline());
  DiagRanksResult res;
  res.cpu = gatherCpuContention(comm, cpuBefore, team.hosts().hostOfRank, deadline());
  res.steps = 2 * (n - 1);
  if (comm.rank() != 0) return res;
  for (auto* series : {&res.arrive, &res.finish, &res.arriveBackward, &res.finishBackward}) {
    series->assign(static_cast<size_t>(n), std::vector<double>(iters));
  }
  for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
    const auto* p = reinterpret_cast<const double*>(all.data()) + r * 4 * iters;
    std::memcpy(res.arrive[r].data(), p, iters * sizeof(double));
    std::memcpy(res.finish[r].data(), p + iters, iters * sizeof(double));
    std::memcpy(res.arriveBackward[r].data(), p + 2 * iters, iters * sizeof(double));
    std::memcpy(res.finishBackward[r].data(), p + 3 * iters, iters * sizeof(double));
  }
  res.verdict = judgeRingStragglers(res.arrive, res.finish, res.arriveBackward, res.finishBackward,
                                    res.steps, o.suspect);
  return res;
}

}  // namespace cb
