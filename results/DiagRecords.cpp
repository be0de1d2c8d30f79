// The stored form of a diagnosis and its HTML heat map (results/DiagRecords.h).
#include "results/DiagRecords.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/Stats.h"
#include "core/Text.h"
#include "results/HtmlReport.h"

namespace cb {

std::string diagCollective(DiagMetric m) {
  switch (m) {
    case DiagMetric::kBibw: return "diag-bibw";
    case DiagMetric::kLatency: return "diag-latency";
    case DiagMetric::kBisect: return "diag-bisect";
    case DiagMetric::kArrival: return "diag-arrival";
    case DiagMetric::kFinish: return "diag-finish";
  }
  return "diag-unknown";
}

std::string diagCollective(std::string_view logCollective) {
  return std::string(kDiagPrefix) + std::string(logCollective);
}

bool isDiagResult(const ResultRecord& r) { return startsWith(r.collective, kDiagPrefix); }

std::string diagCellNumber(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string diagVariant(const std::string& source, const std::string& a, const std::string& b) {
  return fmt::format("{}@{},{}", source, a, b);
}

bool parseDiagVariant(const std::string& variant, std::string& source, std::string& a,
                      std::string& b) {
  size_t at = variant.rfind('@');
  if (at == std::string::npos) return false;
  size_t comma = variant.find(',', at);
  if (comma == std::string::npos) return false;
  source = variant.substr(0, at);
  a = variant.substr(at + 1, comma - at - 1);
  b = variant.substr(comma + 1);
  return !a.empty() && !b.empty();
}

std::string diagHtmlSection(const std::vector<ResultRecord>& results) {
  std::vector<std::string> metrics;
  for (const ResultRecord& r : results) {
    if (isDiagResult(r) &&
        std::find(metrics.begin(), metrics.end(), r.collective) == metrics.end()) {
      metrics.push_back(r.collective);
    }
  }
  std::string out;
  for (const std::string& metric : metrics) {
    const bool latency = metric == diagCollective(DiagMetric::kLatency);
    struct Cell {
      std::string a, b;
      double value = 0;
      bool suspect = false, ok = true;
      std::string message;
    };
    std::vector<Cell> cells;
    std::vector<std::string> names;
    auto indexOf = [&](const std::string& name) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it != names.end()) return static_cast<int>(it - names.begin());
      names.push_back(name);
      return static_cast<int>(names.size()) - 1;
    };
    std::vector<double> values;
    for (const ResultRecord& r : results) {
      if (r.collective != metric) continue;
      Cell c;
      std::string source;
      if (!parseDiagVariant(r.variant, source, c.a, c.b)) continue;
      indexOf(c.a);
      indexOf(c.b);
      c.ok = r.status == ResultStatus::kOk;
      c.value = latency ? r.timeUs : r.busbw.value_or(0);
      c.message = r.status == ResultStatus::kOk
                      ? r.message
                      : fmt::format("{}: {}", resultStatusName(r.status), r.message);
      c.suspect = startsWith(r.message, "suspect") || !c.ok;
      if (c.ok) values.push_back(c.value);
      cells.push_back(c);
    }
    if (cells.empty()) continue;
    // Numeric names (ranks) in numeric order.
    bool numeric = std::all_of(names.begin(), names.end(), [](const std::string& s) {
      return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit);
    });
    std::vector<std::string> order = names;
    if (numeric) {
      std::sort(order.begin(), order.end(), [](const std::string& x, const std::string& y) {
        return std::stoi(x) < std::stoi(y);
      });
    }
    auto pos = [&](const std::string& s) {
      return static_cast<int>(std::find(order.begin(), order.end(), s) - order.begin());
    };
    const double median = medianOf(values);
    const int n = static_cast<int>(order.size());
    const int cell = n > 12 ? 22 : 34, label = numeric ? 30 : 110;
    const int size = label + n * cell + 10;
    std::string svg = fmt::format(
        "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
        "role=\"img\">\n",
        size, size);
    for (int i = 0; i < n; ++i) {
      const std::string name = htmlEscape(order[static_cast<size_t>(i)]);
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n",
                         label - 4, label + i * cell + cell / 2 + 4, name);
      svg += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"11\" transform=\"rotate(-60 {} {})\">{}</text>\n",
          label + i * cell + cell / 2, label - 4, label + i * cell + cell / 2, label - 4, name);
    }
    std::vector<std::string> suspects;
    for (const Cell& c : cells) {
      // Relative performance: 1 typical, lower worse; the colour runs red (0.5 and below) to
      // green (1 and above).
      double p = 0;
      if (c.ok && median > 0 && c.value > 0) p = latency ? median / c.value : c.value / median;
      double t = std::clamp((p - 0.5) / 0.5, 0.0, 1.0);
      int red = static_cast<int>(220 - 170 * t), green = static_cast<int>(60 + 140 * t);
      std::string title = fmt::format(
          "{} - {}: {} {}{}", c.a, c.b, c.ok ? diagCellNumber(c.value) : std::string("failed"),
          latency ? "us" : "GB/s", c.message.empty() ? "" : " — " + c.message);
      for (auto [x, y] : {std::pair{pos(c.a), pos(c.b)}, std::pair{pos(c.b), pos(c.a)}}) {
        svg += fmt::format(
            "<rect class=\"cell{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
            "fill=\"rgb({},{},70)\" stroke=\"{}\" stroke-width=\"{}\"><title>{}</title></rect>\n",
            c.suspect ? " suspect" : "", label + x * cell, label + y * cell, cell - 1, cell - 1,
            red, green, c.suspect ? "#000" : "#fff", c.suspect ? 3 : 1, htmlEscape(title));
        if (c.suspect) {
          svg += fmt::format(
              "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" "
              "font-weight=\"bold\">!</text>\n",
              label + x * cell + cell / 2, label + y * cell + cell / 2 + 5);
        }
      }
      if (c.suspect) suspects.push_back(title);
    }
    svg += "</svg>\n";
    out += fmt::format("<div class=\"figure diag\">\n<h3>Link matrix: {} ({}; median {})</h3>\n{}",
                       htmlEscape(metric.substr(std::string(kDiagPrefix).size())),
                       latency ? "us" : "GB/s", diagCellNumber(median), svg);
    if (suspects.empty()) {
      out += "<p class=\"healthy\">Healthy: no suspect link.</p>\n";
    } else {
      out += "<ul class=\"suspects\">\n";
      for (const std::string& s : suspects) out += "<li>" + htmlEscape(s) + "</li>\n";
      out += "</ul>\n";
    }
    out += "</div>\n";
  }
  return out;
}

}  // namespace cb
