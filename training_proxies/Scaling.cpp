#include "training_proxies/Scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "collectives/algorithms/Algorithms.h"
#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Stats.h"

namespace cb::proxy {

constexpr EnumRow<ScalingKind> kScalingKinds[] = {
    {ScalingKind::kNone, "none"}, {ScalingKind::kStrong, "strong"}, {ScalingKind::kWeak, "weak"}};
std::string_view scalingKindName(ScalingKind k) { return enumName(kScalingKinds, k); }

ScalingKind parseScalingKind(std::string_view name) {
  if (name.empty()) return ScalingKind::kNone;
  if (std::optional<ScalingKind> k = enumValue(kScalingKinds, name)) return *k;
  throw UsageError(fmt::format("unknown scaling '{}' (strong, weak)", name));
}

double speedup(ScalingKind k, double t1, double tn, int n) {
  if (tn <= 0) return 0;
  return k == ScalingKind::kWeak ? n * t1 / tn : t1 / tn;
}

std::vector<int> scalingSizes(int worldSize) {
  std::vector<int> out;
  for (int n = 1; n < worldSize; n *= 2) out.push_back(n);
  out.push_back(worldSize);
  return out;
}

CostFeatures costFeatures(Collective coll, DataType dtype, size_t count, int n,
                          const std::string& algo, std::string* modelledAs, int ranksPerNode) {
  const AlgorithmInfo* pick = nullptr;
  const AlgorithmInfo* ring = nullptr;
  for (const auto& a : algorithms()) {
    if (a.coll != coll) continue;
    if (std::string_view(a.name) == "ring") ring = &a;
    if (algo == a.name) pick = &a;
  }
  CollArgs args{coll, dtype, RedOp::kSum, 0, count};
  const bool nodes = ranksPerNode > 0 && ranksPerNode < n;
  AlgoOptions opts;
  opts.ranksPerNode = nodes ? ranksPerNode : n;
  if (pick && pick->unsupported && pick->unsupported(n, args, opts)) pick = nullptr;
  if (!pick) pick = ring;
  if (!pick) return {};
  if (modelledAs) *modelledAs = pick->name;
  Schedule s = pick->build(0, n, args, opts);
  LinkCost c = rankCostByLink(s, dataTypeSize(dtype),
                              [&](int peer) { return nodes && peer / ranksPerNode != 0; });
  return {c.local.messages, c.local.bytes, c.local.reducedBytes, c.remote.messages, c.remote.bytes};
}

CallPrediction predictCall(const CostFit& fit, Collective coll, DataType dtype, size_t count, int n,
                           const std::string& algo, int ranksPerNode, const InterNodeLink& link) {
  const bool handWritten =
      std::any_of(algorithms().begin(), algorithms().end(),
                  [&](const auto& a) { return a.coll == coll && algo == a.name; });
  // Not hierarchical or the direct (one-/two-shot) schedules: their features count one message
  // per link in parallel, which a node's injection bandwidth does not give.
  std::vector<std::string> candidates{algo};
  if (!handWritten) candidates = {"ring", "tree"};
  CallPrediction best;
  for (const auto& name : candidates) {
    std::string used;
    const double t =
        fit.predict(costFeatures(coll, dtype, count, n, name, &used, ranksPerNode), link);
    if (best.algo.empty() || t < best.seconds) best = {t, used};
  }
  return best;
}

namespace {

// Solves the normal equations of the chosen columns (Gaussian elimination with pivoting);
// false when singular.
bool solveSubset(const std::vector<std::array<double, 3>>& x, const std::vector<double>& y,
                 const std::vector<double>& w, const std::vector<int>& cols,
                 std::array<double, 3>& out) {
  const int k = static_cast<int>(cols.size());
  double a[3][4] = {};
  for (size_t i = 0; i < y.size(); ++i) {
    for (int r = 0; r < k; ++r) {
      for (int c = 0; c < k; ++c) a[r][c] += w[i] * x[i][cols[r]] * x[i][cols[c]];
      a[r][k] += w[i] * x[i][cols[r]] * y[i];
    }
  }
  for (int c = 0; c < k; ++c) {
    int piv = c;
    for (int r = c + 1; r < k; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    }
    if (std::fabs(a[piv][c]) < 1e-300) return false;
    for (int j = 0; j <= k; ++j) std::swap(a[c][j], a[piv][j]);
    for (int r = 0; r < k; ++r) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (int j = c; j <= k; ++j) a[r][j] -= f * a[c][j];
    }
  }
  out = {0, 0, 0};
  for (int r = 0; r < k; ++r) {
    double v = a[r][k] / a[r][r];
    if (!std::isfinite(v)) return false;
    out[cols[r]] = v;
  }
  // Reject near-singular fits (collinear columns give huge opposite coefficients).
  for (size_t i = 0; i < y.size(); ++i) {
    double pred = 0;
    for (int c : cols) pred += out[c] * x[i][c];
    if (!std::isfinite(pred)) return false;
  }
  return true;
}

}  // namespace

