#include "cli/PlacementOptions.h"

#include <CLI/CLI.hpp>

namespace cb::cli {

void addPlacementOptions(CLI::App* sub, WorldOptions& world, bool& strict) {
  sub->add_option_function<std::string>(
         "--bind", [&world](const std::string& s) { world.bind = *parseBindPolicy(s); },
         "Local world: bind rank threads to a core or a NUMA node each, as mpirun --bind-to "
         "(none|core|numa|auto; auto: core when the ranks fit the cores, else none; default none)")
      ->check(CLI::IsMember({"none", "core", "numa", "auto"}));
  sub->add_flag("--strict", strict,
                "Stop before measuring when the topology preflight finds anything (degraded "
                "links, ports down, hosts or ranks that differ); default: warn");
}

}  // namespace cb::cli
