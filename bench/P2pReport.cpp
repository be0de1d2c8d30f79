// Tables of `collbench p2p` (see P2pReport.h).
#include "bench/P2pReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/Stats.h"

namespace cb {
namespace {

bool ok(const P2pPoint& p) { return p.status == ResultStatus::kOk && p.wrong <= 0; }

// Latency with 2 decimals (OSU's FLOAT_PRECISION); bandwidth too, but with 4 below 1 GB/s so
// small messages keep their digits (OSU's MB/s have them).
std::string metricText(P2pTest t, double v) {
  if (t != P2pTest::kLatency && v < 1) return fmt::format("{:.4f}", v);
  return fmt::format("{:.2f}", v);
}

std::string unitName(P2pTest t) { return t == P2pTest::kLatency ? "us" : "GB/s"; }

std::string metricTitle(P2pTest t) {
  return t == P2pTest::kLatency ? "Latency (us)" : "Bandwidth (GB/s)";
}

std::string definition(P2pTest t, int window) {
  switch (t) {
    case P2pTest::kLatency: return "ping-pong, round trip / 2";
    case P2pTest::kBw:
      return fmt::format("window of {} sends, then a 4-byte ack; 1 GB/s = 1e9 B/s", window);
    case P2pTest::kBibw:
      return fmt::format("windows of {} sends both ways at once; 1 GB/s = 1e9 B/s", window);
  }
  return "";
}

}  // namespace

std::string p2pTableHeader(P2pTest test, const std::string& transport, RankPair pair, int window,
                           LinkClass link) {
  std::string out = fmt::format("# Transport: {}   pair {} -> {} (link {})   ({})\n", transport,
                                pair.a, pair.b, linkClassName(link), definition(test, window));
  const std::string u = unitName(test);
  out += fmt::format("{:<10}{:>20}", "# Size", metricTitle(test));
  out += fmt::format("{:>12}{:>12}", fmt::format("Min ({})", u), fmt::format("Max ({})", u));
  if (test == P2pTest::kLatency) out += fmt::format("{:>12}", "P99 (us)");
  out += fmt::format("{:>12}{:>8}\n", "Iterations", "#wrong");
  return out;
}

std::string p2pTableRow(const P2pPoint& p) {
  std::string out = fmt::format("{:<10}", p.bytes);
  if (p.status != ResultStatus::kOk)
    return out + fmt::format("{:>20}  {}\n", resultStatusName(p.status), p.message);
  // Min and max of the metric: for a bandwidth the slowest iteration gives the minimum.
  double lo = p2pMetricForTime(p, p.summary.min), hi = p2pMetricForTime(p, p.summary.max);
  if (p.test != P2pTest::kLatency) std::swap(lo, hi);
  out += fmt::format("{:>20}{:>12}{:>12}", metricText(p.test, p2pMetric(p)), metricText(p.test, lo),
                     metricText(p.test, hi));
  if (p.test == P2pTest::kLatency) out += fmt::format("{:>12.2f}", p.summary.p99 * 1e6);
  out += fmt::format("{:>12}{:>8}\n", p.iterations, p.wrong < 0 ? "-" : std::to_string(p.wrong));
  return out;
}

std::string p2pSideBySide(std::span<const P2pPoint> points) {
  std::vector<std::string> transports;
  std::vector<uint64_t> sizes;
  for (const P2pPoint& p : points) {
    if (std::find(transports.begin(), transports.end(), p.transport) == transports.end()) {
      transports.push_back(p.transport);
    }
    if (std::find(sizes.begin(), sizes.end(), p.bytes) == sizes.end()) sizes.push_back(p.bytes);
  }
  if (transports.size() < 2) return "";
  const P2pTest test = points.front().test;
  const RankPair pair = points.front().pair;
  auto find = [&](const std::string& t, uint64_t bytes) -> const P2pPoint* {
    for (const P2pPoint& p : points) {
      if (p.transport == t && p.bytes == bytes) return &p;
    }
    return nullptr;
  };
  std::vector<size_t> widths;
  for (const auto& t : transports) widths.push_back(std::max<size_t>(12, t.size() + 3));
  std::string out = fmt::format("# Side by side: {} ({}), pair {} -> {}; * = best at each size\n",
                                test == P2pTest::kLatency ? "latency" : "bandwidth", unitName(test),
                                pair.a, pair.b);
  out += fmt::format("{:<10}", "# Size");
  for (size_t i = 0; i < transports.size(); ++i) {
    out += fmt::format("{:>{}} ", transports[i], widths[i] - 1);
  }
  out += "\n";
  std::vector<int> wins(transports.size(), 0);
  for (uint64_t bytes : sizes) {
    std::optional<double> best;
    for (const auto& t : transports) {
      const P2pPoint* p = find(t, bytes);
      if (!p || !ok(*p)) continue;
      double v = p2pMetric(*p);
      if (!best || (p2pLowerIsBetter(test) ? v < *best : v > *best)) best = v;
    }
    out += fmt::format("{:<10}", bytes);
    for (size_t i = 0; i < transports.size(); ++i) {
      const P2pPoint* p = find(transports[i], bytes);
      std::string cell = !p                               ? "-"
                         : p->status != ResultStatus::kOk ? std::string(resultStatusName(p->status))
                         : p->wrong > 0                   ? "WRONG"
                                                          : metricText(test, p2pMetric(*p));
      bool star = p && ok(*p) && best && p2pMetric(*p) == *best;
      if (star) ++wins[i];
      out += fmt::format("{:>{}}{}", cell, widths[i] - 1, star ? "*" : " ");
    }
    out += "\n";
  }
  out += fmt::format("{:<10}", "# wins");
  for (size_t i = 0; i < transports.size(); ++i)
    out += fmt::format("{:>{}} ", wins[i], widths[i] - 1);
  out += "\n";
  return out;
}

std::string p2pMatrix(std::span<const P2pPoint> points, int nranks, uint64_t bytes) {
  std::vector<std::string> transports;
  for (const P2pPoint& p : points) {
    if (p.bytes == bytes &&
        std::find(transports.begin(), transports.end(), p.transport) == transports.end()) {
      transports.push_back(p.transport);
    }
  }
  std::string out;
  for (const std::string& t : transports) {
    const P2pTest test = points.front().test;
    std::vector<std::optional<double>> m(static_cast<size_t>(nranks) * nranks);
    std::vector<std::pair<RankPair, double>> links;
    for (const P2pPoint& p : points) {
      if (p.transport != t || p.bytes != bytes || !ok(p)) continue;
      double v = p2pMetric(p);
      m[static_cast<size_t>(p.pair.a) * nranks + p.pair.b] = v;
      m[static_cast<size_t>(p.pair.b) * nranks + p.pair.a] = v;
      links.emplace_back(p.pair, v);
    }
    if (links.empty()) continue;
    out += fmt::format(
        "#\n# Matrix: {} ({}) at {} B over {}; row i, column j: link i-j (measured once, the lower "
        "rank initiating)\n",
        test == P2pTest::kLatency ? "latency" : "bandwidth", unitName(test), bytes, t);
    out += fmt::format("{:<6}", "#");
    for (int j = 0; j < nranks; ++j) out += fmt::format("{:>10}", j);
    out += "\n";
    for (int i = 0; i < nranks; ++i) {
      out += fmt::format("{:<6}", i);
      for (int j = 0; j < nranks; ++j) {
        const auto& v = m[static_cast<size_t>(i) * nranks + j];
        out += fmt::format("{:>10}", i == j ? "-" : v ? metricText(test, *v) : ".");
      }
      out += "\n";
    }
    const bool lower = p2pLowerIsBetter(test);
    auto worst = std::max_element(links.begin(), links.end(), [&](const auto& x, const auto& y) {
      return lower ? x.second < y.second : x.second > y.second;
    });
    std::vector<double> values;
    for (const auto& l : links) values.push_back(l.second);
    double mid = medianOf(values);
    double ratio = lower ? worst->second / mid : mid / worst->second;
    out +=
        fmt::format("# slowest link over {}: {}-{} at {} {} ({:.2f}x the median link, {} {})\n", t,
                    worst->first.a, worst->first.b, metricText(test, worst->second), unitName(test),
                    std::isfinite(ratio) ? ratio : 0.0, metricText(test, mid), unitName(test));
  }
  return out;
}

void P2pReportSet::skipped(const std::string& transport, const std::string& why) {
  out_.write(fmt::format("# transport {} skipped: {}\n", transport, why));
}

void P2pReportSet::add(const P2pPoint& p) {
  if (havePair_ && !(p.pair == current_)) pairEnd(current_);
  if (!havePair_) {
    if (!all_.empty()) multiplePairs_ = true;
    havePair_ = true;
    current_ = p.pair;
  }
  P2pPoint copy = p;
  copy.samples.clear();
  copy.rankSamples.clear();
  all_.push_back(copy);
  pair_.push_back(copy);
  if (std::find(order_.begin(), order_.end(), p.transport) == order_.end()) {
    order_.push_back(p.transport);
  }
  if (streaming_.empty()) {
    streaming_ = p.transport;
    out_.write("#\n" + p2pTableHeader(p.test, p.transport, p.pair, p.window, p.link));
  }
  if (p.transport == streaming_) {
    out_.write(p2pTableRow(p));
  } else {
    held_[p.transport].push_back(copy);
  }
}

void P2pReportSet::pairEnd(RankPair pair) {
  if (!havePair_ || !(pair == current_)) return;
  for (const std::string& t : order_) {
    auto it = held_.find(t);
    if (it == held_.end() || it->second.empty()) continue;
    const P2pPoint& first = it->second.front();
    std::string text = "#\n" + p2pTableHeader(first.test, t, first.pair, first.window, first.link);
    for (const P2pPoint& p : it->second) text += p2pTableRow(p);
    out_.write(text);
  }
  std::string side = p2pSideBySide(pair_);
  if (!side.empty()) out_.write("#\n" + side);
  streaming_.clear();
  order_.clear();
  held_.clear();
  pair_.clear();
  havePair_ = false;
}

void P2pReportSet::finish(int nranks, uint64_t matrixBytes) {
  if (havePair_) pairEnd(current_);
  if (!multiplePairs_) return;
  std::string m = p2pMatrix(all_, nranks, matrixBytes);
  if (!m.empty()) out_.write(m);
}

}  // namespace cb
