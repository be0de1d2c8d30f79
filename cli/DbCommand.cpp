// `collbench db check|prune|vacuum`: maintenance of the results database. check runs the full
// integrity and foreign-key checks and prints the schema version and counts (exit 1 when it
// finds damage); prune deletes old runs with everything they hold in one transaction; vacuum
// returns the freed space to the file system.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "cli/Command.h"
#include "core/Error.h"
#include "core/Size.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

struct DbArgs {
  std::string db = "collbench.db";
  int keepLast = -1;
  std::string before, label;
  bool dryRun = false;
};

int doCheck(const DbArgs& a) {
  Store store = Store::openForReading(a.db);
  DbCheckReport r = store.check();
  std::vector<std::string> statuses;
  for (const auto& [status, n] : r.runsByStatus)
    statuses.push_back(fmt::format("{} {}", status, n));
  fmt::print("# database      : {}\n", a.db);
  fmt::print("# schema version: {} (this collbench: {})\n", r.schemaVersion,
             Store::latestSchemaVersion());
  fmt::print("# size          : {}\n", formatSize(static_cast<uint64_t>(store.fileBytes())));
  fmt::print("# runs          : {}{}\n", r.runs,
             statuses.empty() ? "" : fmt::format(" ({})", fmt::join(statuses, ", ")));
  fmt::print("# results       : {}\n", r.results);
  fmt::print("# samples       : {} (per rank: {})\n", r.samples, r.rankSamples);
  if (r.problems.empty()) {
    fmt::print("integrity: ok\n");
    return 0;
  }
  fmt::print("integrity: {} problem(s)\n", r.problems.size());
  for (const std::string& p : r.problems) fmt::print("  {}\n", p);
  return 1;
}

int doPrune(const DbArgs& a) {
  PruneOptions o;
  o.keepLast = a.keepLast;
  if (a.keepLast < -1) throw UsageError(fmt::format("--keep-last {} is negative", a.keepLast));
  if (!a.before.empty()) o.before = a.before;
  if (!a.label.empty()) o.label = a.label;
  o.dryRun = a.dryRun;
  Store store = Store::open(a.db, false);
  PruneReport r = store.prune(o);
  if (r.runIds.empty()) {
    fmt::print("nothing to prune in '{}'\n", a.db);
    return 0;
  }
  fmt::print("{} {} run(s) ({} results with their samples): {}\n",
             a.dryRun ? "would delete" : "deleted", r.runIds.size(), r.results,
             fmt::join(r.runIds, ", "));
  if (!a.dryRun) fmt::print("run `collbench db vacuum` to return the space to the disk\n");
  return 0;
}

int doVacuum(const DbArgs& a) {
  Store store = Store::open(a.db, false);
  int64_t before = store.fileBytes();
  store.vacuum();
  int64_t after = store.fileBytes();
  fmt::print("vacuumed '{}': {} -> {}\n", a.db, formatSize(static_cast<uint64_t>(before)),
             formatSize(static_cast<uint64_t>(after)));
  return 0;
}

}  // namespace

void setupDbCommand(CLI::App* db, Action& action) {
  auto a = std::make_shared<DbArgs>();
  db->require_subcommand(1);
  auto dbOption = [&](CLI::App* sub) { addDbOption(sub, a->db); };
  auto* check = db->add_subcommand(
      "check", "Full integrity and foreign-key check, schema version and counts (exit 1 if bad)");
  dbOption(check);
  runOnParse(check, action, a, doCheck);

  auto* prune = db->add_subcommand(
      "prune",
      "Delete old runs with their results and samples (one transaction; running runs never)");
  dbOption(prune);
  prune->add_option("--keep-last", a->keepLast, "Keep the N newest runs, delete the others");
  prune->add_option("--before", a->before, "Delete runs started before this UTC date[Ttime]");
  prune->add_option("--label", a->label, "Only consider runs with this label");
  prune->add_flag("--dry-run", a->dryRun, "Only list what would be deleted");
  runOnParse(prune, action, a, doPrune);

  auto* vacuum = db->add_subcommand("vacuum", "Rebuild the file to return freed space");
  dbOption(vacuum);
  runOnParse(vacuum, action, a, doVacuum);
}

}  // namespace cb::cli
