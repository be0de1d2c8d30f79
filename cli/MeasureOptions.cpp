#include "cli/MeasureOptions.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/Command.h"
#include "core/Error.h"
#include "core/Size.h"

namespace cb::cli {

CLI::Option* addDurationOption(CLI::App* sub, const std::string& names, double& seconds,
                               const std::string& help, bool plainMicroseconds) {
  const std::string flag = names.substr(0, names.find(','));
  const double plain = plainMicroseconds ? 1e-6 : 1;
  return sub
      ->add_option_function<std::string>(
          names,
          [&seconds, flag, plain](const std::string& v) {
            try {
              seconds = parseDurationSeconds(v, plain);
            } catch (const UsageError& e) {
              throw UsageError(fmt::format("{} {}", flag, e.what()));
            }
          },
          help)
      ->type_name("DURATION")
      ->default_str(fmt::format("{:g}", seconds / plain));
}

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
  addDurationOption(
      sub, "-T,--timeout", o.timeout,
      std::string("Deadline for any single ") + timeoutWhat + " (seconds, or 500ms, 2min...)");
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