CostFit fitCost(const std::vector<CostSample>& samples) {
  std::vector<std::array<double, 3>> x;
  std::vector<double> y, w;
  for (const auto& s : samples) {
    if (s.seconds <= 0 || (s.f.messages == 0 && s.f.bytes == 0)) continue;
    // Scale columns to comparable magnitudes: messages ~1..1e3, bytes ~1e3..1e9.
    x.push_back({s.f.messages, s.f.bytes * 1e-6, s.f.reduced * 1e-6});
    y.push_back(s.seconds);
    w.push_back(1.0 / (s.seconds * s.seconds));
  }
  CostFit best;
  best.points = static_cast<int>(y.size());
  if (y.size() < 2) return best;
  double bestErr = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<int>> subsets = {{0, 1, 2}, {0, 1}, {0, 2}, {1, 2}, {0}, {1}, {2}};
  for (const auto& cols : subsets) {
    std::array<double, 3> c{};
    if (!solveSubset(x, y, w, cols, c)) continue;
    if (c[0] < 0 || c[1] < 0 || c[2] < 0) continue;
    double err = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      double pred = c[0] * x[i][0] + c[1] * x[i][1] + c[2] * x[i][2];
      err += w[i] * (pred - y[i]) * (pred - y[i]);
    }
    // Prefer fewer terms unless more terms cut the error by more than 1%.
    if (err < bestErr * 0.99) {
      bestErr = err;
      best.alpha = c[0];
      best.beta = c[1] * 1e-6;
      best.gamma = c[2] * 1e-6;
      best.ok = true;
    }
  }
  if (best.ok) {
    std::vector<double> rel;
    bool first = true;
    for (const auto& s : samples) {
      if (s.seconds <= 0 || (s.f.messages == 0 && s.f.bytes == 0)) continue;
      const double pred = best.predict(s.f);
      rel.push_back(std::fabs(pred - s.seconds) / s.seconds);
      if (pred <= 0) continue;
      const double r = s.seconds / pred - 1;
      best.relLow = first ? r : std::min(best.relLow, r);
      best.relHigh = first ? r : std::max(best.relHigh, r);
      first = false;
    }
    best.medianRelError = summarize(rel).median;
    best.relLow = std::min(best.relLow, 0.0);
    best.relHigh = std::max(best.relHigh, 0.0);
  }
  return best;
}

DpStepSim simulateDpStep(const std::vector<double>& fwd, const std::vector<double>& bwd,
                         const std::vector<Bucket>& buckets, const std::vector<double>& comm,
                         bool overlap) {
  DpStepSim sim;
  double t = 0;
  for (double f : fwd) t += f;
  // End of each layer's backward, the last layer first.
  std::vector<double> bwdEnd(bwd.size());
  for (int l = static_cast<int>(bwd.size()) - 1; l >= 0; --l) {
    t += bwd[l];
    bwdEnd[l] = t;
  }
  const double computeEnd = t;
  sim.compute = computeEnd;
  double commFree = overlap ? 0 : computeEnd;
  double exposedFrom = computeEnd;
  for (size_t k = 0; k < buckets.size(); ++k) {
    double ready = overlap ? bwdEnd[buckets[k].firstLayer] : computeEnd;
    double start = std::max(ready, commFree);
    commFree = start + comm[k];
    sim.comm += comm[k];
  }
  sim.step = std::max(computeEnd, commFree);
  sim.exposed = sim.step - exposedFrom;
  return sim;
}

}  // namespace cb::proxy
