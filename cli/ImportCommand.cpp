// `collbench import FILE...`: turns existing nccl-tests (text or -J JSON), OSU micro-benchmarks
// and Intel MPI Benchmarks logs into runs in the database, so history starts before collbench.
// Every file is parsed before the database is opened. A file that does not parse is reported with
// one line naming FILE:LINE and skipped; the others import, and the exit code (2) says some
// failed. A single file that fails leaves the database as it was.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "adapters/PeakJudge.h"
#include "cli/Command.h"
#include "core/Collective.h"
#include "core/DataType.h"
#include "core/Error.h"
#include "core/Text.h"
#include "results/PredictedShare.h"
#include "results/Store.h"
#include "results/import/Import.h"
#include "results/import/ImportSupport.h"

namespace cb::cli {
namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string db = "collbench.db";
  std::string label;
  std::string format = "auto";
  std::string collective;
  int worldSize = 0;
  std::string dtype, op;
  bool dryRun = false;
  std::string topology;  // the machine the logs ran on, to judge them against its bound
};

}  // namespace

// Reads at most kMaxImportFileBytes (a log larger than that is refused, and /dev/zero or a
// device stops at the first chunk: NUL bytes are not text). A line longer than the importers
// take (kMaxImportLineBytes, or kMaxImportJsonBytes in JSON) is refused as soon as it is read, so
// a 100 MB line costs one chunk of memory, not the file.
std::string readLogFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    throw UsageError(fmt::format("import: {}: cannot read ({})", path, std::strerror(errno)));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  std::string text;
  std::vector<char> chunk(1 << 16);
  size_t lineBytes = 0;
  int line = 1;
  enum { kUnknown, kText, kJson } kind = kUnknown;  // from the first byte that is not a space
  while (true) {
    size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    if (n == 0) break;
    if (std::memchr(chunk.data(), '\0', n) != nullptr) {
      throw UsageError(fmt::format("import: {}: NUL bytes: not a text log", path));
    }
    for (size_t i = 0; i < n; ++i) {
      const char c = chunk[i];
      if (kind == kUnknown && !std::isspace(static_cast<unsigned char>(c))) {
        kind = c == '{' ? kJson : kText;
      }
      if (c == '\n') {
        lineBytes = 0;
        ++line;
        continue;
      }
      // An MPI launcher prefix is removed later: the importers' cap with a margin for it.
      const size_t cap = kind == kJson ? kMaxImportJsonBytes : kMaxImportLineBytes;
      if (++lineBytes > cap + 64) {
        throw UsageError(fmt::format(
            "import: {}:{}: line longer than {} bytes: not a benchmark log line", path, line, cap));
      }
    }
    if (text.size() + n > kMaxImportFileBytes) {
      throw UsageError(fmt::format("import: {}: larger than {} MiB: not a benchmark log", path,
                                   kMaxImportFileBytes >> 20));
    }
    text.append(chunk.data(), n);
  }
  if (std::ferror(f)) throw UsageError(fmt::format("import: {}: read error", path));
  return text;
}

namespace {

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
  if (!args.collective.empty()) {
    // collbench's collectives and the other nccl-tests binaries; anything else would be stored
    // as a collective nobody can query.
    std::vector<std::string> known;
    for (Collective c : allCollectives()) known.emplace_back(collectiveName(c));
    for (const char* extra : {"gather", "scatter", "hypercube"}) known.emplace_back(extra);
    std::string normalized = importer::normalizeCollective(args.collective);
    if (std::find(known.begin(), known.end(), normalized) == known.end()) {
      throw UsageError(fmt::format("--collective '{}' is not one of {}", args.collective,
                                   fmt::join(known, ", ")));
    }
  }
  if (!args.dtype.empty()) {
    try {
      (void)parseDataType(args.dtype);
    } catch (const UsageError&) {
      throw UsageError(fmt::format("--dtype '{}' is not a data type collbench knows", args.dtype));
    }
  }
  if (!args.op.empty()) {
    try {
      (void)parseRedOp(args.op);
    } catch (const UsageError&) {
      throw UsageError(fmt::format("--op '{}' is not a reduction collbench knows", args.op));
    }
  }
  std::optional<MachineTopology> machine;
  if (!args.topology.empty()) machine = loadTopologyFile(args.topology);
  std::string now = utcTimestamp();
  struct Parsed {
    std::string file;
    ImportedRun run;
  };
  std::vector<Parsed> parsed;
  // Every file is parsed first; a bad one is reported (one line) and skipped, the others import.
  int failed = 0;
  for (const auto& file : args.files) {
    ImportOptions options;
    options.path = file;
    options.label = args.label;
    if (!args.collective.empty()) options.collective = args.collective;
    options.worldSize = args.worldSize;
    if (!args.dtype.empty()) options.dtype = args.dtype;
    if (!args.op.empty()) options.op = args.op;
    options.importedAt = now;
    try {
      for (auto& run : parseImport(readLogFile(file), format, options)) {
        judgeImport(run, machine ? &*machine : nullptr, args.topology);
        parsed.push_back({file, std::move(run)});
      }
    } catch (const UsageError& e) {
      if (args.files.size() == 1) throw;
      fmt::print(stderr, "collbench: {}\n", printable(e.what()));
      ++failed;
    }
  }
  auto finish = [&] {
    if (failed == 0) return 0;
    std::fflush(stdout);
    fmt::print(stderr, "collbench: import: {} of {} file(s) failed (see above); the others {}\n",
               failed, args.files.size(), args.dryRun ? "would import" : "were imported");
    return 2;
  };

  if (args.dryRun) {
    for (const auto& p : parsed) {
      fmt::print("would import: {}\n", describe(p.run, p.file));
      for (const auto& note : p.run.notes) fmt::print("  note: {}\n", note);
    }
    return finish();
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
    for (const auto& share : predictedShares(store, p.run.run.worldSize, p.run.results, id)) {
      fmt::print("  {}\n", predictedShareLine(share));
    }
    for (const auto& note : p.run.notes) {
      // What was inferred is said where the user looks (the rest is in `collbench show`).
      if (note.find("inferred") != std::string::npos || startsWith(note, "verdict ")) {
        fmt::print("  note: {}\n", note);
      }
    }
  }
  return finish();
}

}  // namespace

void setupImportCommand(CLI::App* cmd, Action& action) {
  auto args = std::make_shared<ImportArgs>();
  cmd->add_option("files", args->files, "Log files to import")->required();
  addDbOption(cmd, args->db);
  cmd->add_option("--label", args->label, "Label of the imported runs");
  cmd->add_option(
         "--format", args->format,
         "auto (from the content), nccl-tests, nccl-tests-json, osu, imb or nccl-inspector")
      ->capture_default_str();
  cmd->add_option("--collective", args->collective,
                  "Collective of logs that do not name it (old nccl-tests tables)");
  cmd->add_option("--world-size", args->worldSize,
                  "Ranks of logs that do not state it (OSU collectives)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", args->dtype,
                  "Data type of logs that do not state it (NCCL Inspector), so they compare with "
                  "runs that do");
  cmd->add_option("--op", args->op, "Reduction of logs that do not state it (NCCL Inspector)");
  cmd->add_flag("--dry-run", args->dryRun, "Parse and show what would be imported; write nothing");
  cmd->add_option("--topology", args->topology,
                  "The machine the logs ran on (hwloc XML or collbench topology JSON): their "
                  "figures are judged against its bound instead of the log's device lines");
  runOnParse(cmd, action, args, runImport);
}

}  // namespace cb::cli
