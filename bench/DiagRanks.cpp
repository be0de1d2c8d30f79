#include "bench/DiagRanks.h"

#include <fmt/format.h>

#include <cstring>

#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "core/Clock.h"
#include "core/Collective.h"
#include "core/Error.h"
#include "core/SharedMemory.h"

namespace cb {

void ArrivalProbe::exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                            Deadline d) {
  if (first_ < 0) first_ = nowSeconds();
  inner_->exchange(sends, recvs, d);
}

DiagRanksResult runDiagRanks(Team& team, ArrivalProbe& probe, Transport& top,
                             const DiagRanksOptions& o) {
  Communicator& comm = team.comm();
  const int n = comm.size();
  if (n < 3) {
    throw UsageError(fmt::format(
        "diag ranks needs at least 3 ranks (this world has {}): a straggler is judged against "
        "the others",
        n));
  }
  CollArgs args;
  args.coll = Collective::kAllReduce;
  args.dtype = DataType::kFloat;
  args.op = RedOp::kSum;
  args.count = std::max<size_t>(static_cast<size_t>(o.bytes / 4), static_cast<size_t>(n));
  HostExecutor exec(top, ringAllReduce(comm.rank(), n, args, {}), args);
  SharedHostBuffer send(args.count * 4), recv(args.count * 4);
  auto* s = static_cast<float*>(send.data());
  for (size_t i = 0; i < args.count; ++i) s[i] = static_cast<float>((i + comm.rank()) % 7);
  recv.faultIn();
  auto deadline = [&] { return Deadline::after(o.timeoutSeconds); };
  for (int i = 0; i < o.warmup; ++i) {
    comm.barrier(deadline());
    exec.run(send.data(), recv.data(), deadline());
  }
  const size_t iters = static_cast<size_t>(o.iterations);
  std::vector<double> mine(2 * iters);
  for (size_t i = 0; i < iters; ++i) {
    comm.barrier(deadline());
    Deadline d = deadline();
    probe.arm();
    double t0 = nowSeconds();
    exec.run(send.data(), recv.data(), d);
    double t1 = nowSeconds();
    double first = probe.firstPost();
    mine[i] = (first < 0 ? t1 : first) - t0;
    mine[iters + i] = t1 - t0;
  }
  auto all = comm.allgatherBytes(mine.data(), mine.size() * sizeof(double), deadline());
  DiagRanksResult res;
  res.steps = 2 * (n - 1);
  if (comm.rank() != 0) return res;
  res.arrive.assign(static_cast<size_t>(n), std::vector<double>(iters));
  res.finish.assign(static_cast<size_t>(n), std::vector<double>(iters));
  for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
    const auto* p = reinterpret_cast<const double*>(all.data()) + r * 2 * iters;
    std::memcpy(res.arrive[r].data(), p, iters * sizeof(double));
    std::memcpy(res.finish[r].data(), p + iters, iters * sizeof(double));
  }
  res.verdict = judgeStragglers(res.arrive, res.finish, res.steps, o.suspect);
  return res;
}

}  // namespace cb
