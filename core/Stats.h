// Sample statistics over iteration times. Percentiles use linear interpolation between closest
// ranks (numpy's default), CV = sample standard deviation / mean.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace cb {

struct Summary {
  size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, p99 = 0, stddev = 0, cv = 0;
};

Summary summarize(std::span<const double> samples);
// q in [0, 1].
double percentile(std::span<const double> samples, double q);
// The median (0 for no samples): the one median every layer uses.
double medianOf(std::span<const double> samples);

enum class Statistic : uint8_t { kMedian, kMean, kMin, kMax, kP99 };
Statistic parseStatistic(std::string_view s);  // median|mean|avg|min|max|p99; UsageError
std::string_view statisticName(Statistic s);
double pick(const Summary& s, Statistic which);

}  // namespace cb
