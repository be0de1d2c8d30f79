// Publishes every hand-written algorithm as a registry variant (backend "hand") that runs its
// schedule with the host executor over the chosen transport.
#include <fmt/format.h>
#include <unistd.h>

#include "collectives/ScheduleVariants.h"

#include "collectives/Registry.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "collectives/transport/Transports.h"

namespace cb {

AlgoOptions algoOptions(const CollArgs& args, const VariantOptions& v) {
  AlgoOptions o;
  o.chunkElements = v.chunkBytes / dataTypeSize(args.dtype);
  o.ranksPerNode = v.ranksPerNode;
  return o;
}

int ranksPerHost(Communicator& comm, double seconds) {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  auto hosts = comm.allgatherStrings(name, Deadline::after(seconds));
  int n = static_cast<int>(hosts.size());
  int block = 1;
  while (block < n && hosts[block] == hosts[0]) ++block;
  if (n % block != 0) return n;
  for (int r = 0; r < n; ++r) {
    if (hosts[r] != hosts[r - r % block]) return n;
    if (r % block == 0 && r > 0 && hosts[r] == hosts[r - 1]) return n;
  }
  return block;
}

AlgoOptions algoOptionsFor(Communicator& comm, const CollArgs& args, const VariantOptions& v) {
  AlgoOptions ao = algoOptions(args, v);
  if (ao.ranksPerNode == 0) ao.ranksPerNode = ranksPerHost(comm, v.prepareTimeoutSeconds);
  return ao;
}

namespace {

class PreparedSchedule final : public PreparedCollective {
 public:
  PreparedSchedule(std::unique_ptr<Transport> t, Schedule s, const CollArgs& args)
      : transport_(std::move(t)), exec_(*transport_, std::move(s), args) {}
  void run(const void* send, void* recv, Deadline d) override { exec_.run(send, recv, d); }

 private:
  std::unique_ptr<Transport> transport_;
  HostExecutor exec_;
};

}  // namespace

void registerScheduleVariants(Registry& r) {
  for (const AlgorithmInfo& algo : algorithms()) {
    VariantInfo v;
    v.coll = algo.coll;
    v.name = algo.name;
    v.backend = "hand";
    v.description = algo.description;
    v.constraints = algo.constraints;
    v.cost = algo.cost;
    v.unsupported = [&algo](const Communicator& comm, const CollArgs& args,
                            const VariantOptions& opts) -> std::optional<std::string> {
      const double setup = opts.prepareTimeoutSeconds;
      std::string t = opts.transport.empty() ? defaultTransport(comm, setup) : opts.transport;
      if (auto why = transportUnsupported(t, comm, setup)) return why;
      if (!redOpValidFor(args.op, args.dtype)) {
        return fmt::format("{} is not defined for {}", redOpName(args.op),
                           dataTypeName(args.dtype));
      }
      if (algo.unsupported) return algo.unsupported(comm.size(), args, algoOptions(args, opts));
      return std::nullopt;
    };
    v.prepare = [&algo](Communicator& comm, const CollArgs& args, const VariantOptions& opts) {
      const TransportOptions to{opts.prepareTimeoutSeconds, opts.zeroCopyBytes};
      std::string t =
          opts.transport.empty() ? defaultTransport(comm, to.setupSeconds) : opts.transport;
      AlgoOptions ao = algoOptionsFor(comm, args, opts);
      auto schedule = algo.build(comm.rank(), comm.size(), args, ao);
      return std::unique_ptr<PreparedCollective>(
          new PreparedSchedule(makeTransport(t, comm, to), std::move(schedule), args));
    };
    r.add(std::move(v));
  }
}

}  // namespace cb
