// The HTML report's drawing kit: escaping, tick labels, log and linear axes and the SVG charts
// (no script, no external asset). See HtmlReport.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

#include "results/HtmlReport.h"

namespace cb {

std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) {
          out += "\xEF\xBF\xBD";  // U+FFFD: control characters are not text
        } else {
          out += c;
        }
    }
  }
  return out;
}

namespace {

// Shortest fixed form with at most `decimals` decimals: 1.50 -> "1.5", 2.00 -> "2".
std::string trimmedFixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

std::string sizeTickLabel(double bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  double v = bytes;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return trimmedFixed(v, 2) + kUnits[u];
}

std::string numberTickLabel(double value) {
  if (value == 0) return "0";
  double a = std::fabs(value);
  if (a >= 1e4 || a < 1e-3) {
    // "1.50e+06" -> "1.5e6", "2.00e-05" -> "2e-5".
    std::string s = fmt::format("{:.2e}", value);
    size_t e = s.find('e');
    std::string mantissa = s.substr(0, e);
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
    char sign = s[e + 1];
    std::string digits = s.substr(e + 2);
    while (digits.size() > 1 && digits[0] == '0') digits.erase(0, 1);
    return mantissa + "e" + (sign == '-' ? "-" : "") + digits;
  }
  return fmt::format("{:.6g}", value);
}

std::string microsTickLabel(double us) {
  double a = std::fabs(us);
  if (a == 0 || a < 1e3) return numberTickLabel(us) + " us";
  if (a < 1e6) return numberTickLabel(us / 1e3) + " ms";
  return numberTickLabel(us / 1e6) + " s";
}

// ---- axes ----

LogScale::LogScale(double lo, double hi, double p0, double p1, int base, int maxTicks)
    : p0_(p0), p1_(p1), base_(base), maxTicks_(maxTicks) {
  double lb = std::log(static_cast<double>(base));
  // The small tolerances keep exact powers (1024 in base 2) on their own exponent.
  int eLo = static_cast<int>(std::floor(std::log(lo) / lb + 1e-9));
  int eHi = static_cast<int>(std::ceil(std::log(hi) / lb - 1e-9));
  if (eHi <= eLo) {
    --eLo;
    eHi = eLo + 2;
  }
  lo_ = std::pow(base, eLo);
  hi_ = std::pow(base, eHi);
}

double LogScale::pixel(double value) const {
  double f = (std::log(value) - std::log(lo_)) / (std::log(hi_) - std::log(lo_));
  return p0_ + f * (p1_ - p0_);
}

std::vector<AxisTick> LogScale::ticks(TickFormat format) const {
  double lb = std::log(static_cast<double>(base_));
  int eLo = static_cast<int>(std::lround(std::log(lo_) / lb));
  int eHi = static_cast<int>(std::lround(std::log(hi_) / lb));
  auto onStep = [](int e, int step) { return ((e % step) + step) % step == 0; };
  int step = 1;
  for (int candidate : {1, 2, 4, 5, 10, 20, 50}) {
    if (candidate == 4 && base_ != 2) continue;  // every 16x reads well in bytes only
    step = candidate;
    int count = 0;
    for (int e = eLo; e <= eHi; ++e) count += onStep(e, candidate) ? 1 : 0;
    if (count <= maxTicks_) break;
  }
  std::vector<double> values;
  for (int e = eLo; e <= eHi; ++e) {
    if (onStep(e, step)) values.push_back(std::pow(base_, e));
  }
  if (base_ == 10 && eHi - eLo <= 2) {
    for (int e = eLo; e < eHi; ++e) {
      values.push_back(2 * std::pow(10.0, e));
      values.push_back(5 * std::pow(10.0, e));
    }
  }
  std::sort(values.begin(), values.end());
  std::vector<AxisTick> ticks;
  for (double v : values) {
    std::string label = format == TickFormat::kBytes    ? sizeTickLabel(v)
                        : format == TickFormat::kMicros ? microsTickLabel(v)
                                                        : numberTickLabel(v);
    ticks.push_back({v, pixel(v), std::move(label)});
  }
  return ticks;
}

LinearScale::LinearScale(double lo, double hi, double p0, double p1, int maxTicks)
    : p0_(p0), p1_(p1) {
  double from = std::min(0.0, lo);
  double to = std::max(hi, from);
  if (to <= from) to = from + 1;
  double raw = (to - from) / std::max(1, maxTicks);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  step_ = 10 * magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw * (1 - 1e-9)) {
      step_ = m * magnitude;
      break;
    }
  }
  lo_ = std::floor(from / step_ + 1e-9) * step_;
  hi_ = std::ceil(to / step_ - 1e-9) * step_;
  if (hi_ <= lo_) hi_ = lo_ + step_;
}

