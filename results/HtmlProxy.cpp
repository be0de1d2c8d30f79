// The training-proxy part of the HTML report: from the "proxy" document stored with a run
// (format "collbench-proxy" version 2, or "collbench-proxy/1" from earlier builds, written by
// training_proxies/ProxyReport.cpp): a table of step metrics, the per-rank timeline of one step
// (compute and communication lanes, one rectangle per operation with its name and times as a
// tooltip) and the scaling charts (speed-up efficiency and step time against ranks; predicted
// points dashed and labelled "predicted").
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "results/HtmlReport.h"

namespace cb {
namespace {

using nlohmann::json;

std::string cell(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

// Colour of an operation by what it is (the first word of its name).
const char* opColor(const std::string& lane, const std::string& name) {
  if (lane == "compute") return name.rfind("bwd", 0) == 0 ? "#9ecae1" : "#3182bd";
  if (name.rfind("dp", 0) == 0 || name.rfind("push", 0) == 0 || name.rfind("pull", 0) == 0 ||
      name.rfind("server", 0) == 0 || name.rfind("reduce_scatter", 0) == 0 ||
      name.rfind("allgather params", 0) == 0) {
    return "#e6550d";
  }
  if (name.rfind("tp", 0) == 0) return "#31a354";
  // A replay's ops are named by kind ("allreduce 448 B", results/HtmlReplay.cpp).
  if (name.rfind("allreduce ", 0) == 0) return "#e6550d";
  if (name.rfind("alltoall", 0) == 0) return "#31a354";
  if (name.rfind("broadcast ", 0) == 0 || name.rfind("allgather ", 0) == 0) return "#3182bd";
  return "#756bb1";  // pipeline sends and receives
}

}  // namespace

std::string renderTimelineSvg(const json& tl, const std::string& title,
                              const std::string& axisTitle) {
  double end = 0;
  bool compute = false;  // a compute lane above the communication lane, when anything uses it
  for (const auto& rank : tl) {
    for (const auto& e : rank) {
      end = std::max(end, e.value("end_us", 0.0));
      compute = compute || e.value("lane", "compute") == "compute";
    }
  }
  const int ranks = static_cast<int>(tl.size());
  if (ranks == 0 || end <= 0) return "<div class=\"nodata\">No timeline recorded.</div>\n";
  const int lanes = compute ? 2 : 1;
  const double left = 70, right = 20, top = 34, laneH = 14, rankGap = 10;
  const double width = 1100, plotW = width - left - right;
  const double height = top + ranks * (lanes * laneH + rankGap) + 40;
  LinearScale x(0, end, left, left + plotW, 8);
  std::string svg = fmt::format(
      "<svg class=\"chart timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\">\n"
      "<text class=\"chart-title\" x=\"{2:.0f}\" y=\"18\">{3}</text>\n",
      width, height, left, htmlEscape(title));
  svg += "<g class=\"grid axis\">\n";
  for (const auto& t : x.ticks()) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\">{4}</text>\n",
        t.pixel, top - 4, height - 30, height - 16, htmlEscape(microsTickLabel(t.value)));
  }
  svg += "</g>\n<g class=\"data\">\n";
  for (int r = 0; r < ranks; ++r) {
    const double y0 = top + r * (lanes * laneH + rankGap);
    svg += fmt::format("<text x=\"4\" y=\"{:.1f}\">rank {}</text>\n", y0 + (lanes - 1) * laneH + 11,
                       r);
    for (const auto& e : tl[r]) {
      const std::string lane = e.value("lane", "compute");
      const std::string name = e.value("name", "");
      const double s = e.value("start_us", 0.0), f = e.value("end_us", 0.0);
      const double px0 = x.pixel(s), px1 = std::max(x.pixel(f), px0 + 0.8);
      const double y = lane == "compute" || lanes == 1 ? y0 : y0 + laneH;
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>rank {}: {} ({} to {} us)</title></rect>\n",
          px0, y, px1 - px0, laneH - 2, opColor(lane, name), r, htmlEscape(name), cell(s, 1),
          cell(f, 1));
    }
  }
  svg += fmt::format(
      "</g>\n<text class=\"axis-title\" x=\"{:.0f}\" y=\"{:.0f}\" "
      "text-anchor=\"middle\">{}</text>\n</svg>\n",
      left + plotW / 2, height - 2, htmlEscape(axisTitle));
  return svg;
}

