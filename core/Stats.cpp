#include "core/Stats.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {
namespace {

double sortedPercentile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

}  // namespace

double percentile(std::span<const double> samples, double q) {
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  return sortedPercentile(v, q);
}

double medianOf(std::span<const double> samples) { return percentile(samples, 0.5); }

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = sortedPercentile(v, 0.5);
  s.p99 = sortedPercentile(v, 0.99);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.n - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  return s;
}

Statistic parseStatistic(std::string_view s) {
  auto v = toLower(trim(s));
  if (v == "median") return Statistic::kMedian;
  if (v == "mean" || v == "avg") return Statistic::kMean;
  if (v == "min") return Statistic::kMin;
  if (v == "max") return Statistic::kMax;
  if (v == "p99") return Statistic::kP99;
  throw UsageError(fmt::format("unknown statistic '{}' (expected median, mean, min, max, p99)", s));
}

std::string_view statisticName(Statistic s) {
  static constexpr std::string_view kNames[] = {"median", "mean", "min", "max", "p99"};
  return kNames[static_cast<size_t>(s)];
}

double pick(const Summary& s, Statistic which) {
  switch (which) {
    case Statistic::kMedian: return s.median;
    case Statistic::kMean: return s.mean;
    case Statistic::kMin: return s.min;
    case Statistic::kMax: return s.max;
    case Statistic::kP99: return s.p99;
  }
  return s.median;
}

}  // namespace cb
