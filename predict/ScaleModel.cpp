#include "predict/ScaleModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>

#include "core/Error.h"

namespace cb::predict {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// NCCL's log2i: the floor, so 3 nodes count one tree level like 2.
int log2i(int n) { return n <= 1 ? 0 : std::bit_width(static_cast<unsigned>(n)) - 1; }

struct TermSpec {
  const char* name;
  bool bandwidth;
};

// The terms of each algorithm, the bandwidths first, then the latencies in the order the fit
// prefers them when the measured scales cannot tell them apart (NCCL weighs its inter-node step
// most: 14 us against 3.4 on NVLink for Ring/Simple).
std::vector<TermSpec> termsOf(Algo a) {
  switch (a) {
    case Algo::kRing:
      return {{"bytes inside the node", true},
              {"bytes over the network", true},
              {"per inter-node step", false},
              {"per intra-node step", false},
              {"per call", false}};
    case Algo::kTree:
      return {{"bytes over the network", true},
              {"per inter-node step", false},
              {"per intra-node step", false},
              {"per call", false}};
    case Algo::kNvlsTree:
      return {
          {"bytes over the network", true}, {"per inter-node step", false}, {"per call", false}};
    case Algo::kNvls: return {{"bytes inside the node", true}, {"per call", false}};
    case Algo::kP2p:
      return {
          {"bytes inside the node", true}, {"bytes over the network", true}, {"per peer", false}};
  }
  return {};
}

bool isNetTerm(Algo a, size_t k) {
  return (a == Algo::kRing && k == 1) || (a == Algo::kTree && k == 0) ||
         (a == Algo::kNvlsTree && k == 0) || (a == Algo::kP2p && k == 1);
}

int ringSteps(Coll c, int n) { return c == Coll::kAllReduce ? 2 * (n - 1) : n - 1; }

// The column of term k at a scale and size. `fitting`: alltoall across nodes is fitted as
// network-bound (its NVLink part is taken as hidden under the network part).
double column(Algo a, size_t k, Coll c, const Scale& s, uint64_t bytes, bool fitting) {
  const double S = static_cast<double>(bytes);
  const int n = s.ranks(), N = s.ncclNodes(), g = s.perNcclNode();
  switch (a) {
    case Algo::kRing: {
      const int steps = ringSteps(c, n);
      const int inter = N == 1 ? 0 : (c == Coll::kAllReduce ? 2 * (N - 1) : N - 1);
      const double bus = S * busFactor(c, n);  // bus bytes: busbw = bus bytes / time
      switch (k) {
        case 0: return N == 1 ? bus : 0;
        case 1: return N > 1 ? bus : 0;
        case 2: return inter;
        case 3: return steps - inter;
        default: return 1;
      }
    }
    case Algo::kTree:
    case Algo::kNvlsTree: {
      // tuning.cc: at nNodes <= 2 the tree's network bandwidth counts twice (each node's
      // half of the data meets the other's in one hop); beyond, once.
      if (k == 0) return S * (N <= 2 ? 0.5 : 1.0);
      if (k == 1) return 2.0 * log2i(N);
      if (a == Algo::kTree && k == 2) return 2.0 * (g - 1);
      return 1;
    }
    case Algo::kNvls:
      if (k == 0) return c == Coll::kAllReduce ? S : S * busFactor(c, n);
      return 1;
    case Algo::kP2p:
      if (k == 0) {
        if (N == 1) return S * (n - 1) / n;
        return fitting ? 0 : S * (g - 1) / n;
      }
      if (k == 1) return N > 1 ? S * (n - g) / n : 0;
      return n - 1;
  }
  return 0;
}

bool appliesAt(Algo a, Coll c, const Scale& s) {
  const int N = s.ncclNodes();
  switch (a) {
    case Algo::kRing: return c != Coll::kAllToAll;
    case Algo::kTree:
    case Algo::kNvlsTree: return c == Coll::kAllReduce && N >= 2;
    case Algo::kNvls: return c != Coll::kAllToAll && N == 1;
    case Algo::kP2p: return c == Coll::kAllToAll;
  }
  return false;
}

// Least squares of rows A x = 1 (each row already divided by its measured time) through
// modified Gram-Schmidt; nullopt when the columns are dependent.
std::optional<std::vector<double>> solve(const std::vector<std::vector<double>>& cols) {
  const size_t m = cols.size();
  if (m == 0) return std::vector<double>{};
  const size_t rows = cols[0].size();
  if (rows < m) return std::nullopt;
  std::vector<std::vector<double>> q = cols;
  std::vector<double> scale(m);
  for (size_t j = 0; j < m; ++j) {
    double norm = 0;
    for (double v : q[j]) norm += v * v;
    scale[j] = std::sqrt(norm);
    if (scale[j] == 0) return std::nullopt;
    for (double& v : q[j]) v /= scale[j];
  }
  std::vector<std::vector<double>> r(m, std::vector<double>(m, 0));
  for (size_t j = 0; j < m; ++j) {
    for (size_t i = 0; i < j; ++i) {
      double dot = 0;
      for (size_t t = 0; t < rows; ++t) dot += q[i][t] * q[j][t];
      r[i][j] = dot;
      for (size_t t = 0; t < rows; ++t) q[j][t] -= dot * q[i][t];
    }
    double norm = 0;
    for (double v : q[j]) norm += v * v;
    norm = std::sqrt(norm);
    if (norm < 1e-9) return std::nullopt;  // a column the others already span
    r[j][j] = norm;
    for (double& v : q[j]) v /= norm;
  }
  std::vector<double> qtb(m, 0);
  for (size_t j = 0; j < m; ++j)
    for (size_t t = 0; t < rows; ++t) qtb[j] += q[j][t];
  std::vector<double> x(m, 0);
  for (size_t j = m; j-- > 0;) {
    double v = qtb[j];
    for (size_t i = j + 1; i < m; ++i) v -= r[j][i] * x[i];
    x[j] = v / r[j][j];
  }
  for (size_t j = 0; j < m; ++j) x[j] /= scale[j];
  return x;
}

FittedAlgo fitOne(Algo a, Coll c, const std::vector<Point>& pts, const std::vector<size_t>& idx,
                  const ClusterTraits& traits) {
  const std::vector<TermSpec> specs = termsOf(a);
  FittedAlgo f;
  f.algo = a;
  f.points = idx;
  for (const TermSpec& t : specs) f.terms.push_back({t.name, t.bandwidth, 0});
  // A bandwidth term that some point exercises must be in every candidate; the latency terms
  // are tried in every combination (non-negative least squares by enumeration: 3 terms at most).
  std::vector<size_t> required, optional;
  for (size_t k = 0; k < specs.size(); ++k) {
    bool used = false;
    for (size_t i : idx) used |= column(a, k, c, pts[i].scale, pts[i].bytes, true) != 0;
    if (specs[k].bandwidth) {
      if (used) required.push_back(k);
    } else {
      optional.push_back(k);
    }
  }
  for (size_t k : required) {
    if (isNetTerm(a, k)) {
      f.netKnown = true;
    } else {
      f.intraKnown = true;
    }
  }
  double bestSse = std::numeric_limits<double>::infinity();
  std::vector<double> best;
  std::vector<size_t> bestCols;
  const size_t combos = size_t{1} << optional.size();
  // Fewer terms first; among equal counts, the preferred (earlier) terms first.
  std::vector<size_t> masks(combos);
  for (size_t m = 0; m < combos; ++m) masks[m] = m;
  std::stable_sort(masks.begin(), masks.end(),
                   [](size_t x, size_t y) { return std::popcount(x) < std::popcount(y); });
  for (size_t mask : masks) {
    std::vector<size_t> use = required;
    for (size_t b = 0; b < optional.size(); ++b)
      if (mask & (size_t{1} << b)) use.push_back(optional[b]);
    if (use.empty()) continue;
    std::vector<std::vector<double>> cols;
    for (size_t k : use) {
      std::vector<double> col;
      for (size_t i : idx)
        col.push_back(column(a, k, c, pts[i].scale, pts[i].bytes, true) / pts[i].timeUs);
      cols.push_back(std::move(col));
    }
    auto x = solve(cols);
    if (!x) continue;
    bool ok = true;
    for (double v : *x) ok &= v >= 0;
    if (!ok) continue;
    double sse = 0;
    for (size_t r = 0; r < idx.size(); ++r) {
      double fitted = 0;
      for (size_t j = 0; j < use.size(); ++j) fitted += cols[j][r] * (*x)[j];
      sse += (fitted - 1) * (fitted - 1);
    }
    // A larger set must lower the error by more than rounding to be taken.
    if (sse < bestSse * (1 - 1e-9) - 1e-15) {
      bestSse = sse;
      best = *x;
      bestCols = use;
    }
  }
  if (bestCols.empty()) {
    throw UsageError(fmt::format("predict: no non-negative fit of {} to its {} point(s)",
                                 algoName(a), idx.size()));
  }
  for (size_t j = 0; j < bestCols.size(); ++j) f.terms[bestCols[j]].coef = best[j];
  if (a == Algo::kRing && !f.netKnown && traits.netBusbwGBps) {
    f.terms[1].coef = 1.0 / (*traits.netBusbwGBps * 1e3);  // us per bus byte
    f.netKnown = f.netGiven = true;
  }
  for (size_t i : idx) {
    double fitted = 0;
    for (size_t k = 0; k < f.terms.size(); ++k)
      fitted += f.terms[k].coef * column(a, k, c, pts[i].scale, pts[i].bytes, true);
    const double r = (pts[i].timeUs - fitted) / fitted;
    f.residuals.push_back(r);
    f.lo = std::min(f.lo, r);
    f.hi = std::max(f.hi, r);
  }
  return f;
}

}  // namespace

