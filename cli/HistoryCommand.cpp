// `collbench history CASE...`: one metric of the matching cases over the stored runs, oldest
// first, each case as a table with a text sparkline, filtered by label, date and fingerprint.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "adapters/TextTable.h"
#include "cli/Command.h"
#include "core/Error.h"
#include "results/Compare.h"
#include "results/Store.h"

namespace cb::cli {
namespace {

struct HistoryArgs {
  std::vector<std::string> cases;
  std::string db = "collbench.db";
  std::string metric = "busbw";
  RunFilterFlags select;
  int limit = 0;
};

constexpr const char* kCaseSyntax =
    "CASE syntax: collective:variant:dtype:op:size:placement:nranks[:root=R], e.g.\n"
    "  allreduce:ring/local:float:sum:1M:out:2\n"
    "Trailing parts may be left out and any part may be * or empty, matching anything:\n"
    "  allreduce                   every allreduce case\n"
    "  allreduce:ring/local        every size, dtype, op... of one variant\n"
    "  allreduce::float:sum:1M     every variant at 1 MiB\n"
    "  allreduce::::64K-4M:in      a size range (as --sizes), in-place only\n"
    "Sizes take binary suffixes (K, M, G). Several CASEs show every case matching any.";

// Eight levels of a unicode sparkline, low to high; a space for an unknown value.
std::string sparkline(const std::vector<std::optional<double>>& values) {
  static constexpr const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::vector<double> known;
  for (const auto& v : values) {
    if (v) known.push_back(*v);
  }
  if (known.empty()) return "";
  auto [lo, hi] = std::minmax_element(known.begin(), known.end());
  std::string out;
  for (const auto& v : values) {
    if (!v) {
      out += ' ';
      continue;
    }
    int level = *hi > *lo ? static_cast<int>(std::lround((*v - *lo) / (*hi - *lo) * 7)) : 3;
    out += kBars[std::clamp(level, 0, 7)];
  }
  return out;
}

// Two decimals, but three significant digits below 1 (0.0015 GB/s must not print as 0.00).
std::string number(double v) {
  return std::abs(v) >= 1 || v == 0 ? fmt::format("{:.2f}", v) : fmt::format("{:.3g}", v);
}

std::string shortTime(const std::string& iso) {
  std::string t = iso;
  if (t.size() > 10 && t[10] == 'T') t[10] = ' ';
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  return t;
}

void checkStored(const Store& store, std::string_view column,
                 const std::optional<std::string>& value) {
  if (!value) return;
  auto stored = store.storedValues(column);
  if (std::find(stored.begin(), stored.end(), *value) != stored.end()) return;
  throw UsageError(
      fmt::format("no {} '{}' in the database (it has: {})", column, *value,
                  stored.empty() ? "no results" : fmt::format("{}", fmt::join(stored, ", "))));
}

int doHistory(const HistoryArgs& a) {
  Metric metric = parseMetric(a.metric);
  if (a.limit < 0) throw UsageError(fmt::format("--limit {} is negative", a.limit));
  std::vector<CasePattern> patterns;
  for (const std::string& text : a.cases) patterns.push_back(CasePattern::parse(text));
  const RunFilter filter = a.select.filter(a.limit);

  Store store = Store::openForReading(a.db);
  // A collective or variant the database has never stored is a typo, not an empty history.
  for (const CasePattern& p : patterns) {
    checkStored(store, "collective", p.collective);
    checkStored(store, "variant", p.variant);
  }
  // Per case, the points oldest first; a result matching several patterns counts once.
  std::map<CaseKey, std::vector<HistoryPoint>> byCase;
  std::set<int64_t> seen;
  for (const CasePattern& p : patterns) {
    for (HistoryPoint& point : store.history(p, filter)) {
      if (!seen.insert(point.result.id).second) continue;
      byCase[CaseKey::of(point.result)].push_back(std::move(point));
    }
  }
  if (byCase.empty()) {
    fmt::print("no stored results match {} in '{}'\n", fmt::join(a.cases, " "), a.db);
    return 0;
  }
  const bool busbw = metric == Metric::kBusbw;
  using A = TextTable::Align;
  bool first = true;
  for (auto& [key, points] : byCase) {
    std::stable_sort(points.begin(), points.end(), [](const auto& x, const auto& y) {
      return std::tie(x.run.startedAt, x.run.id) < std::tie(y.run.startedAt, y.run.id);
    });
    // Unknown values (NULL: a log without that column) are shown as "-" and skipped.
    std::vector<std::optional<double>> values;
    // One rank has no busbw (nccl-tests' factor is 0 there): its algbw is shown, as gate compares.
    const bool algbw = busbw && std::all_of(points.begin(), points.end(),
                                            [](const auto& p) { return busbwByAlgbw(p.result); });
    for (const HistoryPoint& p : points) {
      const ResultRecord& r = p.result;
      values.push_back(algbw         ? r.algbw
                       : busbw       ? r.busbw
                       : r.timeKnown ? std::optional<double>(r.timeUs)
                                     : std::nullopt);
    }
    const std::string shown = algbw ? "algbw" : std::string(metricName(metric));
    auto change = [](const std::optional<double>& from, const std::optional<double>& to) {
      return from && to && *from > 0 ? std::optional<double>((*to - *from) / *from * 100)
                                     : std::nullopt;
    };
    std::string statistic = points.back().result.statistic;
    auto overall = values.size() > 1 ? change(values.front(), values.back()) : std::nullopt;
    std::string trend = overall ? fmt::format(", {:+.1f}% first to last", *overall) : "";
    fmt::print("{}# {}   {} ({}{})   {}   {} run(s){}\n", first ? "" : "#\n", key.toString(), shown,
               metricUnit(metric),
               algbw   ? ": one rank has no busbw"
               : busbw ? ""
                       : ", " + statistic,
               sparkline(values), points.size(), trend);
    first = false;
    TextTable table({{"run", A::kRight},
                     {"started (UTC)"},
                     {"label"},
                     {shown, A::kRight},
                     {"vs prev", A::kRight},
                     {"iters", A::kRight},
                     {"cv", A::kRight},
                     {"fingerprint"}});
    for (size_t i = 0; i < points.size(); ++i) {
      const HistoryPoint& p = points[i];
      auto vsPrev = i > 0 ? change(values[i - 1], values[i]) : std::nullopt;
      const ResultRecord& r = p.result;
      table.addRow({std::to_string(p.run.id), shortTime(p.run.startedAt),
                    p.run.label.empty() ? "-" : p.run.label, values[i] ? number(*values[i]) : "-",
                    vsPrev ? fmt::format("{:+.1f}%", *vsPrev) : "-",
                    r.iterations ? std::to_string(*r.iterations) : "-",
                    r.cv ? fmt::format("{:.1f}%", *r.cv * 100) : "-",
                    p.run.fingerprint.empty() ? "-" : p.run.fingerprint});
    }
    fmt::print("{}", table.render("# "));
  }
  return 0;
}

}  // namespace

void setupHistoryCommand(CLI::App* sub, Action& action) {
  auto a = std::make_shared<HistoryArgs>();
  sub->add_option("CASE", a->cases, "Cases to show (see CASE syntax below)")->required();
  addDbOption(sub, a->db);
  sub->add_option("--metric", a->metric, "busbw (GB/s) or time (us, the run's statistic)")
      ->capture_default_str();
  a->select.add(sub);
  sub->add_option("--limit", a->limit, "Only the newest N runs that measured a matching case")
      ->capture_default_str();
  sub->footer(kCaseSyntax);
  runOnParse(sub, action, a, doHistory);
}

}  // namespace cb::cli
