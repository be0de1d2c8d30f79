// `collbench list`: every collective, its variants (hand-written algorithms with their one-line
// description, constraints and alpha-beta cost; vendor backends), the transports, and whether
// each can run in this world, with the reason when it can't.
#include <fmt/format.h>

#include "cli/Command.h"
#include "cli/Validate.h"
#include "collectives/Registry.h"
#include "collectives/Team.h"
#include "session/World.h"

namespace cb::cli {
namespace {

struct ListOptions {
  WorldOptions world;
  std::string transport;
  int ranksPerNode = 0;
};

int doList(const ListOptions& o) {
  checkTransportName(o.transport);
  checkRanksPerNode(o.ranksPerNode);
  runInWorld(o.world, [&](Communicator& comm) {
    Team team(comm);
    const auto& reg = Registry::builtin();
    VariantOptions vo;
    vo.schedule.transport = o.transport;
    vo.schedule.ranksPerNode = o.ranksPerNode;
    // Every rank evaluates usability (a GPU may be visible on some ranks only); rank 0 prints.
    std::vector<std::string> lines;
    for (Collective c : allCollectives()) {
      lines.push_back(fmt::format("{}:", collectiveName(c)));
      for (const auto* listed : reg.forCollective(c)) {
        // --transport cuda: judge the device twin that a run would use, not the host algorithm.
        const auto* v = variantOnTransport(listed, o.transport);
        CollArgs args{c, DataType::kFloat, RedOp::kSum, 0, 1024};
        auto why = v->unsupported ? v->unsupported(team, args, vo) : std::nullopt;
        // GPU variants are in the binary even where no device is: say "built" so users know
        // it is the machine, not the build.
        std::string state = !why                               ? "usable"
                            : v->memory == MemoryKind::kDevice ? "built, no usable device"
                                                               : "unusable";
        lines.push_back(
            fmt::format("  {:<14} {:<5} {:<11} {}", v->name, v->backend, state, v->description));
        if (!v->constraints.empty()) {
          lines.push_back(fmt::format("  {:<32} constraints: {}", "", v->constraints));
        }
        if (!v->cost.empty()) lines.push_back(fmt::format("  {:<32} cost: {}", "", v->cost));
        if (why) lines.push_back(fmt::format("  {:<32} why not here: {}", "", *why));
      }
    }
    lines.push_back("transports (hand-written algorithms; mpi-native: p2p only):");
    for (const auto& t : transports()) {
      const std::string name(t.name);
      auto why = team.transportUnsupported(name);
      lines.push_back(fmt::format("  {:<14} {}{}  {}", name, why ? "unusable: " + *why : "usable",
                                  name == team.defaultTransport() ? " (default here)" : "",
                                  t.description));
    }
    if (comm.rank() != 0) return;
    fmt::print(
        "# world: {} with {} ranks (a = latency per message, b = time per byte, g = time "
        "per reduced byte, S = the nccl-tests size of the collective)\n",
        worldKindName(comm.worldKind()), comm.size());
    for (const auto& l : lines) fmt::print("{}\n", l);
  });
  return 0;
}

}  // namespace

void setupListCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<ListOptions>();
  sub->add_option("--np", o->world.np, "Ranks of the local world to evaluate (default: cores)");
  sub->add_option("--transport", o->transport,
                  "Evaluate hand-written algorithms on this transport");
  sub->add_option("--ranks-per-node", o->ranksPerNode, "Emulated node size for hierarchical ones")
      ->check(CLI::PositiveNumber);
  runOnParse(sub, action, o, doList);
}

}  // namespace cb::cli
