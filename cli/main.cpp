// collbench: entry point. Parses the command line with CLI11 (one file per subcommand), runs the
// chosen action, and maps every error to one line on stderr and an exit code
// (0 ok, 1 regression or verification failure, 2 usage or environment error, 130 SIGINT, 143
// SIGTERM).
// Error texts are printed through cb::printable: a message may quote a log line, a label or a
// path, and raw control or non-UTF-8 bytes would break the one line (or the terminal).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli/Command.h"
#include "core/Error.h"
#include "core/Text.h"

namespace cb::cli {
// After parsing: every given number by its option's type, every label (cli/OptionChecks.cpp).
void checkParsedOptions(const CLI::App& app);

// Before parsing: a word where a command is expected (the first, or the one after a command
// that needs one, as `db` and `diag`) must name one. CLI11 would answer "The following argument
// was not expected: bogus"; this names the word and the nearest commands.
void checkCommandWords(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return;  // an option: CLI11's to judge
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      if (sub->check_name(word)) next = sub;
    }
    if (next) {
      at = next;
      continue;
    }
    if (names.empty() || (at != &app && at->get_require_subcommand_min() == 0)) return;
    const std::string of = at == &app ? "" : fmt::format(" of '{}'", at->get_name());
    throw UsageError(fmt::format("unknown command '{}'{} (nearest: {}; all: collbench {}--help)",
                                 word, of, fmt::join(nearestNames(word, names), ", "),
                                 at == &app ? "" : at->get_name() + " "));
  }
}
}  // namespace cb::cli

int main(int argc, char** argv) {
  CLI::App app{
      "collbench: benchmarks and diagnoses collective communication (MPI, NCCL, hand-written "
      "algorithms), keeps every run in SQLite, gates CI on regressions.",
      "collbench"};
  app.set_version_flag("--version", std::string("collbench ") + COLLBENCH_VERSION);
  app.require_subcommand(0, 1);
  cb::cli::Action action;
  cb::cli::addCommands(app, action);
  try {
    cb::cli::checkCommandWords(app, argc, argv);
    app.parse(argc, argv);
    cb::cli::checkParsedOptions(app);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One clear line (CLI11's own message), usage exit code.
    std::fprintf(stderr, "collbench: %s\n", cb::printable(e.what()).c_str());
    return 2;
  } catch (const cb::Error& e) {
    std::fprintf(stderr, "collbench: %s\n", cb::printable(e.what()).c_str());
    return cb::exitCodeFor(e.kind());
  }
  try {
    if (!action) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
    return action();
  } catch (const cb::Error& e) {
    std::fprintf(stderr, "collbench: %s\n", cb::printable(e.what()).c_str());
    return cb::exitCodeFor(e.kind());
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "collbench: %s\n", cb::printable(e.what()).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "collbench: out of memory (lower -e or the number of ranks)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collbench: internal error: %s\n", cb::printable(e.what()).c_str());
    return 2;
  }
}