double LinearScale::pixel(double value) const {
  return p0_ + (value - lo_) / (hi_ - lo_) * (p1_ - p0_);
}

std::vector<AxisTick> LinearScale::ticks() const {
  std::vector<AxisTick> ticks;
  long n = std::lround((hi_ - lo_) / step_);
  for (long i = 0; i <= n; ++i) {
    double v = lo_ + static_cast<double>(i) * step_;
    if (std::fabs(v) < step_ * 1e-9) v = 0;
    ticks.push_back({v, pixel(v), numberTickLabel(v)});
  }
  return ticks;
}

// ---- charts ----

namespace {

// Tableau 10: distinguishable, and readable on white.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = static_cast<int>(std::size(kPalette));

std::string px(double v) { return fmt::format("{:.1f}", v); }

bool isLog(AxisKind k) {
  return k == AxisKind::kLog || k == AxisKind::kLogBytes || k == AxisKind::kLogMicros;
}

// One axis of a chart, whichever kind, mapping values to pixels.
class Axis {
 public:
  Axis(AxisKind kind, double lo, double hi, double p0, double p1, size_t categories)
      : kind_(kind), p0_(p0), p1_(p1), categories_(categories) {
    if (isLog(kind)) {
      // Sizes get a label every 4x up to 25 powers of two (8 B..64 MiB), not every 32x.
      if (kind == AxisKind::kLogBytes) {
        log_.emplace(lo, hi, p0, p1, 2, 13);
      } else {
        log_.emplace(lo, hi, p0, p1, 10);
      }
    } else if (kind == AxisKind::kLinear) {
      linear_.emplace(lo, hi, p0, p1);
    } else {
      categories_ = std::max<size_t>(categories_, static_cast<size_t>(std::max(0.0, hi)) + 1);
    }
  }
  double pixel(double v) const {
    if (log_) return log_->pixel(v);
    if (linear_) return linear_->pixel(v);
    // Categories sit in the middle of equal slots.
    return p0_ + (v + 0.5) / static_cast<double>(categories_) * (p1_ - p0_);
  }
  std::vector<AxisTick> ticks(const std::vector<std::string>& labels) const {
    if (log_) {
      return log_->ticks(kind_ == AxisKind::kLogBytes    ? TickFormat::kBytes
                         : kind_ == AxisKind::kLogMicros ? TickFormat::kMicros
                                                         : TickFormat::kNumber);
    }
    if (linear_) return linear_->ticks();
    // At most 12 labels: every k-th category.
    size_t every = (categories_ + 11) / 12;
    std::vector<AxisTick> ticks;
    for (size_t i = 0; i < categories_; i += every) {
      double v = static_cast<double>(i);
      ticks.push_back({v, pixel(v), i < labels.size() ? labels[i] : std::to_string(i)});
    }
    return ticks;
  }

 private:
  AxisKind kind_;
  double p0_, p1_;
  size_t categories_;
  std::optional<LogScale> log_;
  std::optional<LinearScale> linear_;
};

std::string valueText(AxisKind kind, double v, const std::vector<std::string>& categories) {
  switch (kind) {
    case AxisKind::kLogBytes:
      return v < 1024 ? fmt::format("{} B", v) : fmt::format("{} ({} B)", sizeTickLabel(v), v);
    case AxisKind::kLogMicros: return fmt::format("{:.4g} us", v);
    case AxisKind::kCategory: {
      auto i = static_cast<size_t>(v);
      return i < categories.size() ? categories[i] : fmt::format("{}", v);
    }
    default: return fmt::format("{:.4g}", v);
  }
}

bool plottable(AxisKind kind, double v) {
  return std::isfinite(v) && (!isLog(kind) || v > 0) && (kind != AxisKind::kCategory || v >= 0);
}

}  // namespace

