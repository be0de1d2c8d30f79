// The HTML report's section of one run: metadata, topology, a table and busbw/latency charts per
// group of results, the point-to-point figures.
#include "results/HtmlParts.h"

#include <algorithm>
#include <map>

#include "results/DiagRecords.h"
#include "results/TopologyHtml.h"

namespace cb::html {

namespace {

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

std::string statusNote(const std::vector<const ResultRecord*>& results) {
  std::map<std::string, int> notOk;
  for (const ResultRecord* r : results) {
    if (!isOk(*r)) ++notOk[std::string(resultStatusName(r->status))];
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
    const std::string name(resultStatusName(r->status));
    std::string status = ok ? "ok" : r->message.empty() ? name : name + ": " + r->message;
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

}  // namespace

std::string runSection(const ReportRun& rr, Palette& palette) {
  const RunRecord& run = rr.run;
  std::string out = fmt::format("<section class=\"run\" id=\"run-{}\">\n<h2>{}</h2>\n", run.id,
                                htmlEscape(runTitle(run)));
  out += runMeta(run);
  if (!rr.verdicts.empty()) {
    out += fmt::format("<pre class=\"verdicts\">{}</pre>\n", htmlEscape(rr.verdicts));
  }
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

}  // namespace cb::html
