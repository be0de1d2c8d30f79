// How subcommands plug into main: each cli/<Name>Command.cpp defines one setup function that adds
// its flags to its CLI11 subcommand and, when that subcommand is chosen, stores the action to
// run; cli/Commands.cpp holds the table of names, help lines and setup functions. main() parses,
// runs the action inside one error handler (one line, exit code by error kind).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "results/Store.h"

namespace cb::cli {

using Action = std::function<int()>;  // returns the exit code

// Adds every subcommand of the table to app.
void addCommands(CLI::App& app, Action& action);

// Once `sub` is the parsed subcommand, the action is run(*args): the flags' values are read
// after parsing, never while the options are declared.
template <class Args, class Run>
void runOnParse(CLI::App* sub, Action& action, std::shared_ptr<Args> args, Run run) {
  sub->callback([args, run, &action] { action = [args, run] { return run(*args); }; });
}

// --db, the SQLite database of every command that stores or reads runs (its default in the help).
inline CLI::Option* addDbOption(CLI::App* sub, std::string& db) {
  return sub->add_option("--db", db, "SQLite database")->capture_default_str();
}

// A duration flag in the one grammar of core/Size.h ("10", "10s", "500ms", "50us", "2min"),
// stored in `seconds`; a bare number is in seconds, or in microseconds with plainMicroseconds. A
// bad value fails the parse with one line naming the flag and the expected form. The help shows
// the current value of `seconds` as the default.
CLI::Option* addDurationOption(CLI::App* sub, const std::string& names, double& seconds,
                               const std::string& help, bool plainMicroseconds = false);

// --label, --since, --until and --fingerprint of the commands that read stored runs (runs,
// history, export); a flag given empty selects as if not given.
struct RunFilterFlags {
  std::string label, since, until, fingerprint;

  void add(CLI::App* sub) {
    sub->add_option("--label", label, "Only runs with this label");
    sub->add_option("--since", since, "Only runs started at or after this UTC date[Ttime]");
    sub->add_option("--until", until, "Only runs started up to this UTC date[Ttime], inclusive");
    sub->add_option("--fingerprint", fingerprint, "Only runs with this environment fingerprint");
  }
  // The store's filter of the given flags, keeping at most `limit` runs (0: all).
  RunFilter filter(int limit) const {
    RunFilter f;
    if (!label.empty()) f.label = label;
    if (!since.empty()) f.since = since;
    if (!until.empty()) f.until = until;
    if (!fingerprint.empty()) f.fingerprint = fingerprint;
    f.limit = limit;
    return f;
  }
  bool any() const {
    const RunFilter f = filter(0);
    return f.label || f.since || f.until || f.fingerprint;
  }
};

// A benchmark log's text for the importers (cli/ImportCommand.cpp): at most kMaxImportFileBytes,
// no NUL bytes, no line longer than the importers take; UsageError "import: FILE: ..." otherwise.
std::string readLogFile(const std::string& path);

void setupRunCommand(CLI::App* sub, Action& action);
void setupListCommand(CLI::App* sub, Action& action);
void setupRunsCommand(CLI::App* sub, Action& action);
void setupShowCommand(CLI::App* sub, Action& action);
void setupImportCommand(CLI::App* cmd, Action& action);
void setupCompareCommand(CLI::App* sub, Action& action);
void setupGateCommand(CLI::App* sub, Action& action);
void setupHistoryCommand(CLI::App* sub, Action& action);
void setupExportCommand(CLI::App* sub, Action& action);
void setupDbCommand(CLI::App* db, Action& action);
void setupReportCommand(CLI::App* sub, Action& action);
void setupP2pCommand(CLI::App* sub, Action& action);
void setupProxyCommand(CLI::App* sub, Action& action);
void setupTopoCommand(CLI::App* sub, Action& action);
void setupDiagCommand(CLI::App* diag, Action& action);
void setupReplayCommand(CLI::App* sub, Action& action);
void setupPredictCommand(CLI::App* sub, Action& action);

}  // namespace cb::cli
