// The HTML report as text: escaping of every user string, log and linear axes (tick values and
// pixel positions), SVG paths for given records, the comparison and history sections, and pages
// for runs without results.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/HtmlReport.h"

namespace cb {
namespace {

size_t countOf(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "text does not contain '" << part << "'";
}

ResultRecord result(const std::string& variant, uint64_t size, double timeUs, double busbw) {
  ResultRecord r;
  r.collective = "allreduce";
  r.variant = variant;
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out";
  r.nranks = 2;
  r.sizeBytes = size;
  r.count = size / 4;
  r.timeUs = timeUs;
  r.busbw = busbw;
  r.algbw = busbw;
  r.iterations = 20;
  return r;
}

ReportRun sampleRun(int64_t id, double scale = 1) {
  ReportRun rr;
  rr.run.id = id;
  rr.run.label = "nightly";
  rr.run.status = RunStatus::kOk;
  rr.run.startedAt = "2025-03-01T10:00:00Z";
  rr.run.fingerprint = "abc";
  for (const char* variant : {"ring", "mpi"}) {
    for (uint64_t size = 1024; size <= (1u << 20); size *= 4) {
      double t = 5 + static_cast<double>(size) / 1000.0;
      rr.results.push_back(result(variant, size, t * scale, static_cast<double>(size) / t / 1e3));
    }
  }
  return rr;
}

// ---- escaping ----

TEST(HtmlEscape, EscapesMarkupQuotesAndAmpersands) {
  EXPECT_EQ(htmlEscape("<script>alert(\"x\")</script>"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  EXPECT_EQ(htmlEscape("a & b 'c'"), "a &amp; b &#39;c&#39;");
  EXPECT_EQ(htmlEscape("&amp;"), "&amp;amp;");  // already-escaped text is text too
  EXPECT_EQ(htmlEscape(""), "");
  EXPECT_EQ(htmlEscape("plain ünïcode\ttab\nline"), "plain ünïcode\ttab\nline");
}

TEST(HtmlEscape, ReplacesControlCharacters) {
  EXPECT_EQ(htmlEscape(std::string("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(htmlEscape("\x1b[31m"), "\xEF\xBF\xBD[31m");
}

TEST(HtmlReport, EscapesEveryUserText) {
  const std::string evil = "<script>alert('x')</script>&\"";
  ReportRun rr = sampleRun(7);
  rr.run.label = evil;
  rr.run.commandLine = "collbench run " + evil;
  rr.run.hosts = evil;
  rr.run.environmentJson = "{\"k\": \"" + evil + "\"}";
  rr.results[0].variant = evil;
  rr.results[1].status = ResultStatus::kFailed;
  rr.results[1].message = evil;
  HtmlReportInput input;
  input.title = evil;
  input.commandLine = evil;
  input.runs.push_back(rr);
  input.compare.emplace(rr, rr);
  input.history = HtmlReportInput::History{evil, std::nullopt, {rr}};
  std::string page = renderHtmlReport(input);
  // The page's own script is the only one; no user text survives unescaped.
  EXPECT_EQ(countOf(page, "<script>"), 1u);
  EXPECT_EQ(countOf(page, "</script>"), 1u);
  EXPECT_EQ(page.find(evil), std::string::npos);
  EXPECT_GT(countOf(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"), 5u);
}

// ---- axes ----

TEST(LogScale, BytesDomainAndTickPositions) {
  // 1K..1M in base 2 over 0..100 px: each power of two is 10 px further.
  LogScale s(1024, 1 << 20, 0, 100, 2);
  EXPECT_DOUBLE_EQ(s.domainLo(), 1024);
  EXPECT_DOUBLE_EQ(s.domainHi(), 1 << 20);
  EXPECT_NEAR(s.pixel(1024), 0, 1e-9);
  EXPECT_NEAR(s.pixel(32768), 50, 1e-9);
  EXPECT_NEAR(s.pixel(1 << 20), 100, 1e-9);
  // 11 powers > 8 ticks: every second exponent (10, 12, ..., 20).
  std::vector<AxisTick> ticks = s.ticks(TickFormat::kBytes);
  ASSERT_EQ(ticks.size(), 6u);
  EXPECT_EQ(ticks[0].label, "1K");
  EXPECT_EQ(ticks[1].label, "4K");
  EXPECT_NEAR(ticks[1].pixel, 20, 1e-9);
  EXPECT_EQ(ticks[5].label, "1M");
  EXPECT_NEAR(ticks[5].pixel, 100, 1e-9);
}

TEST(LogScale, WidensToEnclosingPowersAndStepsWideRanges) {
  LogScale s(3000, 5e6, 0, 1, 2);
  EXPECT_DOUBLE_EQ(s.domainLo(), 2048);
  EXPECT_DOUBLE_EQ(s.domainHi(), 8 << 20);
  // 8 B .. 16 G: 32 exponents; step 4 (every 16x) gives 8 ticks at exponents 4, 8, ..., 32.
  LogScale wide(8, 16.0 * (1ull << 30), 0, 1, 2);
  std::vector<AxisTick> t = wide.ticks(TickFormat::kBytes);
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0].label, "16");
  EXPECT_EQ(t[1].label, "256");
  EXPECT_EQ(t[7].label, "4G");
  EXPECT_NEAR(t[1].pixel, 5.0 / 31.0, 1e-12);  // 2^8 in the domain 2^3 .. 2^34
  // 41 exponents: steps 4 and 5 give too many; 10 gives 1, 1K, 1M, 1G, 1T.
  LogScale wider(1, static_cast<double>(1ull << 40), 0, 1, 2);
  EXPECT_EQ(wider.ticks(TickFormat::kBytes).size(), 5u);
}

TEST(LogScale, DecadesWithMinorTicksAndReversedPixels) {
  // A y axis: bottom pixel 300, top 0; values 12..80 sit in one decade 10..100.
  LogScale s(12, 80, 300, 0, 10);
  EXPECT_DOUBLE_EQ(s.domainLo(), 10);
  EXPECT_DOUBLE_EQ(s.domainHi(), 100);
  std::vector<AxisTick> t = s.ticks();
  std::vector<std::string> labels;
  for (const AxisTick& tick : t) labels.push_back(tick.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"10", "20", "50", "100"}));
  EXPECT_NEAR(t[0].pixel, 300, 1e-9);
  EXPECT_NEAR(t[3].pixel, 0, 1e-9);
  EXPECT_NEAR(s.pixel(std::sqrt(1000.0)), 150, 1e-9);  // the middle of the decade
  // A single value that is a power widens by one power each side.
  LogScale one(100, 100, 0, 1, 10);
  EXPECT_DOUBLE_EQ(one.domainLo(), 10);
  EXPECT_DOUBLE_EQ(one.domainHi(), 1000);
  // Many decades: no minor ticks, labels in short exponent form.
  LogScale many(0.0005, 2e7, 0, 1, 10);
  std::vector<AxisTick> m = many.ticks();
  EXPECT_EQ(m.front().label, "1e-4");
  EXPECT_EQ(m.back().label, "1e8");
  EXPECT_LE(m.size(), 8u);
}

TEST(LinearScale, NiceStepsFromZero) {
  LinearScale s(3, 87, 200, 0);
  EXPECT_DOUBLE_EQ(s.domainLo(), 0);
  EXPECT_DOUBLE_EQ(s.domainHi(), 100);
  std::vector<AxisTick> t = s.ticks();
  ASSERT_EQ(t.size(), 6u);  // 0, 20, ..., 100
  EXPECT_EQ(t[1].label, "20");
  EXPECT_NEAR(t[1].pixel, 160, 1e-9);
  EXPECT_NEAR(s.pixel(50), 100, 1e-9);
  LinearScale flat(0, 0, 0, 1);  // nothing but zeros still makes an axis
  EXPECT_GT(flat.domainHi(), flat.domainLo());
}

TEST(TickLabels, SizesAndNumbers) {
  EXPECT_EQ(sizeTickLabel(8), "8");
  EXPECT_EQ(sizeTickLabel(1024), "1K");
  EXPECT_EQ(sizeTickLabel(1536), "1.5K");
  EXPECT_EQ(sizeTickLabel(3 << 20), "3M");
  EXPECT_EQ(sizeTickLabel(16.0 * (1ull << 30)), "16G");
  EXPECT_EQ(numberTickLabel(0.1), "0.1");
  EXPECT_EQ(numberTickLabel(250), "250");
  EXPECT_EQ(numberTickLabel(1e6), "1e6");
  EXPECT_EQ(numberTickLabel(0.00002), "2e-5");
  EXPECT_EQ(numberTickLabel(0), "0");
  EXPECT_EQ(numberTickLabel(1.5e6), "1.5e6");
  EXPECT_EQ(numberTickLabel(10000), "1e4");
  EXPECT_EQ(numberTickLabel(5000), "5000");
  EXPECT_EQ(microsTickLabel(0.5), "0.5 us");
  EXPECT_EQ(microsTickLabel(100), "100 us");
  EXPECT_EQ(microsTickLabel(2000), "2 ms");
  EXPECT_EQ(microsTickLabel(3e6), "3 s");
  LogScale time(3, 2e6, 0, 1, 10);
  std::vector<AxisTick> t = time.ticks(TickFormat::kMicros);
  ASSERT_EQ(t.size(), 8u);  // 1 us .. 10 s
  EXPECT_EQ(t[3].label, "1 ms");
  EXPECT_EQ(t[7].label, "10 s");
}

// ---- charts ----

// The "M x,y L x,y ..." of every <path class="line"> in order.
std::vector<std::string> pathData(const std::string& svg) {
  std::vector<std::string> out;
  std::regex re("<path class=\"line\" d=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

TEST(SvgChart, AxesAndPathsAtComputedPixels) {
  ChartSpec spec;
  spec.title = "allreduce: busbw";
  spec.xTitle = "size (bytes)";
  spec.yTitle = "busbw (GB/s)";
  spec.width = 600;
  spec.height = 340;
  // x 1K..1M (domain exactly that), y 1..100 (domain exactly that).
  spec.series.push_back({"ring", "v0", 0, false, {{1024, 1}, {1 << 20, 100}, {32768, 10}}});
  spec.series.push_back({"mpi", "v1", 1, true, {{1024, 2}, {0, 5}, {4096, -1}}});
  std::string svg = renderSvgChart(spec);
  EXPECT_TRUE(contains(svg, "<svg class=\"chart\""));
  EXPECT_TRUE(contains(svg, "viewBox=\"0 0 600 340\""));
  EXPECT_TRUE(contains(svg, ">size (bytes)</text>"));
  EXPECT_TRUE(contains(svg, ">busbw (GB/s)</text>"));
  EXPECT_TRUE(contains(svg, ">1K</text>"));
  EXPECT_TRUE(contains(svg, ">1M</text>"));
  EXPECT_TRUE(contains(svg, ">100</text>"));
  // Plot area: x 70..584, y 288 (bottom) .. 30 (top). Points sorted by x.
  std::vector<std::string> d = pathData(svg);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "M70.0,288.0 L327.0,159.0 L584.0,30.0");
  // Size 0 and busbw -1 cannot sit on log axes: one point left.
  EXPECT_EQ(d[1], "M70.0,249.2");
  EXPECT_TRUE(contains(svg, "stroke-dasharray"));
  EXPECT_EQ(countOf(svg, "<circle"), 4u);
  EXPECT_TRUE(contains(svg, "<title>ring: 32K (32768 B), busbw (GB/s) = 10</title>"));
}

TEST(SvgChart, NothingToPlot) {
  ChartSpec spec;
  spec.title = "a <b>";
  spec.series.push_back({"ring", "v0", 0, false, {{1024, 0}, {0, 3}}});
  std::string out = renderSvgChart(spec);
  EXPECT_EQ(out.find("<svg"), std::string::npos);
  EXPECT_TRUE(contains(out, "class=\"nodata\""));
  EXPECT_TRUE(contains(out, "a &lt;b&gt;"));
}

TEST(SvgChart, CategoriesJoinAcrossMissingPoints) {
  ChartSpec spec;
  spec.x = AxisKind::kCategory;
  spec.y = AxisKind::kLinear;
  spec.categories = {"#1", "#2", "#3", "#4"};
  const double nan = std::nan("");
  spec.series.push_back({"ring @ 1M", "v0", 0, false, {{0, 10}, {1, nan}, {2, 20}, {3, 40}}});
  std::string svg = renderSvgChart(spec);
  std::vector<std::string> d = pathData(svg);
  ASSERT_EQ(d.size(), 1u);
  // Slots of 128.5 px from x = 70; y 0..40 over 288..30.
  EXPECT_EQ(d[0], "M134.2,223.5 L391.2,159.0 L519.8,30.0");
  EXPECT_EQ(countOf(svg, "<circle"), 3u);
  EXPECT_TRUE(contains(svg, ">#3</text>"));
}

// ---- the page ----

TEST(HtmlReport, RunSectionHasChartsPerGroupAndLinesPerVariant) {
  HtmlReportInput input;
  input.generator = "collbench test";
  ReportRun rr = sampleRun(3);
  ResultRecord other = result("ring", 4096, 9, 0.5);
  other.placement = "in";
  rr.results.push_back(other);
  input.runs.push_back(rr);
  std::string page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "<!DOCTYPE html>"));
  EXPECT_TRUE(contains(page, "id=\"run-3\""));
  EXPECT_TRUE(contains(page, "allreduce · float · sum · out-of-place · 2 ranks"));
  EXPECT_TRUE(contains(page, "allreduce · float · sum · in-place · 2 ranks"));
  // Two groups, each a busbw and a latency chart; out-of-place has two variants.
  EXPECT_EQ(countOf(page, "<svg class=\"chart\""), 4u);
  EXPECT_EQ(countOf(page, "<path class=\"line\""), 2u * 2u + 2u);
  EXPECT_EQ(countOf(page, "data-series=\"v0\""), 2u * 3u);  // per group: a button, 2 series
  EXPECT_TRUE(contains(page, "data-report=\"loading\""));
  // Self-contained: nothing is fetched.
  EXPECT_EQ(countOf(page, "http://"), countOf(page, "http://www.w3.org/2000/svg"));
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

// The verdict lines `show` prints (against the bound, and for its kind) head the run's section.
TEST(HtmlReport, ShowsTheRunsVerdictLines) {
  HtmlReportInput input;
  ReportRun rr = sampleRun(4);
  rr.verdicts =
      "# verdict allreduce nccl: best 368.69 GB/s busbw: normal <82%>; for its kind: "
      "published 8x H100, 1 node allreduce figures at 8 GiB\n";
  input.runs.push_back(rr);
  std::string page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page,
                       "<pre class=\"verdicts\"># verdict allreduce nccl: best 368.69 GB/s "
                       "busbw: normal &lt;82%&gt;; for its kind: published 8x H100"))
      << page.substr(0, 2000);
  input.runs.front().verdicts.clear();
  EXPECT_FALSE(contains(renderHtmlReport(input), "class=\"verdicts\""));
}

TEST(HtmlReport, EmptyRunsAndEmptyInput) {
  HtmlReportInput none;
  std::string page = renderHtmlReport(none);
  EXPECT_TRUE(contains(page, "Nothing to show"));
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  EXPECT_TRUE(contains(page, "</html>"));

  HtmlReportInput input;
  ReportRun empty;
  empty.run.id = 9;
  input.runs.push_back(empty);
  // A run whose only result failed: its group is listed, the charts say nothing to plot.
  ReportRun failed;
  failed.run.id = 10;
  failed.results.push_back(result("ring", 1024, 0, 0));
  failed.results[0].status = ResultStatus::kFailed;
  failed.results[0].message = "timeout";
  input.runs.push_back(failed);
  page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "No results stored for this run."));
  EXPECT_TRUE(contains(page, "Not plotted: 1 failed"));
  EXPECT_TRUE(contains(page, "failed: timeout"));
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  EXPECT_EQ(countOf(page, "class=\"nodata\""), 2u);
}

TEST(HtmlReport, ComparisonOverlaysAndTabulatesChanges) {
  HtmlReportInput input;
  ReportRun base = sampleRun(1);
  ReportRun cand = sampleRun(2, 2.0);  // twice the time, same busbw figures
  for (ResultRecord& r : cand.results) *r.busbw *= 0.5;
  cand.results.pop_back();  // one case only the baseline has
  input.compare.emplace(base, cand);
  std::string page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "run #1 (baseline) → run #2 (candidate)"));
  EXPECT_EQ(countOf(page, "<svg class=\"chart\""), 2u);
  // Per variant: the baseline dashed and the candidate solid, in both charts.
  EXPECT_EQ(countOf(page, "<path class=\"line\""), 8u);
  EXPECT_EQ(countOf(page, "stroke-dasharray"), 4u);
  // Without the test's verdicts nothing is coloured, however large the change.
  EXPECT_TRUE(contains(page,
                       "<b>11 cases in common</b>: 0 regressions, 0 improvements, 11 "
                       "untested or inconclusive"));
  EXPECT_EQ(countOf(page, "<table class=\"data change\">"), 1u);
  EXPECT_EQ(countOf(page, "<td class=\"num\">-50.0%</td>"), 11u);
  EXPECT_EQ(countOf(page, " worse\""), 0u);
  EXPECT_TRUE(contains(page, "No test was run: nothing is coloured."));
  // With verdicts: one regression and one "same" case, each coloured as the test says (a -50%
  // change the test calls "same" stays plain).
  HtmlReportInput::Verdicts verdicts;
  CaseComparison regression, same;
  regression.key = CaseKey::of(input.compare->first.results[0]);
  regression.verdict = Verdict::kRegression;
  same.key = CaseKey::of(input.compare->first.results[1]);
  same.verdict = Verdict::kSame;
  verdicts.cases.emplace(regression.key, regression);
  verdicts.cases.emplace(same.key, same);
  verdicts.sides = "run 1 vs run 2";
  verdicts.summary = "1 regression";
  input.verdicts = verdicts;
  page = renderHtmlReport(input);
  EXPECT_EQ(countOf(page, "<td class=\"num worse\">-50.0%</td>"), 1u);
  EXPECT_EQ(countOf(page, "<td class=\"num worse\">+100.0%</td>"), 1u);
  EXPECT_EQ(countOf(page, "<td class=\"verdict worse\">regression</td>"), 1u);
  EXPECT_EQ(countOf(page, "<td class=\"verdict\">same</td>"), 1u);
  EXPECT_TRUE(contains(page,
                       "<b>11 cases in common</b>: 1 regression, 0 improvements, 9 "
                       "untested or inconclusive"));
  EXPECT_TRUE(contains(page, "over run 1 vs run 2"));
  EXPECT_TRUE(contains(page, "Measured by one run only: 1 case of the baseline, 0 of"));
  EXPECT_EQ(page.find("fingerprints differ"), std::string::npos);
  input.compare->second.run.fingerprint = "other";
  EXPECT_TRUE(contains(renderHtmlReport(input), "fingerprints differ"));
}

TEST(HtmlReport, HistoryTrendAtChosenAndDefaultSizes) {
  HtmlReportInput input;
  HtmlReportInput::History h;
  h.label = "nightly";
  h.runs = {sampleRun(1), sampleRun(2, 1.1), sampleRun(3, 0.9)};
  h.runs[1].results.erase(h.runs[1].results.begin() + 5);  // run 2 lacks ring at 1M
  input.history = h;
  std::string page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "History: label “nightly” (3 runs)"));
  EXPECT_EQ(countOf(page, "<svg class=\"chart\""), 1u);
  EXPECT_TRUE(contains(page, ">ring @ 1M</button>"));
  EXPECT_TRUE(contains(page, ">#2</text>"));
  std::vector<std::string> d = pathData(page);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(countOf(d[0], "L"), 1u);                        // ring: runs 1 and 3 (run 2 lacks it)
  EXPECT_EQ(countOf(d[1], "L"), 2u);                        // mpi: all three runs
  EXPECT_TRUE(contains(page, "<td class=\"num\">-</td>"));  // run 2's ring cell

  input.history->sizeBytes = 4096;
  page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, ">ring @ 4K</button>"));
  input.history->sizeBytes = 3;
  EXPECT_TRUE(contains(renderHtmlReport(input), "has a result at 3 bytes"));
  input.history->runs.clear();
  EXPECT_TRUE(contains(renderHtmlReport(input), "No runs carry the label"));
}

