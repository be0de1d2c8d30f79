// How subcommands plug into main: each cli/<Name>Command.cpp defines one setup function that adds
// its CLI11 subcommand and, when that subcommand is chosen, stores the action to run. main()
// parses, runs the action inside one error handler (one line, exit code by error kind).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace cb::cli {

using Action = std::function<int()>;  // returns the exit code

void setupRunCommand(CLI::App& app, Action& action);
void setupListCommand(CLI::App& app, Action& action);
void setupRunsCommand(CLI::App& app, Action& action);
void setupShowCommand(CLI::App& app, Action& action);
void setupImportCommand(CLI::App& app, Action& action);
void setupCompareCommand(CLI::App& app, Action& action);
void setupGateCommand(CLI::App& app, Action& action);
void setupHistoryCommand(CLI::App& app, Action& action);
void setupExportCommand(CLI::App& app, Action& action);
void setupDbCommand(CLI::App& app, Action& action);
void setupReportCommand(CLI::App& app, Action& action);
void setupP2pCommand(CLI::App& app, Action& action);
void setupProxyCommand(CLI::App& app, Action& action);
void setupTopoCommand(CLI::App& app, Action& action);

}  // namespace cb::cli