namespace {

std::string legendRow() {
  std::string out = "<p class=\"note\">";
  const std::pair<const char*, const char*> items[] = {{"#3182bd", "forward compute"},
                                                       {"#9ecae1", "backward compute"},
                                                       {"#e6550d", "data-parallel comm"},
                                                       {"#31a354", "tensor-parallel comm"},
                                                       {"#756bb1", "pipeline sends"}};
  for (const auto& [c, t] : items) {
    out += fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>{} &nbsp; ", c, t);
  }
  return out + "</p>\n";
}

std::string scalingCharts(const json& doc) {
  const json& sc = doc.at("scaling");
  if (!sc.is_array() || sc.empty()) return "";
  ChartSpec eff, step;
  eff.title = fmt::format("Scaling efficiency ({})", doc["options"].value("scaling", ""));
  eff.xTitle = step.xTitle = "ranks";
  eff.yTitle = "efficiency (%)";
  eff.x = step.x = AxisKind::kLog;
  eff.y = AxisKind::kLinear;
  step.title = "Step time";
  step.yTitle = "step time";
  step.y = AxisKind::kLogMicros;
  ChartSeries em{"measured", "measured", 0, false, {}}, ep{"predicted", "predicted", 1, true, {}};
  ChartSeries sm = em, spd = ep;
  for (const auto& row : sc) {
    const double n = row.value("ranks", 0);
    const bool predicted = row.value("predicted", false);
    (predicted ? ep : em).points.emplace_back(n, 100 * row.value("efficiency", 0.0));
    (predicted ? spd : sm).points.emplace_back(n, row.value("step_us", 0.0));
  }
  // The predicted line starts at the last measured point so the two read as one curve.
  if (!em.points.empty() && !ep.points.empty()) {
    ep.points.insert(ep.points.begin(), em.points.back());
    spd.points.insert(spd.points.begin(), sm.points.back());
  }
  for (auto* s : {&em, &ep}) {
    if (!s->points.empty()) eff.series.push_back(*s);
  }
  for (auto* s : {&sm, &spd}) {
    if (!s->points.empty()) step.series.push_back(*s);
  }
  std::string table =
      "<table><tr><th>ranks</th><th>step (ms)</th><th>speed-up</th><th>efficiency</th>"
      "<th>source</th></tr>\n";
  for (const auto& row : sc) {
    table += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}x</td>"
        "<td class=\"num\">{}%</td><td>{}</td></tr>\n",
        row.value("ranks", 0), cell(row.value("step_us", 0.0) / 1e3, 3),
        cell(row.value("speedup", 0.0), 2), cell(100 * row.value("efficiency", 0.0), 1),
        row.value("predicted", false) ? "<b>predicted</b> (cost model)" : "measured");
  }
  table += "</table>\n";
  std::string note;
  if (doc.contains("fit")) {
    const json& f = doc["fit"];
    note = fmt::format(
        "<p class=\"note\">Predicted rows come from collbench's cost model (alpha {} us, beta {} "
        "ns/B, gamma {} ns/B) fitted on {} calls of this run; they are a model, not a "
        "measurement.</p>\n",
        cell(f.value("alpha_s", 0.0) * 1e6, 3), cell(f.value("beta_s_per_byte", 0.0) * 1e9, 4),
        cell(f.value("gamma_s_per_byte", 0.0) * 1e9, 4), f.value("points", 0));
  }
  return fmt::format(
      "<div class=\"figure\">\n<h3>Scaling</h3>\n<div class=\"charts\">\n{}{}</div>\n{}{}</div>\n",
      renderSvgChart(eff), renderSvgChart(step), table, note);
}

}  // namespace

