// The HTML report's comparison of two runs: per case the change, the gate's verdict, and both
// runs' curves on one chart.
#include "results/HtmlParts.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace cb::html {

namespace {

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

}  // namespace

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

}  // namespace cb::html
