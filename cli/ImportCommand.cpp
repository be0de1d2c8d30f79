// `collbench import FILE...`: turns existing nccl-tests (text or -J JSON), OSU micro-benchmarks
// and Intel MPI Benchmarks logs into runs in the database, so history starts before collbench.
// Every file is parsed before the database is opened: a parse error leaves the database as it
// was and exits 2 with one line naming FILE:LINE.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli/Command.h"
#include "core/Error.h"
#include "results/Store.h"
#include "results/import/Import.h"

namespace cb::cli {
namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string db = "collbench.db";
  std::string label;
  std::string format = "auto";
  std::string collective;
  int worldSize = 0;
  bool dryRun = false;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("import: {}: cannot read ({})", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(fmt::format("import: {}: read error", path));
  return text.str();
}

// "allreduce" or "alltoall,sendrecv": the collectives of a run in the order measured.
std::string collectivesOf(const ImportedRun& run) {
  std::vector<std::string> seen;
  for (const auto& r : run.results) {
    if (std::find(seen.begin(), seen.end(), r.collective) == seen.end()) {
      seen.push_back(r.collective);
    }
  }
  std::string out;
  for (const auto& c : seen) out += (out.empty() ? "" : ",") + c;
  return out;
}

std::string describe(const ImportedRun& run, const std::string& file) {
  const RunRecord& r = run.run;
  std::string world = r.worldSize > 0 ? fmt::format("world size {}", r.worldSize)
                                      : std::string("world size unknown");
  if (!r.hosts.empty()) {
    size_t hosts = 1 + static_cast<size_t>(std::count(r.hosts.begin(), r.hosts.end(), ','));
    world += fmt::format(" on {} host{}", hosts, hosts == 1 ? "" : "s");
  }
  size_t points = run.results.size();
  return fmt::format("{} {}, {} point{}, {}, {}  <- {}", r.source, collectivesOf(run), points,
                     points == 1 ? "" : "s", world, runStatusName(r.status), file);
}

int runImport(const ImportArgs& args) {
  ImportFormat format = parseImportFormat(args.format);
  std::string now = utcTimestamp();
  struct Parsed {
    std::string file;
    ImportedRun run;
  };
  std::vector<Parsed> parsed;
  for (const auto& file : args.files) {
    ImportOptions options;
    options.path = file;
    options.label = args.label;
    if (!args.collective.empty()) options.collective = args.collective;
    options.worldSize = args.worldSize;
    options.importedAt = now;
    for (auto& run : parseImport(readFile(file), format, options)) {
      parsed.push_back({file, std::move(run)});
    }
  }

  if (args.dryRun) {
    for (const auto& p : parsed) {
      fmt::print("would import: {}\n", describe(p.run, p.file));
      for (const auto& note : p.run.notes) fmt::print("  note: {}\n", note);
    }
    return 0;
  }

  Store store = Store::open(args.db);
  for (auto& p : parsed) {
    RunRecord begin = p.run.run;
    begin.status = RunStatus::kRunning;  // finished below, once every result is in
    int64_t id = store.beginRun(begin);
    try {
      for (auto& r : p.run.results) r.runId = id;
      store.addResults(p.run.results);
      store.finishRun(id, p.run.run.status);
    } catch (...) {
      // Do not leave a "running" run behind a failed write.
      try {
        store.finishRun(id, RunStatus::kInterrupted);
      } catch (const Error&) {
      }
      throw;
    }
    fmt::print("imported run {}: {}\n", id, describe(p.run, p.file));
  }
  return 0;
}

}  // namespace

void setupImportCommand(CLI::App& app, Action& action) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Import nccl-tests (text or -J JSON), OSU micro-benchmarks and Intel MPI Benchmarks logs "
      "as runs in the database.");
  cmd->add_option("files", args->files, "Log files to import")->required();
  cmd->add_option("--db", args->db, "SQLite database")->capture_default_str();
  cmd->add_option("--label", args->label, "Label of the imported runs");
  cmd->add_option("--format", args->format,
                  "auto (from the content), nccl-tests, nccl-tests-json, osu or imb")
      ->capture_default_str();
  cmd->add_option("--collective", args->collective,
                  "Collective of logs that do not name it (old nccl-tests tables)");
  cmd->add_option("--world-size", args->worldSize,
                  "Ranks of logs that do not state it (OSU collectives)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--dry-run", args->dryRun, "Parse and show what would be imported; write nothing");
  cmd->callback([&action, args] { action = [args] { return runImport(*args); }; });
}

}  // namespace cb::cli