// ---- point-to-point runs, many variants, size labels ----

ReportRun p2pRun(const std::string& test, int worldSize, bool allPairs) {
  ReportRun rr;
  rr.run.id = 7;
  rr.run.worldSize = worldSize;
  rr.run.status = RunStatus::kOk;
  for (const char* transport : {"shm", "mpi"}) {
    for (int a = 0; a < worldSize; ++a) {
      for (int b = a + 1; b < worldSize; ++b) {
        if (!allPairs && (a != 0 || b != 1)) continue;
        std::string variant = transport;
        if (a != 0 || b != 1) variant += fmt::format("@{}-{}", a, b);
        for (uint64_t size = 1; size <= 4096; size *= 64) {
          ResultRecord r = result(variant, size, 2 + a + b, 0.1 * (1 + a + b));
          r.collective = test;
          r.dtype = "uint8";
          r.op = "none";
          rr.results.push_back(r);
        }
      }
    }
  }
  return rr;
}

TEST(HtmlReport, PointToPointChartsNameTheRunsRanksAndPlotTheLink) {
  HtmlReportInput input;
  input.runs.push_back(p2pRun("bw", 4, false));
  std::string page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "bw · point-to-point · pairs of a 4-rank run"));
  EXPECT_FALSE(contains(page, "2 ranks"));
  EXPECT_FALSE(contains(page, "busbw (GB/s)</text>"));
  EXPECT_TRUE(contains(page, ">bandwidth (GB/s)</text>"));
  EXPECT_EQ(countOf(page, "<svg class=\"chart\""), 1u);  // one chart, a line per transport
  EXPECT_EQ(countOf(page, "<path class=\"line\""), 2u);
}

