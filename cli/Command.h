// How subcommands plug into main: each cli/<Name>Command.cpp defines one setup function that adds
// its flags to its CLI11 subcommand and, when that subcommand is chosen, stores the action to
// run; cli/Commands.cpp holds the table of names, help lines and setup functions. main() parses,
// runs the action inside one error handler (one line, exit code by error kind).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

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

}  // namespace cb::cli
