// Comparing runs: run-level statistics for `compare` and `gate`. Pure functions over records (no
// database, no I/O), so every rule is unit-tested on synthetic data. (The Mann-Whitney U test over
// iterations that collbench first used is gone: nothing but its tests called it; docs/GATE.md
// says why the gate tests runs, not iterations.)
//
// The decision rule (also printed by `collbench gate --help`; argued in docs/GATE.md):
//  1. Replicates. The unit of replication is the run: each run (and each cycle of a `-N`
//     repeated sweep) gives one value per case, a quantile of its iterations (--run-value,
//     default the fastest, `min`; the reported value for imported logs). Iterations inside a run
//     are never treated as independent: whole runs shift together on a shared machine, which
//     iteration-level tests cannot see.
//  2. Scale. Values are compared as logarithms (changes are ratios), signed so that larger is
//     worse (time as is, busbw inverted).
//  3. Whole run. Each replicate's level is the median over its cases of its deviation from the
//     cases' means. A two-sample Student t-test over the K baseline and M candidate levels tests
//     a change common to every case (a uniform slowdown). Levels a busy machine disturbed as a
//     whole (modified z-score > 6 within their side, on the scale of the sides' and, when the
//     window describes them, the stored runs' deviations) are set aside first and counted.
//  4. Confined changes. Each case (and each series: a case without its size) is tested on its
//     value minus its replicate's level, which removes the run-to-run shift: a regression
//     confined to one size or one variant stands out of its own run. Holm's method controls
//     the family-wise error over all series and cases; the whole-run test takes alpha/2 and the
//     confined tests alpha/2 (alpha when there is only one level).
//  5. Verdict. --threshold is the change the gate must be able to see. A test regresses when
//     it is significant AND its change is worse than half the threshold (so a change of the
//     threshold is found with the stated power, and tiny significant shifts never fail a
//     build); a case or series only when it also changed itself beyond half the threshold, not
//     only against the rest of its run. When it is not significant but its minimum detectable
//     change (at alpha and the power, default 90%, with the replicates at hand) exceeds the
//     threshold, it is inconclusive and names the replicates per side that would reach it.
//  5b. History. The stored runs of the same environment (the gate's lookback window, History)
//     lend their run-to-run noise: grouped by label (one build each), their spread around
//     their own build's mean, computed on the same quantity as each test (run level, case or
//     series net of its run), joins the pooled variance with its degrees of freedom, unless the
//     sides' own runs spread clearly more (fUpperP below kPoolingAlpha). Values in two modes
//     (findModes: a side, or enough stored builds, seen in both) make a test inconclusive unless
//     most runs of each side sit in one mode, the same; a case says "this case has two modes (X
//     and Y GB/s)". A
//     case flagged through its series or the whole run says which (CaseComparison::flaggedBy).
//  5c. A case as measured. With kBuildsSpreadMin stored builds of a case or more in the window,
//     each case is also tested on its values as measured (not net of its run) against their
//     spread within builds plus twice the spread of the stored builds' means of the case net of
//     their runs (buildsSpread): a state of the machine that lasts through one build's runs is
//     noise there, not a change. A run's
//     level is a median over its cases, so a few cases that scatter from run to run make it
//     scatter too, and a slowdown of every case that the steady cases show plainly was
//     inconclusive at the whole-run test. This test joins the confined tests' Holm family and
//     only flags a case (FlaggedBy::kAsMeasured), never while the whole runs have two modes
//     (its values carry them), and only when it flags kAsMeasuredCases cases or more the same
//     way (it stands for a change of every case): its own inconclusiveness never decides one.
//  6. Too few replicates. With fewer than 4 replicates in all (or none on a side) nothing is
//     tested: inconclusive. Imported logs, which carry no samples, are then compared on the
//     threshold only, labelled so.
//  7. Failures. A case that fails or computes wrong results in the candidate only is a
//     regression whatever the timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "results/Case.h"
#include "results/Records.h"

