// `collbench runs`: the history kept in the database, newest first, one line per run (id,
// start, status, label, world, hosts, collectives measured, results, worst #wrong), filtered by
// label, date, fingerprint.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>

#include "adapters/TextTable.h"
#include "cli/Command.h"
#include "core/Error.h"
#include "core/Text.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

struct RunsOptions {
  std::string db = "collbench.db";
  RunFilterFlags select;
  int limit = 0;
};

// "2025-03-01T10:00:00Z" -> "2025-03-01 10:00:00" (the column title says UTC).
std::string shortTime(const std::string& iso) {
  std::string t = iso;
  if (t.size() > 10 && t[10] == 'T') t[10] = ' ';
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  return t;
}

// Many hosts would swamp the line: the first two, then how many more.
std::string shortHosts(const std::string& hosts) {
  std::vector<std::string> list = splitList(hosts);
  if (list.size() <= 2) return fmt::format("{}", fmt::join(list, ","));
  return fmt::format("{},{} +{}", list[0], list[1], list.size() - 2);
}

int doRuns(const RunsOptions& o) {
  const RunFilter filter = o.select.filter(o.limit);
  if (filter.limit < 0) throw UsageError(fmt::format("--limit {} is negative", filter.limit));

  Store store = Store::openForReading(o.db);
  std::vector<RunRecord> runs = store.listRuns(filter);
  if (runs.empty()) {
    fmt::print("no runs{} in '{}'\n", o.select.any() ? " match" : "", o.db);
    return 0;
  }
  using A = TextTable::Align;
  TextTable table({{"id", A::kRight},
                   {"started (UTC)"},
                   {"status"},
                   {"label"},
                   {"world"},
                   {"hosts"},
                   {"collectives"},
                   {"results", A::kRight},
                   {"#wrong", A::kRight}});
  for (const RunRecord& r : runs) {
    RunSummary s = store.summarizeRun(r.id);
    table.addRow({
        std::to_string(r.id),
        shortTime(r.startedAt),
        std::string(runStatusName(r.status)),
        r.label.empty() ? "-" : r.label,
        r.worldKind.empty() ? std::to_string(r.worldSize)
                            : fmt::format("{} x{}", r.worldKind, r.worldSize),
        r.hosts.empty() ? "-" : shortHosts(r.hosts),
        s.collectives.empty() ? "-" : fmt::format("{}", fmt::join(s.collectives, ",")),
        std::to_string(s.results),
        s.worstWrong < 0 ? "-" : std::to_string(s.worstWrong),
    });
  }
  fmt::print("{}", table.render());
  return 0;
}

}  // namespace

void setupRunsCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<RunsOptions>();
  addDbOption(sub, o->db);
  o->select.add(sub);
  sub->add_option("--limit", o->limit, "Show at most N runs (0: all)")->capture_default_str();
  runOnParse(sub, action, o, doRuns);
}

}  // namespace cb::cli