std::string_view algoName(Algo a) {
  switch (a) {
    case Algo::kRing: return "Ring";
    case Algo::kTree: return "Tree";
    case Algo::kNvls: return "NVLS";
    case Algo::kNvlsTree: return "NVLSTree";
    case Algo::kP2p: return "P2P";
  }
  return "?";
}

std::optional<Algo> parseAlgo(std::string_view name) {
  const std::string n = lower(name);
  for (Algo a : {Algo::kRing, Algo::kTree, Algo::kNvls, Algo::kNvlsTree, Algo::kP2p})
    if (n == lower(algoName(a))) return a;
  if (n == "nvls_tree") return Algo::kNvlsTree;
  return std::nullopt;
}

std::optional<Algo> algoFromNote(std::string_view message) {
  constexpr std::string_view kRan = "NCCL ran ";
  const size_t at = message.find(kRan);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + kRan.size());
  const size_t end = rest.find_first_of("/ ,;");
  return parseAlgo(rest.substr(0, end));
}

std::string_view collName(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "allreduce";
    case Coll::kAllGather: return "allgather";
    case Coll::kReduceScatter: return "reduce_scatter";
    case Coll::kAllToAll: return "alltoall";
  }
  return "?";
}

std::optional<Coll> parseColl(std::string_view name) {
  for (Coll c : {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter, Coll::kAllToAll})
    if (name == collName(c)) return c;
  return std::nullopt;
}

