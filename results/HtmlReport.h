// `collbench report`: one self-contained HTML page (inline CSS, inline SVG charts drawn here in
// C++, a few lines of inline JavaScript for legends; no network, no external fonts) showing stored
// runs: busbw and latency against size on log scales, one line per variant, per collective, dtype,
// op and placement of each run; two runs overlaid with a table of changes; and a history trend
// (busbw at one size over the runs carrying a label).
//
// Pure functions over records (no database, no I/O), so the page is unit-tested as text. Every
// piece of text that comes from a record or the user goes through htmlEscape.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "results/Case.h"
#include "results/Compare.h"
#include "results/Records.h"

namespace cb {

// Text for HTML content and quoted attribute values: & < > " ' become entities, and control
// characters other than tab, newline and carriage return become U+FFFD. The same text is
// well-formed XML 1.0 (which allows no control characters, not even as references): JUnit reports
// use it too.
std::string htmlEscape(std::string_view text);

// Sizes as tick labels: 8 -> "8", 1024 -> "1K", 3 << 20 -> "3M", 1536 -> "1.5K".
std::string sizeTickLabel(double bytes);
// Axis numbers: "0.01", "250", and from 1e4 up or below 1e-3 the short exponent form "1e6".
std::string numberTickLabel(double value);
// Microseconds in the unit that reads best: 0.5 -> "0.5 us", 2000 -> "2 ms", 3e6 -> "3 s".
std::string microsTickLabel(double us);

enum class TickFormat : uint8_t { kNumber, kBytes, kMicros };

struct AxisTick {
  double value = 0;
  double pixel = 0;
  std::string label;
};

// A logarithmic axis from data [lo, hi] (both > 0) onto pixels [p0, p1]. The domain widens to the
// enclosing powers of `base` (one power more on each side when lo == hi), so ticks sit at the
// ends. Ticks are powers of base at exponents that are multiples of 1, 2, 4 (base 2 only), 5, 10
// or 20 (the smallest step that gives at most maxTicks); a base-10 axis spanning at most two
// decades also gets 2x and 5x ticks.
class LogScale {
 public:
  LogScale(double lo, double hi, double p0, double p1, int base, int maxTicks = 8);
  double pixel(double value) const;
  double domainLo() const { return lo_; }
  double domainHi() const { return hi_; }
  std::vector<AxisTick> ticks(TickFormat format = TickFormat::kNumber) const;

 private:
  double lo_, hi_, p0_, p1_;
  int base_, maxTicks_;
};

// A linear axis from 0 (or lo when negative) to a "nice" maximum (1, 2 or 5 times a power of
// ten, stepped so there are at most maxTicks intervals) onto pixels [p0, p1].
class LinearScale {
 public:
  LinearScale(double lo, double hi, double p0, double p1, int maxTicks = 6);
  double pixel(double value) const;
  double domainLo() const { return lo_; }
  double domainHi() const { return hi_; }
  std::vector<AxisTick> ticks() const;

 private:
  double lo_, hi_, step_, p0_, p1_;
};

// One line of a chart. Points need not be sorted; points an axis cannot show (NaN, infinite, or
// <= 0 on a log axis) are dropped and the line joins its neighbours.
struct ChartSeries {
  std::string name;  // legend text and point tooltips
  std::string key;   // data-series attribute: series with one key toggle together
  int color = 0;     // index into the palette
  bool dashed = false;
  std::vector<std::pair<double, double>> points;
};

// kLogBytes: base 2, size labels; kLogMicros: base 10, time labels; kLog: base 10, numbers.
enum class AxisKind : uint8_t { kLogBytes, kLogMicros, kLog, kLinear, kCategory };

struct ChartSpec {
  std::string title;
  std::string xTitle, yTitle;
  AxisKind x = AxisKind::kLogBytes;
  AxisKind y = AxisKind::kLog;
  std::vector<std::string> categories;  // x labels for kCategory (x = 0, 1, ...)
  std::vector<ChartSeries> series;
  int width = 600, height = 340;
};

// The colour of a series or legend entry: ten palette colours, then hues spaced by the golden
// angle, so every line keeps a colour of its own.
std::string paletteColor(int index);

// An <svg class="chart"> with axes, ticks, grid, and per series a <g class="series"> holding a
// <path class="line"> and a <circle> with a <title> tooltip per point. Without any point to draw
// it returns a <div class="nodata"> saying so instead.
std::string renderSvgChart(const ChartSpec& spec);

struct ReportRun {
  RunRecord run;
  std::vector<ResultRecord> results;  // in the order measured (samples not needed)
  // A training proxy's stored document (Store::runDetail(id, "proxy")), when the run is one.
  std::optional<std::string> proxyJson = std::nullopt;
  // A replay's stored document (Store::runDetail(id, "replay")), when the run is one.
  std::optional<std::string> replayJson = std::nullopt;
  // The run's verdict lines, as `show` prints them ("# verdict allreduce nccl: ...; for its
  // kind: ..."): against the bound and the published figures of its kind (docs/PEAK.md).
  std::string verdicts = {};
};

// The proxy part of a run's section (results/HtmlProxy.cpp): step metrics, calls, the timeline
// of one step per rank and the scaling charts, from the stored proxy document.
std::string renderProxyDetail(const std::string& json);

// A per-rank timeline: `tl` holds one array per rank of {lane ("compute" or "comm"), name,
// start_us, end_us}; a compute lane is drawn above the communication lane only when used.
std::string renderTimelineSvg(const nlohmann::json& tl, const std::string& title,
                              const std::string& axisTitle);

// The replay part of a run's section (results/HtmlReplay.cpp): the trace, every op kind's time
// against the recorded one, and the timeline of one replay per rank, from the stored document.
std::string renderReplayDetail(const std::string& json);

struct HtmlReportInput {
  std::string title = "collbench report";
  std::string generator;        // "collbench 0.4.0"
  std::string generatedAt;      // ISO-8601 UTC
  std::string commandLine;      // of the report command, shown in the footer
  std::vector<ReportRun> runs;  // one section each, in this order
  // Base and candidate of the comparison section (the newest run of each side is drawn).
  std::optional<std::pair<ReportRun, ReportRun>> compare;
  // The verdicts of `collbench compare` over every replicate of both sides (results/Compare.h):
  // the comparison table colours a change only where this test calls it a regression or an
  // improvement. Without them nothing is coloured.
  struct Verdicts {
    std::map<CaseKey, CaseComparison> cases;
    std::string sides;    // "run 12 vs label:pr@last-3 (runs 9, 8, 7)"
    std::string summary;  // compare's summary line
  };
  std::optional<Verdicts> verdicts;
  struct History {
    std::string label;
    std::optional<uint64_t> sizeBytes;  // none: each series at the largest size it measured
    std::vector<ReportRun> runs;        // oldest first
  };
  std::optional<History> history;
};

std::string renderHtmlReport(const HtmlReportInput& input);

}  // namespace cb
