// The HTML report's page: its style, script, navigation and footer around the sections (runs:
// HtmlRuns.cpp, comparison: HtmlCompare.cpp, history: HtmlHistory.cpp; their shared parts:
// HtmlParts.h; axes and charts: HtmlSvg.cpp). See HtmlReport.h.
#include "results/HtmlReport.h"

#include "results/HtmlParts.h"

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
}  // namespace

std::string renderHtmlReport(const HtmlReportInput& input) {
  using namespace html;
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
