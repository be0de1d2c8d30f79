#include "cli/MeasureOptions.h"

#include <CLI/CLI.hpp>

#include "cli/Command.h"

namespace cb::cli {

SessionOptions MeasureOptions::session() const {
  SessionOptions s;
  s.label = label;
  s.commandLine = commandLine();
  s.dbPath = noDb ? "" : db;
  s.transports.setupSeconds = timeout;
  s.world = world;
  s.strict = strict;
  return s;
}

void addMeasureOptions(CLI::App* sub, MeasureOptions& o, const char* timeoutWhat,
                       const std::string& npHelp, bool placement) {
  sub->add_option("-T,--timeout", o.timeout,
                  std::string("Deadline in seconds for any single ") + timeoutWhat)
      ->capture_default_str();
  addDbOption(sub, o.db);
  sub->add_flag("--no-db", o.noDb, "Do not store the run");
  sub->add_option("--label", o.label, "Label stored with the run (for history and gates)");
  sub->add_option("--np", o.world.np, npHelp);
  if (!placement) return;
  sub->add_option_function<std::string>(
         "--bind", [&o](const std::string& s) { o.world.bind = *parseBindPolicy(s); },
         "Local world: bind rank threads to a core or a NUMA node each, as mpirun --bind-to "
         "(none|core|numa|auto; auto: core when the ranks fit the cores this process may use, else "
         "none; default auto)")
      ->check(CLI::IsMember({"none", "core", "numa", "auto"}));
  sub->add_flag("--strict", o.strict,
                "Stop before measuring when the topology preflight finds anything (degraded "
                "links, ports down, hosts or ranks that differ); default: warn");
}

}  // namespace cb::cli
