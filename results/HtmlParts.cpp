// The HTML report's shared parts (HtmlParts.h).
#include "results/HtmlParts.h"

#include <algorithm>
#include <set>

namespace cb::html {

std::vector<Group> groupResults(const std::vector<ResultRecord>& all) {
  std::vector<Group> groups;
  for (const ResultRecord& r : all) {
    GroupKey key = GroupKey::of(r);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.key == key; });
    if (it == groups.end()) {
      groups.push_back({key, {&r}, false});
    } else {
      it->results.push_back(&r);
    }
  }
  for (Group& g : groups) {
    std::set<int> roots;
    for (const ResultRecord* r : g.results) roots.insert(r->root.value_or(-1));
    g.manyRoots = roots.size() > 1;
  }
  return groups;
}

std::string lineName(const ResultRecord& r, bool manyRoots) {
  std::string name = r.variant.empty() ? "?" : r.variant;
  if (manyRoots && r.root) name += fmt::format(" root {}", *r.root);
  return name;
}

bool isOk(const ResultRecord& r) { return r.status == ResultStatus::kOk; }

std::string num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string num(const std::optional<double>& v) { return v ? num(*v) : "-"; }
std::optional<double> timeOf(const ResultRecord& r) {
  return r.timeKnown ? std::optional<double>(r.timeUs) : std::nullopt;
}
double orMissing(const std::optional<double>& v) {
  return v.value_or(std::numeric_limits<double>::quiet_NaN());
}
std::string renderLegend(const std::vector<LegendEntry>& entries) {
  std::string out = "<div class=\"legend\">";
  for (const LegendEntry& e : entries) {
    out += fmt::format(
        "<button type=\"button\" data-series=\"{}\" title=\"show or hide\"><span "
        "class=\"swatch\" style=\"background:{}\"></span>{}</button>",
        htmlEscape(e.key), paletteColor(e.color), htmlEscape(e.name));
  }
  return out + "</div>\n";
}

void addLegend(std::vector<LegendEntry>& legend, LegendEntry entry) {
  for (const LegendEntry& e : legend) {
    if (e.key == entry.key) return;
  }
  legend.push_back(std::move(entry));
}

std::string metaRow(std::string_view name, const std::string& value) {
  if (value.empty()) return "";
  return fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", htmlEscape(name), htmlEscape(value));
}

std::string worldText(const RunRecord& r) {
  if (r.worldSize <= 0 && r.worldKind.empty()) return "";
  return fmt::format("{}{}{} ranks", r.worldKind, r.worldKind.empty() ? "" : ", ", r.worldSize);
}

std::string versionsText(const RunRecord& r) {
  std::string out;
  auto add = [&](std::string_view name, const std::string& v) {
    if (!v.empty()) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, v);
  };
  add("collbench", r.collbenchVersion);
  add("MPI", r.mpiVersion);
  add("UCX", r.ucxVersion);
  add("CUDA", r.cudaVersion);
  add("NCCL", r.ncclVersion);
  return out;
}

std::string runTitle(const RunRecord& r) {
  return r.label.empty() ? fmt::format("Run #{}", r.id)
                         : fmt::format("Run #{} — {}", r.id, r.label);
}
SizeCharts sizeCharts(const std::string& title) {
  SizeCharts c;
  c.busbw.title = title + ": busbw";
  c.busbw.xTitle = "size (bytes)";
  c.busbw.yTitle = "busbw (GB/s)";
  c.latency.title = title + ": latency";
  c.latency.xTitle = "size (bytes)";
  c.latency.yTitle = "time";
  c.latency.y = AxisKind::kLogMicros;
  return c;
}

void addPoint(ChartSpec& spec, const LegendEntry& line, bool dashed, double x,
              std::optional<double> y, const std::string& seriesName) {
  if (!y) return;  // unknown: not drawn
  auto it = std::find_if(spec.series.begin(), spec.series.end(), [&](const ChartSeries& s) {
    return s.key == line.key && s.dashed == dashed;
  });
  if (it == spec.series.end()) {
    spec.series.push_back({seriesName, line.key, line.color, dashed, {}});
    it = spec.series.end() - 1;
  }
  it->points.emplace_back(x, *y);
}

}  // namespace cb::html
