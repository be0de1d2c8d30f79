// Sample statistics (core/Stats.h): median, interpolated percentiles (numpy's default), CV.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/Error.h"
#include "core/Stats.h"

namespace {

TEST(Stats, MedianOfOddAndEvenCounts) {
  std::vector<double> odd{3, 1, 2};
  EXPECT_DOUBLE_EQ(cb::summarize(odd).median, 2);
  std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(cb::summarize(even).median, 2.5);
  std::vector<double> one{7};
  auto s = cb::summarize(one);
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.p99, 7);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_EQ(s.n, 1u);
}

TEST(Stats, PercentileInterpolatesLikeNumpy) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  // numpy.percentile(range(1, 101), 99) == 99.01
  EXPECT_NEAR(cb::percentile(v, 0.99), 99.01, 1e-12);
  EXPECT_NEAR(cb::summarize(v).p99, 99.01, 1e-12);
  EXPECT_DOUBLE_EQ(cb::percentile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(cb::percentile(v, 1.0), 100);
  EXPECT_DOUBLE_EQ(cb::percentile(v, 0.5), 50.5);
  std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(cb::percentile(ten, 0.99), 9.91, 1e-12);  // 9 + 0.91 * (10 - 9)
  EXPECT_NEAR(cb::percentile(ten, 0.25), 3.25, 1e-12);
}

TEST(Stats, MeanStddevAndCv) {
  std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  auto s = cb::summarize(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);  // sample (n - 1) deviation
  EXPECT_NEAR(s.cv, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
}

TEST(Stats, EmptyInputGivesZeros) {
  std::vector<double> none;
  auto s = cb::summarize(none);
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(cb::percentile(none, 0.5), 0);
}

TEST(Stats, ParseAndPickStatistic) {
  EXPECT_EQ(cb::parseStatistic("median"), cb::Statistic::kMedian);
  EXPECT_EQ(cb::parseStatistic("MEAN"), cb::Statistic::kMean);
  EXPECT_EQ(cb::parseStatistic("avg"), cb::Statistic::kMean);
  EXPECT_EQ(cb::parseStatistic(" min "), cb::Statistic::kMin);
  EXPECT_EQ(cb::parseStatistic("max"), cb::Statistic::kMax);
  EXPECT_EQ(cb::parseStatistic("p99"), cb::Statistic::kP99);
  for (const char* bad : {"", "p50", "average", "mode"}) {
    EXPECT_THROW(cb::parseStatistic(bad), cb::UsageError) << bad;
  }
  for (auto s : {cb::Statistic::kMedian, cb::Statistic::kMean, cb::Statistic::kMin,
                 cb::Statistic::kMax, cb::Statistic::kP99}) {
    EXPECT_EQ(cb::parseStatistic(cb::statisticName(s)), s);
  }
  cb::Summary s;
  s.median = 1;
  s.mean = 2;
  s.min = 3;
  s.max = 4;
  s.p99 = 5;
  EXPECT_EQ(cb::pick(s, cb::Statistic::kMedian), 1);
  EXPECT_EQ(cb::pick(s, cb::Statistic::kMean), 2);
  EXPECT_EQ(cb::pick(s, cb::Statistic::kMin), 3);
  EXPECT_EQ(cb::pick(s, cb::Statistic::kMax), 4);
  EXPECT_EQ(cb::pick(s, cb::Statistic::kP99), 5);
}

}  // namespace