std::string Scale::name() const {
  std::string s = fmt::format("{}x{}", nodes, gpusPerNode);
  if (domainNodes > 1) {
    const int d = ncclNodes();
    s += fmt::format(" ({} NVLink domain{})", d, d == 1 ? "" : "s");
  }
  return s;
}

double busFactor(Coll c, int nranks) {
  const double n = nranks;
  return c == Coll::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

const FittedAlgo* ScaleFit::find(Algo a) const {
  for (const FittedAlgo& f : algos)
    if (f.algo == a) return &f;
  return nullptr;
}

Algo assumedAlgo(Coll c, const Scale& s, bool nvls) {
  const int N = s.ncclNodes();
  if (c == Coll::kAllToAll) return Algo::kP2p;
  if (c != Coll::kAllReduce) return N == 1 && nvls ? Algo::kNvls : Algo::kRing;
  if (N == 1) return nvls ? Algo::kNvls : Algo::kRing;
  if (N == 2) return nvls ? Algo::kNvlsTree : Algo::kTree;
  return Algo::kRing;
}

ScaleFit fitScaleModel(Coll c, std::vector<Point> points, const ClusterTraits& traits) {
  ScaleFit fit;
  fit.coll = c;
  fit.traits = traits;
  fit.points = std::move(points);
  for (const Point& p : fit.points) {
    if (!(p.timeUs > 0) || p.bytes == 0) {
      fit.labels.emplace_back();
      fit.why.emplace_back("no time or size: not fitted");
      continue;
    }
    if (p.recorded) {
      if (!appliesAt(*p.recorded, c, p.scale)) {
        fit.labels.emplace_back();
        fit.why.push_back(fmt::format("NCCL ran {}, which the model has not at {}: not fitted",
                                      algoName(*p.recorded), p.scale.name()));
        continue;
      }
      fit.labels.push_back(p.recorded);
      fit.why.emplace_back("recorded by --nccl-choice");
      continue;
    }
    const Algo a = assumedAlgo(c, p.scale, traits.nvls);
    fit.labels.push_back(a);
    fit.why.push_back(p.scale.ncclNodes() == 2 && c == Coll::kAllReduce
                          ? "assumed (2 nodes: the tree, network bandwidth counted twice)"
                          : "assumed");
  }
  for (Algo a : {Algo::kNvls, Algo::kRing, Algo::kNvlsTree, Algo::kTree, Algo::kP2p}) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < fit.points.size(); ++i)
      if (fit.labels[i] == a) idx.push_back(i);
    if (!idx.empty()) fit.algos.push_back(fitOne(a, c, fit.points, idx, traits));
  }
  // The ring of a cluster measured only where NCCL runs something else (NVLS on one node, the
  // tree on two): its network term given, its latencies unknown (taken as 0).
  if (traits.netBusbwGBps && c != Coll::kAllToAll && !fit.find(Algo::kRing)) {
    FittedAlgo ring;
    ring.algo = Algo::kRing;
    for (const TermSpec& t : termsOf(Algo::kRing)) ring.terms.push_back({t.name, t.bandwidth, 0});
    ring.terms[1].coef = 1.0 / (*traits.netBusbwGBps * 1e3);
    ring.netKnown = ring.netGiven = true;
    fit.algos.push_back(std::move(ring));
  }
  if (fit.points.empty() || fit.algos.empty() ||
      std::none_of(fit.labels.begin(), fit.labels.end(), [](auto& l) { return l.has_value(); })) {
    throw UsageError("predict: no measured point to fit");
  }
  return fit;
}

