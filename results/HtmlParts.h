// The HTML report's parts shared by its sections (internal to results/): results grouped by
// collective, type, op, placement and world size; line names, colours and legends; the run's
// metadata texts; the size charts. The sections: runs (HtmlRuns.cpp), a comparison of two runs
// (HtmlCompare.cpp), a history trend (HtmlHistory.cpp); the page is HtmlReport.cpp.
#pragma once

#include <fmt/format.h>

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/HtmlReport.h"

namespace cb::html {

struct GroupKey {
  std::string collective, dtype, op, placement;
  int nranks = 0;
  auto operator<=>(const GroupKey&) const = default;

  static GroupKey of(const ResultRecord& r) {
    return {r.collective, r.dtype, r.op, r.placement, r.nranks.value_or(0)};
  }
  std::string title() const {
    std::string t = collective.empty() ? "?" : collective;
    if (!dtype.empty()) t += " · " + dtype;
    if (!op.empty() && op != "none") t += " · " + op;
    if (placement == "out") {
      t += " · out-of-place";
    } else if (placement == "in") {
      t += " · in-place";
    } else if (!placement.empty()) {
      t += " · " + placement;
    }
    if (nranks > 0) t += fmt::format(" · {} rank{}", nranks, nranks == 1 ? "" : "s");
    return t;
  }
};

struct Group {
  GroupKey key;
  std::vector<const ResultRecord*> results;
  bool manyRoots = false;  // more than one root: lines are per variant and root
};

std::vector<Group> groupResults(const std::vector<ResultRecord>& all);
std::string lineName(const ResultRecord& r, bool manyRoots);
bool isOk(const ResultRecord& r);
std::string num(double v, int decimals = 2);
// Unknown values (NULL in the store): "-" in tables, NaN in chart series (never drawn).
std::string num(const std::optional<double>& v);
template <typename T>
std::string whole(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "-";
}
std::optional<double> timeOf(const ResultRecord& r);
double orMissing(const std::optional<double>& v);

// Colours and legend keys by line name, the same everywhere on the page.
class Palette {
 public:
  int index(const std::string& name) {
    auto [it, inserted] = indices_.try_emplace(name, static_cast<int>(indices_.size()));
    return it->second;
  }
  std::string key(const std::string& name) { return fmt::format("v{}", index(name)); }

 private:
  std::map<std::string, int> indices_;
};

struct LegendEntry {
  std::string key, name;
  int color = 0;
};

std::string renderLegend(const std::vector<LegendEntry>& entries);
void addLegend(std::vector<LegendEntry>& legend, LegendEntry entry);
// Metadata rows; empty values are left out.
std::string metaRow(std::string_view name, const std::string& value);
std::string worldText(const RunRecord& r);
std::string versionsText(const RunRecord& r);
std::string runTitle(const RunRecord& r);

// busbw against size and time against size for results of one group (ok points only).
struct SizeCharts {
  ChartSpec busbw, latency;
};
SizeCharts sizeCharts(const std::string& title);
// Appends r's point to the series `name` of `spec` (created with the given look).
void addPoint(ChartSpec& spec, const LegendEntry& line, bool dashed, double x,
              std::optional<double> y, const std::string& seriesName);

// The sections.
using Verdicts = std::optional<HtmlReportInput::Verdicts>;
std::string runSection(const ReportRun& rr, Palette& palette);
std::string compareSection(const ReportRun& base, const ReportRun& cand, const Verdicts& verdicts,
                           Palette& palette);
std::string historySection(const HtmlReportInput::History& h, Palette& palette);

}  // namespace cb::html
