// The HTML report's page and its sections (runs, a comparison of two runs, a history trend); the
// axes and charts they draw with are in HtmlSvg.cpp. See HtmlReport.h.
#include "results/HtmlReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "results/DiagRecords.h"
#include "results/TopologyHtml.h"

namespace cb {

// ---- the page ----

namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  margin: 0 auto; max-width: 1320px; padding: 0 20px 40px; color: #222; background: #fff; }
h1 { font-size: 1.6em; margin: 18px 0 4px; }
h2 { font-size: 1.25em; margin: 28px 0 8px; padding-top: 10px; border-top: 2px solid #ddd; }
h3 { font-size: 1.02em; margin: 18px 0 6px; }
.sub, .note { color: #555; font-size: 0.9em; }
.warn { color: #8a4b00; background: #fff4e0; padding: 6px 10px; border-radius: 4px; }
.empty, .nodata { color: #666; font-style: italic; }
.nodata { display: inline-block; width: 600px; padding: 20px 0; text-align: center;
  border: 1px dashed #ccc; }
nav a { margin-right: 12px; }
table { border-collapse: collapse; font-size: 0.86em; margin: 6px 0; }
th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.meta td:first-child { color: #555; white-space: nowrap; }
td.better { background: #e2f4e2; color: #14591a; }
td.worse { background: #fbe3e3; color: #8b1a1a; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { background: #fff; font-size: 11px; }
svg.chart .frame { fill: none; stroke: #999; }
svg.chart .grid line { stroke: #e6e6e6; }
svg.chart .axis text { fill: #444; }
svg.chart .chart-title { font-size: 13px; font-weight: 600; fill: #222; }
svg.chart .axis-title { font-size: 11.5px; fill: #333; }
svg.chart path.line { fill: none; stroke-width: 1.8; }
.legend { display: flex; flex-wrap: wrap; gap: 6px; margin: 4px 0; }
.legend button { font: inherit; font-size: 0.85em; border: 1px solid #ccc; background: #fafafa;
  border-radius: 3px; padding: 1px 8px; cursor: pointer; }
.legend button.off { opacity: 0.4; text-decoration: line-through; }
.swatch { display: inline-block; width: 12px; height: 3px; margin: 0 6px 3px 0;
  vertical-align: middle; }
details { margin: 4px 0; }
pre { white-space: pre-wrap; word-break: break-all; font-size: 0.85em; }
footer { margin-top: 30px; color: #666; font-size: 0.85em; }
)css";

// Legend buttons hide a series in every chart of their figure; the body attributes tell a test
// (or a curious reader) that the script ran and how many charts have drawn content.
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  var errors = 0;
  window.addEventListener('error', function () {
    errors += 1;
    document.body.setAttribute('data-report-errors', String(errors));
  });
  function setUp() {
    document.querySelectorAll('.legend button[data-series]').forEach(function (button) {
      button.addEventListener('click', function () {
        var off = button.classList.toggle('off');
        var figure = button.closest('.figure');
        var key = button.getAttribute('data-series');
        figure.querySelectorAll('g.series').forEach(function (g) {
          if (g.getAttribute('data-series') === key) g.style.display = off ? 'none' : '';
        });
      });
    });
    var charts = document.querySelectorAll('svg.chart');
    var drawn = 0;
    charts.forEach(function (svg) {
      var data = svg.querySelector('g.data');
      var box = data ? data.getBBox() : null;
      if (box && (box.width > 0 || box.height > 0)) drawn += 1;
    });
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-charts-drawn', String(drawn));
    document.body.setAttribute('data-report', errors === 0 ? 'ready' : 'errors');
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', setUp);
  } else {
    setUp();
  }
})();
)js";

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

bool isOk(const ResultRecord& r) { return r.status == "ok"; }

std::string num(double v, int decimals = 2) { return fmt::format("{:.{}f}", v, decimals); }

// Unknown values (NULL in the store): "-" in tables, NaN in chart series (never drawn).
std::string num(const std::optional<double>& v) { return v ? num(*v) : "-"; }
template <typename T>
std::string whole(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "-";
}
std::optional<double> timeOf(const ResultRecord& r) {
  return r.timeKnown ? std::optional<double>(r.timeUs) : std::nullopt;
}
double orMissing(const std::optional<double>& v) {
  return v.value_or(std::numeric_limits<double>::quiet_NaN());
}

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

// Metadata rows; empty values are left out.
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

std::string runMeta(const RunRecord& r) {
  std::string out = "<table class=\"meta\">\n";
  out += metaRow("status", std::string(runStatusName(r.status)));
  out += metaRow("started", r.startedAt);
  out += metaRow("finished", r.finishedAt);
  out += metaRow("label", r.label);
  out += metaRow("source", r.source);
  out += metaRow("command", r.commandLine);
  out += metaRow("world", worldText(r));
  out += metaRow("hosts", r.hosts);
  out += metaRow("versions", versionsText(r));
  out += metaRow("fingerprint", r.fingerprint);
  out += "</table>\n";
  if (!r.environmentJson.empty() && r.environmentJson != "{}") {
    out += fmt::format("<details><summary>environment</summary><pre>{}</pre></details>\n",
                       htmlEscape(r.environmentJson));
  }
  out += topologyHtml(r.topologyJson);
  return out;
}

// busbw against size and time against size for results of one group (ok points only).
struct SizeCharts {
  ChartSpec busbw, latency;
};

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

// Appends r's point to the series `name` of `spec` (created with the given look).
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

std::string statusNote(const std::vector<const ResultRecord*>& results) {
  std::map<std::string, int> notOk;
  for (const ResultRecord* r : results) {
    if (!isOk(*r)) ++notOk[r->status];
  }
  if (notOk.empty()) return "";
  std::string parts;
  for (const auto& [status, n] : notOk) {
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", n, status);
  }
  return fmt::format("<p class=\"note\">Not plotted: {} (see the table).</p>\n", htmlEscape(parts));
}

std::string resultsTable(const Group& g) {
  bool anyRoot = std::any_of(g.results.begin(), g.results.end(),
                             [](const ResultRecord* r) { return r->root.has_value(); });
  std::string out = fmt::format(
      "<details><summary>table ({} point{})</summary><table class=\"data\"><tr><th>size</th>"
      "<th>count</th><th>variant</th>{}<th>time (us)</th><th>algbw</th><th>busbw</th>"
      "<th>#wrong</th><th>iters</th><th>status</th></tr>\n",
      g.results.size(), g.results.size() == 1 ? "" : "s", anyRoot ? "<th>root</th>" : "");
  for (const ResultRecord* r : g.results) {
    bool ok = isOk(*r);
    std::string status = ok ? "ok" : r->message.empty() ? r->status : r->status + ": " + r->message;
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>{}<td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        r->sizeBytes, whole(r->count), htmlEscape(r->variant),
        anyRoot ? fmt::format("<td class=\"num\">{}</td>", whole(r->root)) : "",
        ok ? num(timeOf(*r)) : "-", ok ? num(r->algbw) : "-", ok ? num(r->busbw) : "-",
        whole(r->wrong), whole(r->iterations), htmlEscape(status));
  }
  return out + "</table></details>\n";
}

bool isP2pTest(const std::string& collective) {
  return collective == "latency" || collective == "bw" || collective == "bibw";
}

// A point-to-point group (collbench p2p): results are stored with nranks 2 (a pair) and the
// variant "TRANSPORT" or "TRANSPORT@A-B"; the title gives the run's rank count. latency plots
// time, bw/bibw bandwidth (no bus bandwidth for a link). One pair per transport: one chart, a
// line per transport. --all-pairs: a chart per transport, a line per pair up to 6 pairs, else the
// slowest, median and fastest pair at each size (the table keeps every pair).
std::string p2pFigure(const Group& g, const RunRecord& run, Palette& palette) {
  const std::string& test = g.key.collective;
  const bool latency = test == "latency";
  std::string title = fmt::format(
      "{} · point-to-point · {}", test,
      run.worldSize > 2 ? fmt::format("pairs of a {}-rank run", run.worldSize) : "2 ranks");
  // transport -> pair -> size -> value
  std::map<std::string, std::map<std::string, std::map<uint64_t, double>>> byTransport;
  std::vector<std::string> transports;
  for (const ResultRecord* r : g.results) {
    if (!isOk(*r)) continue;
    size_t at = r->variant.find('@');
    std::string transport = r->variant.substr(0, at);
    std::string pair = at == std::string::npos ? "0-1" : r->variant.substr(at + 1);
    if (!byTransport.count(transport)) transports.push_back(transport);
    if (auto v = latency ? timeOf(*r) : r->busbw) byTransport[transport][pair][r->sizeBytes] = *v;
  }
  auto spec = [&](const std::string& chartTitle) {
    ChartSpec c;
    c.title = chartTitle;
    c.xTitle = "size (bytes)";
    c.yTitle = latency ? "time" : "bandwidth (GB/s)";
    if (latency) c.y = AxisKind::kLogMicros;
    return c;
  };
  std::vector<LegendEntry> legend;
  auto add = [&](ChartSpec& c, const std::string& name, bool dashed,
                 const std::map<uint64_t, double>& points) {
    LegendEntry line{palette.key(name), name, palette.index(name)};
    addLegend(legend, line);
    for (const auto& [bytes, v] : points) {
      addPoint(c, line, dashed, static_cast<double>(bytes), v, name);
    }
  };
  std::string charts;
  bool onePair = std::all_of(transports.begin(), transports.end(),
                             [&](const std::string& t) { return byTransport[t].size() == 1; });
  if (onePair) {
    ChartSpec c = spec(title);
    for (const auto& t : transports) {
      const auto& [pair, points] = *byTransport[t].begin();
      add(c, pair == "0-1" ? t : t + " " + pair, false, points);
    }
    charts = renderSvgChart(c);
  } else {
    for (const auto& t : transports) {
      const auto& pairs = byTransport[t];
      ChartSpec c = spec(fmt::format("{} over {}: {} pairs", test, t, pairs.size()));
      if (pairs.size() <= 6) {
        for (const auto& [pair, points] : pairs) add(c, t + " " + pair, false, points);
      } else {
        std::map<uint64_t, std::vector<double>> values;
        for (const auto& [pair, points] : pairs) {
          for (const auto& [bytes, v] : points) values[bytes].push_back(v);
        }
        std::map<uint64_t, double> slow, mid, fast;
        for (auto& [bytes, v] : values) {
          std::sort(v.begin(), v.end());
          // Slow = low bandwidth or high latency.
          slow[bytes] = latency ? v.back() : v.front();
          fast[bytes] = latency ? v.front() : v.back();
          mid[bytes] = v[v.size() / 2];
        }
        add(c, t + " slowest pair", false, slow);
        add(c, t + " median pair", true, mid);
        add(c, t + " fastest pair", true, fast);
      }
      charts += renderSvgChart(c);
    }
  }
  std::string out =
      fmt::format("<div class=\"figure\">\n<h3>{}</h3>\n<div class=\"charts\">\n{}</div>\n",
                  htmlEscape(title), charts);
  out += renderLegend(legend);
  out += statusNote(g.results);
  out += resultsTable(g);
  return out + "</div>\n";
}

std::string runSection(const ReportRun& rr, Palette& palette) {
  const RunRecord& run = rr.run;
  std::string out = fmt::format("<section class=\"run\" id=\"run-{}\">\n<h2>{}</h2>\n", run.id,
                                htmlEscape(runTitle(run)));
  out += runMeta(run);
  if (rr.results.empty()) {
    return out + "<p class=\"empty\">No results stored for this run.</p>\n</section>\n";
  }
  if (rr.proxyJson) out += renderProxyDetail(*rr.proxyJson);
  if (rr.replayJson) out += renderReplayDetail(*rr.replayJson);
  // Diagnosis results are a link matrix, drawn as a heat map (results/DiagRecords), not by size.
  out += diagHtmlSection(rr.results);
  std::vector<ResultRecord> bySize;
  std::copy_if(rr.results.begin(), rr.results.end(), std::back_inserter(bySize),
               [](const ResultRecord& r) { return !isDiagResult(r); });
  for (const Group& g : groupResults(bySize)) {
    if (isP2pTest(g.key.collective)) {
      out += p2pFigure(g, run, palette);
      continue;
    }
    // A proxy's step times are shown by renderProxyDetail, not as a function of size.
    if (rr.proxyJson && g.results.front()->collective.rfind("proxy-", 0) == 0) continue;
    std::string title = g.key.title();
    SizeCharts charts = sizeCharts(title);
    std::vector<LegendEntry> legend;
    for (const ResultRecord* r : g.results) {
      if (!isOk(*r)) continue;
      std::string name = lineName(*r, g.manyRoots);
      LegendEntry line{palette.key(name), name, palette.index(name)};
      addLegend(legend, line);
      auto x = static_cast<double>(r->sizeBytes);
      addPoint(charts.busbw, line, false, x, r->busbw, name);
      addPoint(charts.latency, line, false, x, timeOf(*r), name);
      if (r->peakGBps && r->nranks.value_or(2) != 1) {
        // The hardware's bound (docs/PEAK.md), dashed across the busbw chart (one rank's bound is
        // on algbw, which the charts do not show).
        std::string bound = "bound: " + r->peakLimit;
        LegendEntry peak{palette.key(bound), bound, palette.index(bound)};
        addLegend(legend, peak);
        addPoint(charts.busbw, peak, true, x, r->peakGBps, bound);
      }
    }
    out += fmt::format("<div class=\"figure\">\n<h3>{}</h3>\n<div class=\"charts\">\n{}{}</div>\n",
                       htmlEscape(title), renderSvgChart(charts.busbw),
                       renderSvgChart(charts.latency));
    out += renderLegend(legend);
    out += statusNote(g.results);
    out += resultsTable(g);
    out += "</div>\n";
  }
  return out + "</section>\n";
}

// ---- comparison ----

// What must match for two results to be the same case.
using CaseTuple = std::tuple<GroupKey, std::string, int, uint64_t>;  // group, variant, root, size

CaseTuple caseOf(const ResultRecord& r) {
  return {GroupKey::of(r), r.variant, r.root.value_or(-1), r.sizeBytes};
}

// A change, coloured only when the run-level test of `collbench compare` calls the case a
// regression or an improvement (a difference within the noise is not a finding).
std::string changeCell(double base, double cand, const char* cls) {
  if (!(base > 0) || !std::isfinite(cand)) return "<td class=\"num\">-</td>";
  double pct = (cand - base) / base * 100;
  return fmt::format("<td class=\"num{}\">{:+.1f}%</td>", cls, pct);
}

const char* verdictClass(const CaseComparison* v) {
  if (!v) return "";
  if (v->verdict == Verdict::kRegression) return " worse";
  if (v->verdict == Verdict::kImprovement) return " better";
  return "";
}

std::string verdictCell(const CaseComparison* v) {
  if (!v) return "<td>-</td>";
  std::string text(verdictName(v->verdict));
  if (!v->note.empty()) text += " (" + v->note + ")";
  return fmt::format("<td class=\"verdict{}\">{}</td>", verdictClass(v), htmlEscape(text));
}

using Verdicts = std::optional<HtmlReportInput::Verdicts>;

// The comparison's heading: both runs side by side, a warning when their environments may
// differ, how to read the charts and the test's summary.
std::string compareHead(const RunRecord& b, const RunRecord& c, const Verdicts& verdicts) {
  std::string out = fmt::format(
      "<section class=\"compare\" id=\"compare\">\n<h2>Comparison: run #{} (baseline) → run #{} "
      "(candidate)</h2>\n",
      b.id, c.id);
  out += "<table class=\"meta\"><tr><th></th><th>baseline</th><th>candidate</th></tr>\n";
  auto row = [&](std::string_view name, const std::string& x, const std::string& y) {
    if (x.empty() && y.empty()) return;
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", htmlEscape(name),
                       htmlEscape(x), htmlEscape(y));
  };
  row("run", fmt::format("#{}", b.id), fmt::format("#{}", c.id));
  row("label", b.label, c.label);
  row("status", std::string(runStatusName(b.status)), std::string(runStatusName(c.status)));
  row("started", b.startedAt, c.startedAt);
  row("source", b.source, c.source);
  row("command", b.commandLine, c.commandLine);
  row("world", worldText(b), worldText(c));
  row("hosts", b.hosts, c.hosts);
  row("versions", versionsText(b), versionsText(c));
  row("fingerprint", b.fingerprint, c.fingerprint);
  out += "</table>\n";
  if (b.fingerprint.empty() || c.fingerprint.empty()) {
    out +=
        "<p class=\"warn\">At least one run has no environment fingerprint: the two may not "
        "have run in comparable environments.</p>\n";
  } else if (b.fingerprint != c.fingerprint) {
    out +=
        "<p class=\"warn\">The environment fingerprints differ: these runs are not comparable "
        "in the sense of <code>collbench gate</code>; the changes below mix environment and "
        "code.</p>\n";
  }
  out += fmt::format(
      "<p class=\"note\">Dashed lines: baseline #{}; solid lines: candidate #{}. Changes are of "
      "the stored statistic. {}</p>\n",
      b.id, c.id,
      verdicts
          ? fmt::format("Verdicts are <code>collbench compare</code>'s run-level test over {}; "
                        "a change is coloured only where that test finds a regression "
                        "(red) or an improvement (green).",
                        htmlEscape(verdicts->sides))
          : "No test was run: nothing is coloured.");
  if (verdicts) {
    out += fmt::format("<p class=\"summary\">{}</p>\n", htmlEscape(verdicts->summary));
  }
  return out;
}

// The cases both runs measured, counted by verdict for the comparison's summary.
struct CompareCounts {
  int matched = 0, better = 0, worse = 0, untested = 0;
};

// One group both runs measured (`g` the baseline's, `cg` the candidate's): its charts, the
// baseline dashed, and the changes of its cases both runs measured.
std::string compareFigure(const Group& g, const Group& cg, const RunRecord& b, const RunRecord& c,
                          const std::map<CaseTuple, const ResultRecord*>& candCases,
                          const Verdicts& verdicts, Palette& palette, CompareCounts& counts) {
  bool manyRoots = g.manyRoots || cg.manyRoots;
  std::string title = g.key.title();
  SizeCharts charts = sizeCharts(title);
  std::vector<LegendEntry> legend;
  auto plot = [&](const Group& group, bool dashed, int64_t id) {
    for (const ResultRecord* r : group.results) {
      if (!isOk(*r)) continue;
      std::string name = lineName(*r, manyRoots);
      LegendEntry line{palette.key(name), name, palette.index(name)};
      addLegend(legend, line);
      std::string seriesName = fmt::format("{} (#{})", name, id);
      auto x = static_cast<double>(r->sizeBytes);
      addPoint(charts.busbw, line, dashed, x, r->busbw, seriesName);
      addPoint(charts.latency, line, dashed, x, timeOf(*r), seriesName);
    }
  };
  plot(g, true, b.id);
  plot(cg, false, c.id);
  // The group's cases both runs measured, under its charts.
  std::string rows;
  int cases = 0;
  for (const ResultRecord* r : g.results) {
    if (!isOk(*r)) continue;
    auto it = candCases.find(caseOf(*r));
    if (it == candCases.end()) continue;
    const ResultRecord& n = *it->second;
    ++cases;
    const CaseComparison* v = nullptr;
    if (verdicts) {
      auto found = verdicts->cases.find(CaseKey::of(*r));
      if (found != verdicts->cases.end()) v = &found->second;
    }
    counts.better += v && v->verdict == Verdict::kImprovement ? 1 : 0;
    counts.worse += v && v->verdict == Verdict::kRegression ? 1 : 0;
    counts.untested += !v || v->verdict == Verdict::kInconclusive ? 1 : 0;
    const char* cls = verdictClass(v);
    rows += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>{}<td class=\"num\">{}</td><td class=\"num\">{}</td>{}{}</tr>\n",
        htmlEscape(lineName(*r, manyRoots)), r->sizeBytes, num(r->busbw), num(n.busbw),
        changeCell(orMissing(r->busbw), orMissing(n.busbw), cls), num(timeOf(*r)), num(timeOf(n)),
        changeCell(orMissing(timeOf(*r)), orMissing(timeOf(n)), cls), verdictCell(v));
  }
  counts.matched += cases;
  std::string figure =
      fmt::format("<div class=\"figure\">\n<h3>{}</h3>\n<div class=\"charts\">\n{}{}</div>\n{}",
                  htmlEscape(title), renderSvgChart(charts.busbw), renderSvgChart(charts.latency),
                  renderLegend(legend));
  if (cases > 0) {
    figure += fmt::format(
        "<table class=\"data change\"><tr><th>variant</th><th>size</th><th>busbw base</th>"
        "<th>busbw cand</th><th>busbw change</th><th>time base (us)</th><th>time cand "
        "(us)</th><th>time change</th><th>verdict</th></tr>\n{}</table>\n",
        rows);
  } else {
    figure += "<p class=\"note\">No case of this group was measured by both runs.</p>\n";
  }
  return figure + "</div>\n";
}

std::string compareSection(const ReportRun& base, const ReportRun& cand, const Verdicts& verdicts,
                           Palette& palette) {
  const RunRecord& b = base.run;
  const RunRecord& c = cand.run;
  std::string out = compareHead(b, c, verdicts);
  std::map<CaseTuple, const ResultRecord*> baseCases, candCases;
  for (const ResultRecord& r : base.results) {
    if (isOk(r)) baseCases[caseOf(r)] = &r;
  }
  for (const ResultRecord& r : cand.results) {
    if (isOk(r)) candCases[caseOf(r)] = &r;
  }
  // Groups both runs measured, in the baseline's order.
  std::vector<Group> baseGroups = groupResults(base.results);
  std::vector<Group> candGroups = groupResults(cand.results);
  std::string figures;
  CompareCounts n;
  for (const Group& g : baseGroups) {
    auto cg = std::find_if(candGroups.begin(), candGroups.end(),
                           [&](const Group& x) { return x.key == g.key; });
    if (cg == candGroups.end()) continue;
    figures += compareFigure(g, *cg, b, c, candCases, verdicts, palette, n);
  }
  int onlyBase = 0, onlyCand = 0;
  for (const auto& [k, r] : baseCases) onlyBase += candCases.count(k) == 0 ? 1 : 0;
  for (const auto& [k, r] : candCases) onlyCand += baseCases.count(k) == 0 ? 1 : 0;
  if (n.matched == 0) {
    out += "<p class=\"empty\">The two runs have no measured case in common.</p>\n";
  } else {
    out += fmt::format(
        "<p class=\"summary\"><b>{} case{} in common</b>: {} regression{}, {} improvement{}, {} "
        "untested or inconclusive.</p>\n",
        n.matched, n.matched == 1 ? "" : "s", n.worse, n.worse == 1 ? "" : "s", n.better,
        n.better == 1 ? "" : "s", n.untested);
  }
  if (onlyBase > 0 || onlyCand > 0) {
    out += fmt::format(
        "<p class=\"note\">Measured by one run only: {} case{} of the baseline, {} of the "
        "candidate.</p>\n",
        onlyBase, onlyBase == 1 ? "" : "s", onlyCand);
  }
  return out + figures + "</section>\n";
}

// ---- history ----

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

}  // namespace

std::string renderHtmlReport(const HtmlReportInput& input) {
  Palette palette;
  std::string body;
  std::string nav;
  for (const ReportRun& rr : input.runs) {
    nav += fmt::format("<a href=\"#run-{}\">{}</a>", rr.run.id, htmlEscape(runTitle(rr.run)));
    body += runSection(rr, palette);
  }
  if (input.compare) {
    nav += "<a href=\"#compare\">Comparison</a>";
    body += compareSection(input.compare->first, input.compare->second, input.verdicts, palette);
  }
  if (input.history) {
    nav += "<a href=\"#history\">History</a>";
    body += historySection(*input.history, palette);
  }
  if (body.empty()) body = "<p class=\"empty\">Nothing to show: no runs were given.</p>\n";
  std::string sub = "Generated";
  if (!input.generator.empty()) sub += " by " + input.generator;
  if (!input.generatedAt.empty()) sub += " at " + input.generatedAt;
  std::string footer = input.commandLine.empty()
                           ? std::string()
                           : fmt::format("<footer>Command: <code>{}</code></footer>\n",
                                         htmlEscape(input.commandLine));
  // The policy forbids every fetch: the page stays self-contained (a reference to anything
  // outside it would fail loudly in a browser's console rather than load).
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body data-report=\"loading\">\n"
      "<header>\n<h1>{0}</h1>\n<p class=\"sub\">{2}</p>\n<nav>{3}</nav>\n</header>\n<main>\n{4}"
      "</main>\n{5}<script>{6}</script>\n</body>\n</html>\n",
      htmlEscape(input.title), kStyle, htmlEscape(sub), nav, body, footer, kScript);
}

}  // namespace cb