TEST(HtmlReport, AllPairsGetAChartPerTransportAndABandPastSixPairs) {
  HtmlReportInput input;
  input.runs.push_back(p2pRun("latency", 4, true));  // 6 pairs: a line each
  std::string page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "latency over shm: 6 pairs"));
  EXPECT_EQ(countOf(page, "<svg class=\"chart\""), 2u);
  EXPECT_EQ(countOf(page, "<path class=\"line\""), 12u);
  input.runs[0] = p2pRun("bw", 5, true);  // 10 pairs: slowest, median, fastest
  page = renderHtmlReport(input);
  EXPECT_TRUE(contains(page, "bw over mpi: 10 pairs"));
  EXPECT_EQ(countOf(page, "<path class=\"line\""), 6u);
  EXPECT_TRUE(contains(page, "shm slowest pair"));
  EXPECT_TRUE(contains(page, "mpi median pair"));
}

TEST(HtmlReport, EveryVariantKeepsItsOwnColour) {
  HtmlReportInput input;
  ReportRun rr;
  rr.run.id = 1;
  for (int v = 0; v < 24; ++v) rr.results.push_back(result(fmt::format("v{}", v), 1024, 5, 1));
  input.runs.push_back(rr);
  std::string page = renderHtmlReport(input);
  std::set<std::string> colours;
  for (size_t at = page.find("class=\"swatch\" style=\"background:"); at != std::string::npos;
       at = page.find("class=\"swatch\" style=\"background:", at + 1)) {
    size_t from = page.find(':', at + 30) + 1;
    colours.insert(page.substr(from, page.find('"', from) - from));
  }
  EXPECT_EQ(colours.size(), 24u);
}