std::string renderProxyDetail(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception&) {
    return "<p class=\"warn\">The stored proxy document is not valid JSON.</p>\n";
  }
  // Version 2 differs from 1 ("collbench-proxy/1", stored by earlier builds) in the header only.
  const bool known =
      doc.is_object() &&
      (doc.value("format", "") == "collbench-proxy/1" ||
       (doc.value("format", "") == "collbench-proxy" && doc.value("version", 0) == 2));
  if (!known || !doc.contains("runs")) {
    return "<p class=\"warn\">Unknown proxy document format.</p>\n";
  }
  try {
    const json& model = doc.at("model");
    std::string out =
        fmt::format("<div class=\"figure proxy\">\n<h3>Training proxy: {} · {} ({}{})</h3>\n",
                    htmlEscape(doc.value("mode", "")), htmlEscape(model.value("name", "")),
                    htmlEscape(doc["options"].value("variant", "")),
                    model.value("sliced", false)
                        ? fmt::format(", slice of {} of {} blocks", model.value("blocks", 0),
                                      model.value("total_blocks", 0))
                        : "");
    out +=
        "<table><tr><th>ranks</th><th>layout dp×tp×pp</th><th>step (ms)</th><th>compute</th>"
        "<th>comm</th><th>exposed comm</th><th>overlap</th><th>bubble</th><th>samples/s</th>"
        "<th>tokens/s</th><th>#wrong</th></tr>\n";
    for (const auto& run : doc["runs"]) {
      std::string bubble = "-";
      // The schedule's bubble (bubble / (bubble + compute)) is what the ideal describes; documents
      // of earlier builds have only the share of the step.
      const char* key = run.contains("schedule_bubble_per_stage") ? "schedule_bubble_per_stage"
                                                                  : "bubble_per_stage";
      if (run.contains(key)) {
        double worst = 0;
        for (double b : run[key]) worst = std::max(worst, b);
        bubble = fmt::format("{}% (ideal {}%)", cell(100 * worst, 1),
                             cell(100 * run.value("bubble_ideal", 0.0), 1));
      }
      const json& l = run.at("layout");
      out += fmt::format(
          "<tr><td class=\"num\">{}</td><td>{}×{}×{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}%</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
          run.value("ranks", 0), l.value("dp", 1), l.value("tp", 1), l.value("pp", 1),
          cell(run.value("step_us", 0.0) / 1e3, 3), cell(run.value("compute_us", 0.0) / 1e3, 3),
          cell(run.value("comm_us", 0.0) / 1e3, 3), cell(run.value("exposed_us", 0.0) / 1e3, 3),
          cell(run.value("overlap_pct", 0.0), 1), bubble, cell(run.value("samples_per_s", 0.0), 1),
          cell(run.value("tokens_per_s", 0.0), 0), run.value("wrong", int64_t{-1}));
    }
    out += "</table>\n";
    const json& last = doc["runs"].back();
    out +=
        "<table><tr><th>group</th><th>call</th><th>size (B)</th><th>ranks</th>"
        "<th>per step</th><th>time (us)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th></tr>\n";
    for (const auto& c : last.value("calls", json::array())) {
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td></tr>\n",
          htmlEscape(c.value("group", "")), htmlEscape(c.value("call", "")),
          c.value("bytes", uint64_t{0}), c.value("ranks", 0), c.value("per_step", 0),
          cell(c.value("time_us", 0.0), 1), cell(c.value("algbw", 0.0), 2),
          cell(c.value("busbw", 0.0), 2));
    }
    out += "</table>\n";
    out += fmt::format("<h3>Timeline ({} ranks)</h3>\n", last.value("ranks", 0));
    out += renderTimelineSvg(last.at("timeline"),
                             "Timeline of one step, per rank (upper lane compute, lower lane "
                             "communication)",
                             "time from the step's start") +
           legendRow();
    out += scalingCharts(doc);
    return out + "</div>\n";
  } catch (const json::exception& e) {
    return fmt::format("<p class=\"warn\">The stored proxy document is incomplete: {}</p>\n",
                       htmlEscape(e.what()));
  }
}

}  // namespace cb