// Past the ten palette colours, hues spaced by the golden angle in two lightness bands: every
// line of a chart keeps a colour of its own however many variants there are.
std::string paletteColor(int index) {
  if (index >= 0 && index < kPaletteSize) return kPalette[index];
  int k = std::abs(index - kPaletteSize);
  double hue = std::fmod(20.0 + k * 137.508, 360.0);
  return fmt::format("hsl({:.0f},{}%,{}%)", hue, k % 2 ? 45 : 60, k % 2 ? 38 : 52);
}

std::string renderSvgChart(const ChartSpec& spec) {
  // Points each axis can show, per series, sorted by x.
  std::vector<std::vector<std::pair<double, double>>> kept(spec.series.size());
  double xLo = std::numeric_limits<double>::infinity(), xHi = -xLo, yLo = xLo, yHi = -xLo;
  for (size_t i = 0; i < spec.series.size(); ++i) {
    for (auto [x, y] : spec.series[i].points) {
      if (!plottable(spec.x, x) || !plottable(spec.y, y)) continue;
      kept[i].emplace_back(x, y);
      xLo = std::min(xLo, x);
      xHi = std::max(xHi, x);
      yLo = std::min(yLo, y);
      yHi = std::max(yHi, y);
    }
    std::stable_sort(kept[i].begin(), kept[i].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  if (!(xLo <= xHi)) {
    return fmt::format(
        "<div class=\"nodata\"><b>{}</b><br>nothing to plot (no positive values)</div>\n",
        htmlEscape(spec.title));
  }
  const double left = 70, right = 16, top = 30, bottom = 52;
  const double w = spec.width, h = spec.height;
  const double x0 = left, x1 = w - right, y0 = h - bottom, y1 = top;
  Axis xAxis(spec.x, xLo, xHi, x0, x1, spec.categories.size());
  Axis yAxis(spec.y, yLo, yHi, y0, y1, 0);

  std::string title = htmlEscape(spec.title);
  std::string out = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0} {1}\" "
      "width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"{2}\">\n<title>{2}</title>\n"
      "<text class=\"chart-title\" x=\"{3}\" y=\"18\" text-anchor=\"middle\">{2}</text>\n"
      "<rect class=\"frame\" x=\"{4}\" y=\"{5}\" width=\"{6}\" height=\"{7}\"/>\n",
      spec.width, spec.height, title, px(w / 2), px(x0), px(y1), px(x1 - x0), px(y0 - y1));

  out += "<g class=\"grid\">";
  std::string xLabels, yLabels;
  for (const AxisTick& t : xAxis.ticks(spec.categories)) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", px(t.pixel), px(y1),
                       px(y0 + 4));
    xLabels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(t.pixel),
                           px(y0 + 17), htmlEscape(t.label));
  }
  for (const AxisTick& t : yAxis.ticks({})) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>", px(x0 - 4),
                       px(t.pixel), px(x1));
    yLabels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", px(x0 - 7),
                           px(t.pixel + 4), htmlEscape(t.label));
  }
  out += "</g>\n";
  out += fmt::format("<g class=\"axis x\">{}</g>\n<g class=\"axis y\">{}</g>\n", xLabels, yLabels);
  out += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text class=\"axis-title\" transform=\"translate(16 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>\n",
      px((x0 + x1) / 2), px(h - 10), htmlEscape(spec.xTitle), px((y0 + y1) / 2),
      htmlEscape(spec.yTitle));

  out += "<g class=\"data\">\n";
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const ChartSeries& s = spec.series[i];
    if (kept[i].empty()) continue;
    const std::string color = paletteColor(s.color);
    std::string d, dots;
    for (auto [x, y] : kept[i]) {
      double cx = xAxis.pixel(x), cy = yAxis.pixel(y);
      d += fmt::format("{}{},{}", d.empty() ? "M" : " L", px(cx), px(cy));
      dots += fmt::format(
          "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"2.6\" fill=\"{}\"><title>{}: {}, "
          "{} = {}</title></circle>",
          px(cx), px(cy), color, htmlEscape(s.name),
          htmlEscape(valueText(spec.x, x, spec.categories)), htmlEscape(spec.yTitle),
          htmlEscape(valueText(spec.y, y, {})));
    }
    out += fmt::format(
        "<g class=\"series\" data-series=\"{}\"><path class=\"line\" d=\"{}\" stroke=\"{}\"{}/>"
        "{}</g>\n",
        htmlEscape(s.key), d, color, s.dashed ? " stroke-dasharray=\"6 4\"" : "", dots);
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace cb
