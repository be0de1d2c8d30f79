// The HTML report's history trend: a label's runs in order, one line per variant and size.
#include "results/HtmlParts.h"

#include <algorithm>
#include <limits>

namespace cb::html {

namespace {

// One line of a history chart: a variant at one size, its value per run (NaN when missing).
struct HistoryLine {
  std::string name;
  uint64_t size = 0;
  std::vector<double> busbw, time;
};
struct HistoryGroup {
  GroupKey key;
  std::vector<HistoryLine> lines;
};

// Groups and their lines in order of first appearance over the runs, with each run's values.
std::vector<HistoryGroup> historyGroups(const HtmlReportInput::History& h) {
  const double kMissing = std::numeric_limits<double>::quiet_NaN();
  std::vector<HistoryGroup> groups;
  // First pass: the lines and, without a chosen size, each line's largest size.
  for (const ReportRun& rr : h.runs) {
    for (const Group& g : groupResults(rr.results)) {
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const HistoryGroup& x) { return x.key == g.key; });
      if (it == groups.end()) {
        groups.push_back({g.key, {}});
        it = groups.end() - 1;
      }
      for (const ResultRecord* r : g.results) {
        if (!isOk(*r)) continue;
        if (h.sizeBytes && r->sizeBytes != *h.sizeBytes) continue;
        std::string name = lineName(*r, g.manyRoots);
        auto line = std::find_if(it->lines.begin(), it->lines.end(),
                                 [&](const HistoryLine& l) { return l.name == name; });
        if (line == it->lines.end()) {
          it->lines.push_back({name, r->sizeBytes, {}, {}});
        } else {
          line->size = std::max(line->size, r->sizeBytes);
        }
      }
    }
  }
  for (HistoryGroup& hg : groups) {
    for (HistoryLine& l : hg.lines) {
      l.busbw.assign(h.runs.size(), kMissing);
      l.time.assign(h.runs.size(), kMissing);
    }
  }
  for (size_t i = 0; i < h.runs.size(); ++i) {
    for (const Group& g : groupResults(h.runs[i].results)) {
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const HistoryGroup& x) { return x.key == g.key; });
      for (const ResultRecord* r : g.results) {
        if (!isOk(*r)) continue;
        std::string name = lineName(*r, g.manyRoots);
        for (HistoryLine& l : it->lines) {
          if (l.name == name && l.size == r->sizeBytes) {
            l.busbw[i] = orMissing(r->busbw);
            l.time[i] = orMissing(timeOf(*r));
          }
        }
      }
    }
  }
  return groups;
}

// One group's chart over the runs (busbw, or time when it has none) and its table.
std::string historyFigure(const HistoryGroup& hg, const HtmlReportInput::History& h,
                          const std::vector<std::string>& categories, Palette& palette) {
  bool anyBusbw = false;
  for (const HistoryLine& l : hg.lines) {
    for (double v : l.busbw) anyBusbw = anyBusbw || v > 0;
  }
  std::string title = hg.key.title();
  ChartSpec spec;
  spec.title = title + (anyBusbw ? ": busbw over runs" : ": time over runs");
  spec.xTitle = "run (oldest first)";
  spec.yTitle = anyBusbw ? "busbw (GB/s)" : "time (us)";
  spec.x = AxisKind::kCategory;
  spec.y = AxisKind::kLinear;
  spec.categories = categories;
  std::vector<LegendEntry> legend;
  std::string rows;
  for (const HistoryLine& l : hg.lines) {
    LegendEntry entry{palette.key(l.name), fmt::format("{} @ {}", l.name, sizeTickLabel(l.size)),
                      palette.index(l.name)};
    addLegend(legend, entry);
    ChartSeries s{entry.name, entry.key, entry.color, false, {}};
    const std::vector<double>& values = anyBusbw ? l.busbw : l.time;
    for (size_t i = 0; i < values.size(); ++i) {
      s.points.emplace_back(static_cast<double>(i), values[i]);
    }
    spec.series.push_back(std::move(s));
  }
  // Table: one row per run, one column per line.
  std::string head = "<tr><th>run</th><th>started</th>";
  for (const HistoryLine& l : hg.lines) {
    head += fmt::format("<th>{} @ {}</th>", htmlEscape(l.name), htmlEscape(sizeTickLabel(l.size)));
  }
  head += "</tr>\n";
  for (size_t i = 0; i < h.runs.size(); ++i) {
    rows += fmt::format("<tr><td>#{}</td><td>{}</td>", h.runs[i].run.id,
                        htmlEscape(h.runs[i].run.startedAt));
    for (const HistoryLine& l : hg.lines) {
      double v = anyBusbw ? l.busbw[i] : l.time[i];
      rows += fmt::format("<td class=\"num\">{}</td>", std::isnan(v) ? "-" : num(v));
    }
    rows += "</tr>\n";
  }
  return fmt::format(
      "<div class=\"figure\">\n<h3>{}</h3>\n<div class=\"charts\">\n{}</div>\n{}<details>"
      "<summary>table ({})</summary><table class=\"data\">{}{}</table></details>\n</div>\n",
      htmlEscape(title), renderSvgChart(spec), renderLegend(legend), htmlEscape(spec.yTitle), head,
      rows);
}

}  // namespace

std::string historySection(const HtmlReportInput::History& h, Palette& palette) {
  std::string out = fmt::format(
      "<section class=\"history\" id=\"history\">\n<h2>History: label “{}” ({} run{})</h2>\n",
      htmlEscape(h.label), h.runs.size(), h.runs.size() == 1 ? "" : "s");
  if (h.runs.empty()) {
    return out + fmt::format("<p class=\"empty\">No runs carry the label “{}”.</p>\n</section>\n",
                             htmlEscape(h.label));
  }
  out += fmt::format(
      "<p class=\"note\">busbw of each variant at {} over the runs, oldest first (time in us for "
      "groups without a bus bandwidth). Lines join the runs that measured the point.</p>\n",
      h.sizeBytes ? htmlEscape(fmt::format("{} bytes", *h.sizeBytes))
                  : "the largest size it measured");
  std::vector<std::string> categories;
  for (const ReportRun& rr : h.runs) categories.push_back(fmt::format("#{}", rr.run.id));
  int drawn = 0;
  for (const HistoryGroup& hg : historyGroups(h)) {
    if (hg.lines.empty()) continue;
    ++drawn;
    out += historyFigure(hg, h, categories, palette);
  }
  if (drawn == 0) {
    out += fmt::format("<p class=\"empty\">No run labelled “{}” has a result{}.</p>\n",
                       htmlEscape(h.label),
                       h.sizeBytes ? fmt::format(" at {} bytes", *h.sizeBytes) : "");
  }
  return out + "</section>\n";
}

}  // namespace cb::html