TEST(SvgChart, SizeAxisLabelsEveryFourTimes) {
  ChartSpec spec;
  spec.series.push_back({"ring", "v0", 0, false, {{8, 1}, {64 << 20, 2}}});
  std::string svg = renderSvgChart(spec);
  // 8 B..64 MiB: 24 powers of two, a label at every even one (16, 64, 256, 1K, ..., 64M).
  for (const char* label : {">16</text>", ">64</text>", ">256</text>", ">1K</text>", ">4K</text>",
                            ">1M</text>", ">16M</text>", ">64M</text>"}) {
    EXPECT_TRUE(contains(svg, label)) << label;
  }
}

TEST(HtmlReport, ReplayDetailTableAndTimeline) {
  // Two ranks, two ops each: a row per op kind and a rectangle per op, in one lane per rank.
  nlohmann::json doc = {
      {"trace", "job_{rank}.json"},
      {"format", "collbench-replay"},
      {"trace_format", "pytorch-et 1.1.0"},
      {"ranks", 2},
      {"hash", "fnv1a64:1"},
      {"notes", {"<shrunk>"}},
      {"rows",
       {{{"op", "allreduce"},
         {"group", ""},
         {"dtype", "float"},
         {"bytes", 448},
         {"instances", 1},
         {"time_us", 12.5},
         {"recorded_us", 25.0},
         {"ratio", 0.5}},
        {{"op", "alltoallv"},
         {"group", "1"},
         {"dtype", "int32"},
         {"bytes", 1536},
         {"instances", 1},
         {"time_us", 30.0}}}},
      {"timeline",
       {{{{"lane", "comm"}, {"name", "allreduce 448 B"}, {"start_us", 0}, {"end_us", 12}},
         {{"lane", "comm"}, {"name", "alltoallv 1536 B"}, {"start_us", 12}, {"end_us", 40}}},
        {{{"lane", "comm"}, {"name", "allreduce 448 B"}, {"start_us", 0}, {"end_us", 13}},
         {{"lane", "comm"}, {"name", "alltoallv 1536 B"}, {"start_us", 13}, {"end_us", 42}}}}}};
  const std::string html = renderReplayDetail(doc.dump());
  EXPECT_NE(html.find("<td>allreduce</td><td>world</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("(pytorch-et 1.1.0, 2 rank(s)"), std::string::npos);
  EXPECT_NE(html.find("<td>25.0</td><td>0.50</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>-</td><td>-</td>"), std::string::npos);  // nothing recorded
  EXPECT_NE(html.find("&lt;shrunk&gt;"), std::string::npos);        // escaped
  size_t rects = 0;
  for (size_t at = html.find("<rect"); at != std::string::npos; at = html.find("<rect", at + 1)) {
    ++rects;
  }
  EXPECT_EQ(rects, 4u);
  EXPECT_NE(html.find("<title>rank 1: alltoallv 1536 B (13.0 to 42.0 us)</title>"),
            std::string::npos);
  EXPECT_NE(renderReplayDetail("{").find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace cb