namespace cb {

// Holm-Bonferroni adjusted p-values (same order as the input).
std::vector<double> holmAdjust(std::span<const double> p);

// ---- run-level statistics ----

// Two-sided p-value of Student's t with `df` degrees of freedom (df > 0).
double studentTTwoSidedP(double t, double df);
// The t such that studentTTwoSidedP(t, df) == p, for p in (0, 1].
double studentTCritical(double p, double df);
// P(F > f) for Snedecor's F with df1 and df2 degrees of freedom.
double fUpperP(double f, double df1, double df2);

// Pooled-variance two-sample t-test (the replicates of both sides share the machine's noise).
struct TTest {
  int n1 = 0, n2 = 0;
  double diff = 0;  // mean(b) - mean(a)
  double sd = 0;    // pooled standard deviation
  double df = 0;    // n1 + n2 - 2
  double pValue = 1;
  bool valid = false;  // df >= 1
};
TTest studentT(std::span<const double> a, std::span<const double> b);

// Replicates a busy machine disturbed as a whole are set aside before a test: on this kind of
// host a few runs in ten come out 1.3-4x slower (a rank thread sharing a core with a stranger)
// while the others agree within 2%, and one such run inflates a t-test's variance until nothing
// is detectable. A value is disturbed when its modified z-score (Iglewicz and Hoaglin 1993),
// |x - median of its side| / (1.4826 x the MAD of both sides' deviations from their medians),
// exceeds 6. Iglewicz and Hoaglin label outliers from 3.5; 6 is stricter because the MAD of 5
// or 6 runs is itself noisy (3.5 doubled the false alarms of 5-run gates on normal noise), and
// the runs seen disturbed here sit 18-90 scales out. Each side is centred on its own median,
// so a shift between the sides is never set aside.
constexpr double kDisturbedZ = 6;

// One point whose run value (its --run-value quantile) is more than kDescheduledRatio times its
// fastest iteration: most of its calls waited for a CPU (on a 2-core host beside a compile, 4-40
// ms, scheduler ticks, against 25-200 us), so the quantile measures the scheduler, not the code.
// Seen here in bursts inside otherwise steady runs; such a point is no replicate of its case.
// A real slowdown moves every iteration alike (its quantile stays near its fastest). A case
// whose points are descheduled in most runs of a side is not tested there at all: its kept
// points had waited as well, fastest iteration included (compareRuns says so in its note).
constexpr double kDescheduledRatio = 4;
bool descheduledPoint(std::span<const double> samples, double quantile);
struct Undisturbed {
  std::vector<double> a, b;
  int setAsideA = 0, setAsideB = 0;
  bool twoGroups = false;  // the sides' medians sit in two groups of runs: nothing set aside
};
// `stored`: absolute deviations of stored runs from their own build's median (storedDeviations),
// pooled into the scale; the gate passes them when the window describes the sides (its F test).
// With 3 runs a side, 2 of the 6 deviations are 0 (each median's own) and the sides' scale is
// the mean of two values, which one side's chance agreement or spread moves.
Undisturbed setAsideDisturbed(std::span<const double> a, std::span<const double> b = {},
                              std::span<const double> stored = {});

// The smallest true difference a two-sided test at `alpha` finds with probability `power`,
// for n1 and n2 replicates of standard deviation `sd` (same unit as sd).
// `extraDf`: degrees of freedom the spread also has from outside the two samples (stored runs of
// the same environment, see History).
double minDetectableDiff(double sd, int n1, int n2, double alpha, double power, double extraDf = 0);
// Replicates per side for which minDetectableDiff <= target; kRunsNeededCap + 1 when even
// kRunsNeededCap per side do not reach it; 0 when sd is 0.
constexpr int kRunsNeededCap = 200;
int runsNeeded(double sd, double target, double alpha, double power, double extraDf = 0);

// Run-to-run noise learned outside a comparison: the sum of squared deviations of replicates
// from their own build's mean (log scale) and its degrees of freedom. Pooled into a test's
// variance, it lets 3 runs per side be judged against the machine's known noise rather than
// against the 4 degrees of freedom of 6 runs.
struct NoiseSums {
  double ss = 0, df = 0;
  NoiseSums& operator+=(const NoiseSums& o) {
    ss += o.ss;
    df += o.df;
    return *this;
  }
};
// Pooled two-sample t-test whose variance also pools `extra`.
TTest studentT(std::span<const double> a, std::span<const double> b, const NoiseSums& extra);

// Values of one quantity (a case net of its run, a run's level) from several builds: `group`
// identifies the build (runs of one label), `value` the log value, larger is worse.
struct GroupedValue {
  int group = 0;
  double value = 0;
};
// Within-group sums of squares over every group of 2 or more values. Values beyond kDisturbedZ
// robust scales of the pooled deviations (a run a busy moment disturbed as a whole) are left out.
NoiseSums withinGroupNoise(std::span<const GroupedValue> values);
// |x - its group's median| for every value of a group of 2 or more: the stored runs' share of
// setAsideDisturbed's scale.
std::vector<double> storedDeviations(std::span<const GroupedValue> values);

// How much builds' means of one quantity scatter: states of the machine that last through a
// build's runs (minutes, on a VM whose host moves its vCPUs) move every run of that build
// together, which the spread within builds cannot show. The sample variance of the stored
// builds' means (groups >= 0), fed with a case's values net of their runs' levels (so a build
// slower at every case, a regression kept in the window or a state of the whole machine, which
// the whole-run test and the round trip judge, is no spread here). Known with kBuildsSpreadMin
// builds or more.
constexpr int kBuildsSpreadMin = 4;
// Cases a test as measured must flag together (the same way) to flag any: rule 5c.
constexpr int kAsMeasuredCases = 2;
struct BuildsSpread {
  bool known = false;
  double var = 0;  // of a build's mean (log, squared)
  double df = 0;   // builds - 1
};
BuildsSpread buildsSpread(std::span<const GroupedValue> values);

// Two modes: the values fall in two clusters far apart compared with their spread inside each
// (the best split of the sorted values; gap >= kModeSeparation pooled within-cluster standard
// deviations and at least `minGap` in log), each cluster has 2 values or more, and builds have
// values in both, so two builds that simply differ are never called modes: a group below 0 (one
// of the comparison's sides) while the window holds fewer than kModeBuildsAlone stored builds,
// or kModeBuildsWithHistory stored builds (groups from 0) and at least kModeBuildsShare of them.
constexpr double kModeSeparation = 5;
constexpr int kModeBuildsWithHistory = 2;
constexpr double kModeBuildsShare = 0.25;
// From this many stored builds on, the window judges modes alone (a quarter of them is then at
// least kModeBuildsWithHistory builds): the sides' runs in both clusters no longer count.
constexpr int kModeBuildsAlone = 8;
// The level of the F test that keeps the window's noise out of a test whose own runs spread
// clearly more.
constexpr double kPoolingAlpha = 0.02;
struct Modes {
  bool found = false;
  double cut = 0;            // values at or below are the low cluster
  double low = 0, high = 0;  // cluster means (log, larger is worse)
  int nLow = 0, nHigh = 0;
};
Modes findModes(std::span<const GroupedValue> values, double minGap);
// The chance that `k` or more of `n` candidate runs land in a mode by chance when `m` of `total`
// same-build runs (the baseline's and the stored ones) did: the binomial tail with the visit rate
// p = (m + 1) / (total + 2) (Laplace's rule, so a mode never seen still has a chance). A gate calls
// a change between modes a switch (inconclusive) only while this is not below its alpha.
double modeVisitChance(int k, int n, int m, int total);
// Whether the sides' runs were taken alternately (by run id, the database's insertion order):
// each run of the side with fewer runs has a run of the other side between it and the next.
// Only then does the gate apply modeVisitChance (a lasting state of the machine would otherwise
// explain the candidate's runs in one mode as well as the build does).
bool sidesInterleaved(std::span<const RunRecord> base, std::span<const RunRecord> cand);

// ---- what is compared ----

enum class Metric : uint8_t { kBusbw, kTime };
// One rank has no busbw (nccl-tests' factors, 2(n-1)/n and the like, are 0 there): its algbw
// stands in for it wherever busbw is compared or shown.
bool busbwByAlgbw(const ResultRecord& r);
Metric parseMetric(std::string_view text);  // busbw | time; UsageError
std::string_view metricName(Metric m);
std::string_view metricUnit(Metric m);  // "GB/s" | "us"
// The --run-value name of a quantile of a run's iterations: "min", "p10", "p25", "median"
// (another quantile as "pNN").
std::string runValueName(double quantile);

struct CompareOptions {
  Metric metric = Metric::kBusbw;
  double threshold = 0.05;  // fraction: 0.05 = 5%
  double alpha = 0.01;      // family-wise error rate of the whole comparison
  // Of the minimum detectable change and the runs needed. 0.9, not the textbook 0.8: a gate
  // sized for 80% lets one regression of the threshold in five through, and 90% costs ~27%
  // more runs.
  double power = 0.9;
  // Which quantile of a run's iterations stands for the run (0: the fastest, 0.1: the tenth
  // percentile, 0.5: the median). Interference on a shared machine only ever adds time, so the
  // fastest iteration tracks the code's cost most steadily (Chen and Revels 2016; measured in
  // docs/GATE.md: fewer false alarms and more 30% slowdowns caught than p10).
  double runQuantile = 0;
  SizeFilter sizes;
  // Compare runs whose environment fingerprints differ (each case is then marked so).
  bool allowDifferentEnvironment = false;
};

// A threshold is a percentage, "5%" or "5" (both 0.05), "0.5%" (0.005); UsageError when it is
// not a number, negative, or 100% or more.
double parseThreshold(std::string_view text);
// alpha in (0, 0.5]; UsageError otherwise.
double checkAlpha(double alpha);

// One side of a comparison: one or several runs (their results, with samples).
struct RunSet {
  std::vector<RunRecord> runs;
  std::vector<ResultRecord> results;  // of all runs, with their combined samples
};

enum class Verdict : uint8_t { kRegression, kImprovement, kSame, kInconclusive, kNotComparable };
std::string_view verdictName(Verdict v);  // "regression", ..., "not comparable"

// One test of the comparison: the whole run, a series or a case.
struct LevelTest {
  bool tested = false;   // a t-test was run (enough replicates, a spread to test against)
  double changePct = 0;  // the metric's own change, (cand / base - 1) * 100 (busbw: - is worse)
  double worsePct = 0;   // the same change signed so that positive is worse
  double pValue = 1, adjustedP = 1;
  double alphaUsed = 0;  // the level the test was held to (Holm's worst case for the MDC)
  double mdcPct = 0;     // minimum detectable change, percent (0 when not tested)
  int runsNeeded = 0;    // per side to bring mdcPct to the threshold (0: already there)
  int setAsideBase = 0, setAsideCand = 0;  // replicates set aside as disturbed (setAsideDisturbed)
  bool twoGroups = false;                  // the runs fell in two groups: none set aside
  // The quantity has two modes (findModes over the comparison and its history) and the sides do
  // not sit in one of them: the change may be a mode switch, so the test is inconclusive.
  bool modal = false;
  double modeGapPct = 0;  // how far apart the modes are (worse side over better), percent
  // When the sides sat in different modes and their runs were interleaved: the chance that the
  // candidate's runs landed in its mode by chance, given how often the same build did
  // (modeVisitChance); -1 when not asked.
  double modeVisitChance = -1;
  double historyDf = 0;  // degrees of freedom the stored runs added to the spread
  Verdict verdict = Verdict::kInconclusive;
};

struct CaseComparison {
  CaseKey key;
  Verdict verdict = Verdict::kInconclusive;
  std::string note;  // why, for not comparable / inconclusive / failed / threshold-only cases
  int baseRuns = 0, candRuns = 0;       // replicates that measured the case
  double baseValue = 0, candValue = 0;  // geometric means of the replicate medians
  double changePct = 0;                 // (cand / base - 1) * 100, the metric's own sign
  double worsePct = 0;                  // the same change, positive = worse
  LevelTest confined;                   // the case against the rest of its run
  // The case's own values, not net of their run, against the spread of runs and of stored builds
  // (rule 5c); tested only with kBuildsSpreadMin stored builds of the case.
  LevelTest asMeasured;
  double noisePct = 0;         // run-to-run spread of this case: its replicates' standard deviation
  bool failed = false;         // candidate failed or was wrong where the baseline was fine
  bool thresholdOnly = false;  // judged on --threshold alone (no replicates to test)
  // Which test made the verdict a regression or an improvement: the case's own, its series', the
  // whole run's (the case then moved with them beyond half the threshold) or the case's values
  // as measured (rule 5c). The case's own p stays in `confined`, so a case flagged through
  // another test says so.
  enum class FlaggedBy : uint8_t { kNone, kOwn, kSeries, kWholeRun, kAsMeasured };
  FlaggedBy flaggedBy = FlaggedBy::kNone;
  // Two modes of the case (metric units, e.g. GB/s) when its test was inconclusive for them.
  double modeA = 0, modeB = 0;
};

struct SeriesSummary {
  CaseKey series;  // sizeBytes = 0
  int cases = 0;
  LevelTest confined;  // the series against the rest of its run
};

enum class GateOutcome : uint8_t { kPass, kRegression, kInconclusive, kNothingComparable };
std::string_view gateOutcomeName(GateOutcome o);  // pass, regression, inconclusive, ...

struct Comparison {
  CompareOptions options;
  std::vector<CaseComparison> cases;  // in key order
  std::vector<SeriesSummary> series;  // in key order (only when series are tested)
  LevelTest wholeRun;                 // a change common to every case
  int baseReplicates = 0, candReplicates = 0;
  bool interleaved = false;  // the sides' runs alternate in time (sidesInterleaved)
  std::vector<CaseKey> onlyBase, onlyCand;
  int skipped = 0;  // cases neither side measured successfully, or outside --sizes
  // Set when the fingerprints differ or are unknown; one line.
  std::string environmentNote;
  bool environmentDiffers = false;
  bool thresholdOnly = false;            // no test possible: cases judged on the threshold alone
  std::string tooFewNote;                // why nothing was tested, when so
  std::vector<std::string> runProblems;  // candidate runs that failed (each a regression)
  GateOutcome outcome = GateOutcome::kPass;
  int runsNeeded = 0;   // per side, when inconclusive for want of replicates (0: unknown)
  int historyRuns = 0;  // replicates of stored runs (the lookback window) that joined the tests
  int descheduledPoints = 0;  // points of either side left out as descheduled (descheduledPoint)
  int algbwCases = 0;  // cases of one rank, compared by algbw: they have no busbw (metricValue)
  // Set when a test was inconclusive because its values have two modes: what to say, one line.
  std::string modesNote;
  int count(Verdict v) const;
};

// What a gate learned earlier about an environment (`gate --calibrate`), kept as a run detail
// (kind kCalibrationDetail) of the newest calibrated run: the noise of its runs (one build) per
// test, and the cases it found in two modes. A gate whose lookback window no longer holds those
// runs still pools their noise.
constexpr const char* kCalibrationDetail = "gate-calibration";
struct LearnedNoise {
  std::vector<int64_t> runIds;
  double runQuantile = 0.1;
  NoiseSums whole;
  std::map<std::string, NoiseSums> cases, series;  // by CaseKey::toString / seriesString
  // Cases in two modes: the runs' values in each (the metric's units, "busbw" or "time"), and
  // how far apart the modes are net of their runs (log), which is what a gate's test sees.
  std::string metric = "busbw";
  struct Mode {
    double a = 0, b = 0, gap = 0;
  };
  std::map<std::string, Mode> modes;
};
std::string learnedNoiseJson(const LearnedNoise& n);
// nullopt when the text is not such a document (an older or foreign detail is ignored).
std::optional<LearnedNoise> parseLearnedNoise(const std::string& json);

// The stored runs of the same environment outside the comparison: the gate's lookback window
// (as conbench's and Bencher's), grouped by label, each label taken as one build (runs without
// a label stand alone and add nothing). Their spread within a build is the case's run-to-run
// noise; their values across builds reveal modes. `learned`: calibrations of runs outside it.
struct History {
  RunSet runs;
  std::vector<LearnedNoise> learned;
};

Comparison compareRuns(const RunSet& base, const RunSet& cand, const CompareOptions& options,
                       const History& history = {});

// What `gate --calibrate` reports: the noise of same-build replicates and the runs per side a
// gate needs to detect a change of `target` at the options' alpha and power.
struct Calibration {
  int replicates = 0, cases = 0, series = 0;
  double wholeSdPct = 0;  // standard deviation of the replicates' levels, percent
  double caseSdPct = 0;   // median over cases of the confined standard deviation
  double worstCaseSdPct = 0;
  CaseKey worstCase;
  int runsWhole = 0, runsCaseMedian = 0, runsCaseWorst = 0;  // per side
  int disturbed = 0;       // replicates whose level was set aside as disturbed (the runs scale up)
  bool twoGroups = false;  // over a quarter "disturbed": groups of runs, not strays; all kept
  LearnedNoise learned;    // what `gate --calibrate` stores
};
// UsageError when there are fewer than 3 replicates.
Calibration calibrate(const RunSet& runs, const CompareOptions& options, double target);

// ---- choosing the runs ----

// One side as the gate and compare take it: a run id, "last" (the newest run), a
// comma-separated list of ids ("12,13,14"), "label:NAME" (every finished run with that label)
// or "label:NAME@last-K" (the K newest of them).
struct RunSpec {
  std::vector<int64_t> ids;  // explicit ids
  bool last = false;
  std::string label;  // non-empty for label:NAME
  int lastK = 0;      // 0: every run with the label
  std::string text;

  static RunSpec parse(std::string_view text);  // UsageError
};

// The runs of a label spec, from runs with that label newest first: finished ok, not one of
// `exclude` (the other side), not started after the newest of `exclude` (so replaying history
// gates each run against its past); at most spec.lastK. Empty when none qualify.
std::vector<RunRecord> pickLabelRuns(const std::vector<RunRecord>& labelledNewestFirst,
                                     const RunSpec& spec, const std::vector<RunRecord>& exclude);

}  // namespace cb
