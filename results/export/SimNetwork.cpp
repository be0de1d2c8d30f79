// Alpha-beta fits of stored results and the simulator network files written from them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/Collective.h"
#include "core/Error.h"
#include "core/LinkClass.h"
#include "results/export/Export.h"

namespace cb {
namespace {

struct Point {
  double busBytes, timeUs;
};

// Bytes per call that the bus bandwidth counts: S times busbw/algbw as stored; from nccl-tests'
// factor when a result lacks bandwidths.
std::optional<double> busBytesOf(const ResultRecord& r, int nranks) {
  if (r.algbw && r.busbw && *r.algbw > 0) return r.sizeBytes * (*r.busbw / *r.algbw);
  try {
    return r.sizeBytes * busBwFactor(parseCollective(r.collective), nranks);
  } catch (const Error&) {
    return std::nullopt;  // p2p and proxy results have no bus factor
  }
}

// Weighted least squares of t = a + b x with weights 1/t^2 (relative error), a >= 0.
void fit(const std::vector<Point>& pts, AlphaBetaFit& f) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Point& p : pts) {
    const double w = 1.0 / (p.timeUs * p.timeUs);
    sw += w;
    sx += w * p.busBytes;
    sy += w * p.timeUs;
    sxx += w * p.busBytes * p.busBytes;
    sxy += w * p.busBytes * p.timeUs;
  }
  const double det = sw * sxx - sx * sx;
  double a = det != 0 ? (sxx * sy - sx * sxy) / det : 0;
  double b = det != 0 ? (sw * sxy - sx * sy) / det : 0;
  if (a < 0 || det == 0) {  // a negative latency means nothing physical: fit the slope alone
    a = 0;
    b = sxx > 0 ? sxy / sxx : 0;
  }
  f.alphaUs = a;
  // b is us per byte; GB/s = 1e9 B/s = 1e3 B/us.
  f.busGbps = b > 0 ? 1e-3 / b : 0;
}

// The fit's relative errors against the measured points.
void errorsAgainst(const std::vector<Point>& pts, AlphaBetaFit& f) {
  const double b = f.busGbps > 0 ? 1e-3 / f.busGbps : 0;
  double sq = 0, worst = 0;
  for (const Point& p : pts) {
    const double e = std::abs(f.alphaUs + b * p.busBytes - p.timeUs) / p.timeUs;
    sq += e * e;
    worst = std::max(worst, e);
  }
  f.rmsRelError = std::sqrt(sq / pts.size());
  f.maxRelError = worst;
}

int classRank(const std::string& name) {
  auto c = parseLinkClass(name);
  return c ? static_cast<int>(*c) : 99;
}

// Ring steps a collective takes on n ranks (the latency terms of the ring model).
int ringSteps(const std::string& collective, int n) {
  if (collective == "allreduce") return 2 * (n - 1);
  return std::max(1, n - 1);
}

// The fit a link class is described by: its fastest allreduce variant (highest bus bandwidth:
// what the links can carry), else the fastest fit of any collective.
const AlphaBetaFit* representative(const std::vector<AlphaBetaFit>& fits, const std::string& cls) {
  const AlphaBetaFit* pick = nullptr;
  for (const AlphaBetaFit& f : fits) {
    if (f.linkClass != cls) continue;
    const bool allreduce = f.collective == "allreduce";
    const bool pickAllreduce = pick && pick->collective == "allreduce";
    if (!pick || (allreduce && !pickAllreduce) ||
        (allreduce == pickAllreduce && f.busGbps > pick->busGbps)) {
      pick = &f;
    }
  }
  return pick;
}

std::vector<std::string> classesInnermostFirst(const std::vector<AlphaBetaFit>& fits) {
  std::vector<std::string> classes;
  for (const AlphaBetaFit& f : fits) {
    if (std::find(classes.begin(), classes.end(), f.linkClass) == classes.end()) {
      classes.push_back(f.linkClass);
    }
  }
  std::sort(classes.begin(), classes.end(),
            [](const std::string& a, const std::string& b) { return classRank(a) < classRank(b); });
  return classes;
}

}  // namespace