std::optional<double> algoTimeUs(const FittedAlgo& f, Coll c, const Scale& s, uint64_t bytes) {
  if (!appliesAt(f.algo, c, s)) return std::nullopt;
  const int N = s.ncclNodes();
  const bool needsNet = N > 1;
  if (needsNet && !f.netKnown) return std::nullopt;
  if (!needsNet && !f.intraKnown) return std::nullopt;
  double lat = 0, bw = 0;
  for (size_t k = 0; k < f.terms.size(); ++k) {
    const double v = f.terms[k].coef * column(f.algo, k, c, s, bytes, false);
    if (!f.terms[k].bandwidth) {
      lat += v;
    } else if (f.algo == Algo::kP2p) {
      bw = std::max(bw, v);  // NVLink and network carry their parts at once
    } else {
      bw += v;
    }
  }
  return lat + bw;
}

std::optional<Prediction> predictAt(const ScaleFit& fit, const Scale& target, uint64_t bytes) {
  Prediction p;
  p.bytes = bytes;
  const FittedAlgo* chosen = nullptr;
  for (const FittedAlgo& f : fit.algos) {
    auto t = algoTimeUs(f, fit.coll, target, bytes);
    if (!t) continue;
    p.candidates.push_back({f.algo, *t});
    if (!chosen || *t < p.timeUs) {
      chosen = &f;
      p.timeUs = *t;
      p.algo = f.algo;
    }
  }
  if (!chosen) return std::nullopt;
  p.timeLo = p.timeUs * (1 + chosen->lo);
  p.timeHi = p.timeUs * (1 + chosen->hi);
  const double factor = busFactor(fit.coll, target.ranks());
  auto gbps = [&](double us) { return static_cast<double>(bytes) / us / 1e3; };
  p.algbw = gbps(p.timeUs);
  p.busbw = p.algbw * factor;
  p.busLo = gbps(p.timeHi) * factor;
  p.busHi = gbps(p.timeLo) * factor;
  return p;
}

std::string whyNot(const ScaleFit& fit, const Scale& target) {
  const int N = target.ncclNodes();
  if (N > 2 && fit.coll != Coll::kAllToAll) {
    return fmt::format(
        "no algorithm of the fit reaches {}: no measured scale above 2 nodes gives the ring's "
        "network term and no tree was fitted at 2 nodes; measure one, or give --net-busbw",
        target.name());
  }
  if (N > 1) {
    return fmt::format(
        "no measured scale across nodes gives the network term for {}: measure 2 nodes or "
        "more, or give --net-busbw (Ring only)",
        target.name());
  }
  return fmt::format("no measured point on one node gives the NVLink term for {}", target.name());
}

}  // namespace cb::predict
