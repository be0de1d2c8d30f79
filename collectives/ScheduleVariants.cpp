// Publishes every hand-written algorithm as a registry variant (backend "hand") that runs its
// schedule with the host executor over the chosen transport.
#include <fmt/format.h>

#include "collectives/ScheduleVariants.h"

#include "collectives/Registry.h"
#include "collectives/Team.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"

namespace cb {

AlgoOptions algoOptions(const CollArgs& args, const ScheduleOptions& v) {
  AlgoOptions o;
  o.chunkElements = v.chunkBytes / dataTypeSize(args.dtype);
  o.ranksPerNode = v.ranksPerNode;
  return o;
}

AlgoOptions algoOptionsFor(const Team& team, const CollArgs& args, const ScheduleOptions& v) {
  AlgoOptions ao = algoOptions(args, v);
  if (ao.ranksPerNode == 0) ao.ranksPerNode = team.hosts().ranksPerHost();
  return ao;
}

namespace {

// The transport belongs to the team (set up once per run and cached): a prepared schedule only
// borrows it, so preparing a variant for another size or placement costs no set-up.
class PreparedSchedule final : public PreparedCollective {
 public:
  PreparedSchedule(Transport& t, Schedule s, const CollArgs& args) : exec_(t, std::move(s), args) {}
  void run(const void* send, void* recv, Deadline d) override { exec_.run(send, recv, d); }

 private:
  HostExecutor exec_;
};

const std::string& transportOf(Team& team, const VariantOptions& opts) {
  return opts.schedule.transport.empty() ? team.defaultTransport() : opts.schedule.transport;
}

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
    v.unsupported = [&algo](Team& team, const CollArgs& args,
                            const VariantOptions& opts) -> std::optional<std::string> {
      if (auto why = team.transportUnsupported(transportOf(team, opts))) return why;
      if (!redOpValidFor(args.op, args.dtype)) {
        return fmt::format("{} is not defined for {}", redOpName(args.op),
                           dataTypeName(args.dtype));
      }
      if (algo.unsupported)
        return algo.unsupported(team.size(), args, algoOptions(args, opts.schedule));
      return std::nullopt;
    };
    v.prepare = [&algo](Team& team, const CollArgs& args, const VariantOptions& opts) {
      Transport& transport = team.transport(transportOf(team, opts));
      auto schedule =
          algo.build(team.rank(), team.size(), args, algoOptionsFor(team, args, opts.schedule));
      return std::unique_ptr<PreparedCollective>(
          new PreparedSchedule(transport, std::move(schedule), args));
    };
    r.add(std::move(v));
  }
}

}  // namespace cb