std::vector<AlphaBetaFit> fitAlphaBeta(const std::vector<ExportRun>& runs,
                                       std::vector<std::string>* leftOut) {
  using Key = std::tuple<std::string, std::string, std::string, int>;
  struct Group {
    std::map<uint64_t, Point> bySize;  // one point per size: the fastest (the machine's best)
    int nodes = 0;
  };
  std::map<Key, Group> groups;
  for (const ExportRun& er : runs) {
    for (const ResultRecord& r : er.results) {
      if (r.status != ResultStatus::kOk || !r.timeKnown || r.timeUs <= 0 || r.sizeBytes == 0)
        continue;
      const int n = r.nranks ? *r.nranks : er.run.worldSize;
      auto bytes = busBytesOf(r, n);
      if (!bytes || n < 2) continue;
      Group& g =
          groups[{er.linkClass.empty() ? "unknown" : er.linkClass, r.collective, r.variant, n}];
      g.nodes = er.nodes;
      auto it = g.bySize.find(r.sizeBytes);
      if (it == g.bySize.end() || r.timeUs < it->second.timeUs) {
        g.bySize[r.sizeBytes] = Point{*bytes, r.timeUs};
      }
    }
  }
  std::vector<AlphaBetaFit> fits;
  std::vector<std::string> dropped;
  for (const auto& [key, g] : groups) {
    if (g.bySize.size() < 2) continue;
    AlphaBetaFit f;
    std::tie(f.linkClass, f.collective, f.variant, f.nranks) = key;
    f.nodes = g.nodes;
    f.points = static_cast<int>(g.bySize.size());
    f.minBytes = g.bySize.begin()->first;
    f.maxBytes = g.bySize.rbegin()->first;
    std::vector<Point> pts;
    for (const auto& [size, p] : g.bySize) pts.push_back(p);
    // The lower envelope: a size is never slower than a larger one was on the same ranks (the
    // machine moved more in less time), so small sizes slowed by a descheduled rank do not tilt
    // the slope; the errors are still those against the points as measured.
    std::vector<Point> envelope = pts;
    for (size_t i = envelope.size() - 1; i-- > 0;) {
      envelope[i].timeUs = std::min(envelope[i].timeUs, envelope[i + 1].timeUs);
    }
    fit(envelope, f);
    errorsAgainst(pts, f);
    // Flat times fit a slope of rounding noise, which would read as an endless bandwidth.
    if (f.busGbps > 0 && envelope.back().timeUs > envelope.front().timeUs) {
      fits.push_back(f);
    } else {
      dropped.push_back(fmt::format(
          "{} {} on {} ranks ({}): left out, its time does not grow with size ({}..{} B)",
          f.collective, f.variant, f.nranks, f.linkClass, f.minBytes, f.maxBytes));
    }
  }
  if (leftOut) *leftOut = dropped;
  if (fits.empty() && !dropped.empty()) {
    throw UsageError(fmt::format("export: nothing to fit: {}", dropped.front()));
  }
  if (fits.empty()) {
    throw UsageError(
        "export: nothing to fit (needs ok collective results at two or more sizes per "
        "collective and variant, on 2 or more ranks)");
  }
  return fits;
}

std::string fitsCsv(const std::vector<AlphaBetaFit>& fits) {
  std::string out =
      "link_class,collective,variant,nranks,nodes,points,min_bytes,max_bytes,alpha_us,"
      "busbw_gbps,rms_rel_error,max_rel_error\n";
  for (const AlphaBetaFit& f : fits) {
    out += fmt::format("{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.4f},{:.4f}\n", f.linkClass,
                       f.collective, f.variant, f.nranks, f.nodes, f.points, f.minBytes, f.maxBytes,
                       f.alphaUs, f.busGbps, f.rmsRelError, f.maxRelError);
  }
  return out;
}

std::string astraSimNetworkYaml(const std::vector<AlphaBetaFit>& fits) {
  std::string topology, npus, bandwidth, latency, notes;
  for (const std::string& cls : classesInnermostFirst(fits)) {
    const AlphaBetaFit& f = *representative(fits, cls);
    // A dimension spans the ranks its class joins: the hosts for the network, else the ranks
    // of one host.
    const int hosts = std::max(1, f.nodes);
    const int count = cls == "network" ? hosts : std::max(2, f.nranks / hosts);
    // A ring's link carries the bus bandwidth, and its latency is alpha over the ring's steps.
    const double latencyNs = f.alphaUs * 1000.0 / ringSteps(f.collective, f.nranks);
    const char* sep = topology.empty() ? "" : ", ";
    topology += fmt::format("{}Ring", sep);
    npus += fmt::format("{}{}", sep, count);
    bandwidth += fmt::format("{}{:.6g}", sep, f.busGbps);
    latency += fmt::format("{}{:.6g}", sep, latencyNs);
    notes += fmt::format(
        "# {}: {} {} on {} ranks, {} sizes {}..{} B: alpha {:.6g} us, busbw {:.6g} GB/s, fit "
        "error rms {:.1f}% max {:.1f}%\n",
        cls, f.collective, f.variant, f.nranks, f.points, f.minBytes, f.maxBytes, f.alphaUs,
        f.busGbps, 100 * f.rmsRelError, 100 * f.maxRelError);
  }
  return fmt::format(
      "# ASTRA-sim analytical network fitted by collbench export --format astra-sim: one\n"
      "# dimension per link class (innermost first), t = alpha + S*busfactor/busbw read as a\n"
      "# ring (link bandwidth = busbw, link latency = alpha / ring steps).\n{}"
      "topology: [ {} ]\nnpus_count: [ {} ]\nbandwidth: [ {} ]  # GB/s\nlatency: [ {} ]  # ns\n",
      notes, topology, npus, bandwidth, latency);
}

std::string simaiBusbwYaml(const std::vector<AlphaBetaFit>& fits) {
  // TP: the innermost class inside a host; DP and EP: between hosts ("network").
  std::string inner;
  for (const std::string& cls : classesInnermostFirst(fits)) {
    if (cls != "network" && cls != "unknown") {
      inner = cls;
      break;
    }
  }
  auto value = [&](const std::string& cls, const std::string& coll) -> std::string {
    double best = 0;
    for (const AlphaBetaFit& f : fits) {
      if (!cls.empty() && f.linkClass == cls && f.collective == coll) {
        best = std::max(best, f.busGbps);
      }
    }
    return best > 0 ? fmt::format("{:.6g}", best) : "null";
  };
  std::string out = "collbench\n";
  auto section = [&](const char* name, const std::string& cls) {
    out += fmt::format("{}:\n", name);
    for (auto [ours, theirs] : {std::pair{"allreduce", "allreduce"},
                                {"allgather", "allgather"},
                                {"reduce_scatter", "reducescatter"},
                                {"alltoall", "alltoall"}}) {
      out += fmt::format("{},: {}\n", theirs, value(cls, ours));
    }
  };
  section("TP", inner);
  section("DP", "network");
  section("EP", "network");
  out += "PP:\nbusbw: null\n";
  return out;
}

}  // namespace cb
