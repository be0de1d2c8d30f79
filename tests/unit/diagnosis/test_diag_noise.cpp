// diag links' own repeats (issue 26): "too noisy to judge" when its schedules disagree, so a
// matrix measured beside a compile is neither called healthy nor given a false suspect.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "diagnosis/Diagnosis.h"

namespace cb {
namespace {

// `links` links of 10 GB/s measured in `repeats` schedules, each figure off by a log-normal
// factor of sd `spread`.
std::vector<std::vector<double>> matrix(int links, int repeats, double spread, std::mt19937& rng) {
  std::normal_distribution<double> g(0, spread);
  std::vector<std::vector<double>> m(links);
  for (auto& link : m) {
    for (int r = 0; r < repeats; ++r) link.push_back(10 * std::exp(g(rng)));
  }
  return m;
}

TEST(DiagRepeats, SchedulesThatAgreeCanBeJudged) {
  std::mt19937 rng(1);
  RepeatAgreement a = repeatAgreement(matrix(28, 5, 0.01, rng), 0.07);
  EXPECT_FALSE(a.tooNoisy);
  EXPECT_EQ(a.repeats, 5);
  EXPECT_NEAR(a.spreadPct, 1, 0.6);
  EXPECT_DOUBLE_EQ(a.gap, 0.07);
}

TEST(DiagRepeats, SchedulesThatDisagreeAreTooNoisy) {
  // A compile beside the ranks: a link's figure moves by 20% between schedules. Its median of 5
  // then has a standard error near 11%, beyond half the 7% gap.
  std::mt19937 rng(2);
  RepeatAgreement a = repeatAgreement(matrix(28, 5, 0.20, rng), 0.07);
  EXPECT_TRUE(a.tooNoisy);
  EXPECT_GT(a.spreadPct, 12);
  // The bound is the standard error of the median over the repeats against half the gap: at
  // 5% spread, 5 schedules are enough for a 7% gap and 2 cannot be judged at all.
  EXPECT_FALSE(repeatAgreement(matrix(28, 5, 0.04, rng), 0.07).tooNoisy);
  EXPECT_TRUE(repeatAgreement(matrix(28, 5, 0.04, rng), 0.02).tooNoisy);
  RepeatAgreement two = repeatAgreement(matrix(28, 2, 0.5, rng), 0.07);
  EXPECT_FALSE(two.tooNoisy);
  EXPECT_EQ(two.repeats, 0);
}

TEST(DiagRepeats, OneSlowLinkIsNotNoise) {
  // A link 3x slower in every schedule is a suspect's business, not disagreement: the spread is
  // within each link, and the median link's is taken.
  std::mt19937 rng(3);
  auto m = matrix(28, 5, 0.01, rng);
  for (double& x : m[4]) x /= 3;
  EXPECT_FALSE(repeatAgreement(m, 0.07).tooNoisy);
  // One schedule disturbed for every link (a moment of load) moves each link once: the MAD
  // ignores it.
  for (auto& link : m) link[2] *= 0.5;
  EXPECT_FALSE(repeatAgreement(m, 0.07).tooNoisy);
}

}  // namespace
}  // namespace cb
