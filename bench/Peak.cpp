#include "bench/Peak.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/Clock.h"
#include "core/Communicator.h"

namespace cb {

uint64_t copyProbeBytes(int nranks, uint64_t cacheBytes) {
  const uint64_t n = static_cast<uint64_t>(std::max(nranks, 1));
  const uint64_t past = std::min<uint64_t>(cacheBytes / n, 1ull << 30);
  return std::max(std::clamp<uint64_t>((512ull << 20) / n, 8ull << 20, kCopyProbeBytes), past);
}

double measureCopyGBps(Team& team, uint64_t bytes, int iterations, double timeoutSeconds,
                       std::vector<double>* byRank) {
  Communicator& comm = team.comm();
  const int n = comm.size();
  // Plain pages, faulted in before timing: the first touch is not what a copy costs.
  std::unique_ptr<char[]> src(new char[bytes]), dst(new char[bytes]);
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 0, bytes);
  auto timed = [&] {
    comm.barrier(Deadline::after(timeoutSeconds));
    double t0 = nowSeconds();
    std::memcpy(dst.get(), src.get(), bytes);
    return nowSeconds() - t0;
  };
  timed();
  std::vector<double> mine(static_cast<size_t>(std::max(iterations, 1)));
  for (auto& t : mine) t = timed();
  auto all = comm.allgatherBytes(mine.data(), mine.size() * sizeof(double),
                                 Deadline::after(timeoutSeconds));
  std::vector<double> times(all.size() / sizeof(double));
  std::memcpy(times.data(), all.data(), all.size());
  std::vector<double> slowest(mine.size(), 0);
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < mine.size(); ++i) {
      slowest[i] = std::max(slowest[i], times[r * mine.size() + i]);
    }
  }
  if (byRank) {
    byRank->assign(static_cast<size_t>(n), 0);
    for (int r = 0; r < n; ++r) {
      auto first = times.begin() + static_cast<std::ptrdiff_t>(r * mine.size());
      const double fastest =
          *std::min_element(first, first + static_cast<std::ptrdiff_t>(mine.size()));
      (*byRank)[static_cast<size_t>(r)] =
          fastest > 0 ? static_cast<double>(bytes) / fastest / 1e9 : 0;
    }
  }
  // The fastest iteration: noise (other processes, a descheduled rank) only ever slows a copy,
  // and a bound is what the memory can do.
  const double t = *std::min_element(slowest.begin(), slowest.end());
  return t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0;
}

double hostCopyGBps(Team& team, const std::vector<RankPlacement>& placements, double timeoutSeconds,
                    std::vector<double>* byRank, uint64_t cacheBytes) {
  const int n = team.size();
  for (const auto& p : placements) {
    if (!p.gpuBusId.empty() || p.host != placements.front().host) return 0;
  }
  return measureCopyGBps(team, copyProbeBytes(n, cacheBytes), 10, timeoutSeconds, byRank);
}

std::string copyByNumaLine(const std::vector<double>& byRank,
                           const std::vector<RankPlacement>& placements) {
  if (byRank.size() != placements.size()) return "";
  std::map<int, std::pair<double, int>> nodes;  // node: slowest rank's rate, ranks
  for (size_t r = 0; r < placements.size(); ++r) {
    const int node = placements[r].numaNode;
    if (node < 0) return "";
    auto [it, fresh] = nodes.try_emplace(node, byRank[r], 0);
    it->second.first = std::min(it->second.first, byRank[r]);
    ++it->second.second;
  }
  if (nodes.size() < 2) return "";
  std::string line = "# peak: host memory copy per NUMA node:";
  bool first = true;
  for (const auto& [node, v] : nodes) {
    line += fmt::format("{} node {} {:.2f} GB/s ({} rank{})", first ? "" : ",", node, v.first,
                        v.second, v.second == 1 ? "" : "s");
    first = false;
  }
  return line + "\n";
}

namespace {

bool judged(const ResultRecord& p) {
  return p.measured() && p.wrong.value_or(0) <= 0 && p.variant != "memcpy";
}

std::optional<double> figureOf(const ResultRecord& p) {
  return judgedFigure(p.nranks.value_or(0), p.placement == "in", p.algbw.value_or(0),
                      p.busbw.value_or(0));
}

// The point's collective by name: the loops below compare names rather than parse them again.
Collective collOf(const ResultRecord& p) { return parseCollective(p.collective); }
bool isColl(const ResultRecord& p, Collective c) { return p.collective == collectiveName(c); }
double peakOf(const ResultRecord& p) { return p.peakGBps.value_or(0); }

}  // namespace

std::string peakView(const std::vector<ResultRecord>& points) {
  std::string out;
  std::vector<Collective> colls;
  for (const auto& p : points) {
    if (peakOf(p) > 0 && std::find(colls.begin(), colls.end(), collOf(p)) == colls.end()) {
      colls.push_back(collOf(p));
    }
  }
  for (Collective c : colls) {
    Placement pl = Placement::kOut;
    bool anyOut = std::any_of(points.begin(), points.end(), [&](const ResultRecord& p) {
      return isColl(p, c) && p.placement == "out" && judged(p);
    });
    if (!anyOut) pl = Placement::kIn;
    std::vector<std::string> variants;
    std::set<uint64_t> sizes;
    const ResultRecord* first = nullptr;
    for (const auto& p : points) {
      if (!isColl(p, c) || p.placement != placementName(pl) || !judged(p)) continue;
      // The header's bound: a cache-resident point carries none (adapters/RunPeaks).
      if (!first && peakOf(p) > 0) first = &p;
      if (std::find(variants.begin(), variants.end(), p.variant) == variants.end()) {
        variants.push_back(p.variant);
      }
      sizes.insert(p.sizeBytes);
    }
    if (!first) continue;
    out +=
        fmt::format("# % of peak: {}, {}, {} ranks; bound {:.2f} GB/s {} ({})\n", collectiveName(c),
                    placementName(pl), first->nranks.value_or(0), peakOf(*first),
                    first->nranks.value_or(0) == 1 ? "algbw" : "busbw", first->peakLimit);
    std::vector<size_t> width;
    for (const auto& v : variants) width.push_back(std::max<size_t>(v.size(), 14));
    out += fmt::format("# {:>10}", "size");
    for (size_t i = 0; i < variants.size(); ++i)
      out += fmt::format("  {:>{}}", variants[i], width[i]);
    out += fmt::format("  {:>9}\n", "peak");
    for (uint64_t b : sizes) {
      out += fmt::format("{:>12}", b);
      double peak = 0;
      for (size_t i = 0; i < variants.size(); ++i) {
        auto it = std::find_if(points.begin(), points.end(), [&](const ResultRecord& p) {
          return isColl(p, c) && p.placement == placementName(pl) && p.sizeBytes == b &&
                 p.variant == variants[i] && judged(p);
        });
        std::string cell = "-";
        if (it != points.end()) {
          const double f = figureOf(*it).value_or(0);
          cell = peakOf(*it) > 0 ? fmt::format("{:.2f} {:>4}", f, percentOfPeak(f, peakOf(*it)))
                                 : fmt::format("{:.2f}    ?", f);
          peak = std::max(peak, peakOf(*it));
        }
        out += fmt::format("  {:>{}}", cell, width[i]);
      }
      out += fmt::format("  {:>9}\n", peak > 0 ? fmt::format("{:.2f}", peak) : "?");
    }
    out += "#\n";
  }
  return out;
}

std::vector<RunVerdict> judgeRun(const std::vector<ResultRecord>& points,
                                 const std::map<Collective, Bound>& bounds,
                                 double expectedOverride) {
  std::vector<RunVerdict> out;
  for (const auto& p : points) {
    if (p.variant == "memcpy") continue;
    auto seen = std::find_if(out.begin(), out.end(), [&](const RunVerdict& v) {
      return isColl(p, v.coll) && v.variant == p.variant;
    });
    if (seen != out.end()) continue;
    // A variant this world cannot run (mpi without mpirun, nccl without a GPU) has nothing to
    // judge.
    const bool ran = std::any_of(points.begin(), points.end(), [&](const ResultRecord& q) {
      return q.collective == p.collective && q.variant == p.variant &&
             q.status != ResultStatus::kUnsupported;
    });
    if (!ran) continue;
    std::vector<std::pair<uint64_t, double>> figures;
    for (const auto& q : points) {
      auto f = figureOf(q);
      if (q.collective == p.collective && q.variant == p.variant && judged(q) && f) {
        figures.emplace_back(q.sizeBytes, *f);
      }
    }
    auto b = bounds.find(collOf(p));
    Bound none;
    none.unknownWhy = "no topology";
    out.push_back({collOf(p), p.variant,
                   judge(figures, b == bounds.end() ? none : b->second, expectedOverride)});
  }
  return out;
}

std::string verdictLines(const std::vector<RunVerdict>& verdicts) {
  std::string out;
  for (const auto& v : verdicts) {
    out += fmt::format("# verdict {} {}: {}{}\n", collectiveName(v.coll), v.variant,
                       verdictText(v.verdict), v.kind ? "; " + v.kind->line : "");
  }
  return out;
}

std::string verdictsJson(const std::vector<RunVerdict>& verdicts,
                         const std::map<Collective, Bound>& bounds, const std::string& from) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& v : verdicts) {
    nlohmann::ordered_json j = {
        {"collective", collectiveName(v.coll)},
        {"variant", v.variant},
        {"verdict", verdictKindName(v.verdict.kind)},
        {"line", verdictText(v.verdict) + (v.kind ? "; " + v.kind->line : "")}};
    if (v.kind) {
      j["kind_verdict"] = std::string(kindVerdictName(v.kind->kind));
      j["reference_lines"] = v.kind->figureLines;
    }
    auto b = bounds.find(v.coll);
    if (b != bounds.end() && b->second.known()) {
      j["peak_gbps"] = b->second.busbw;
      j["limit"] = b->second.limit;
      j["basis"] = b->second.basis;
    }
    list.push_back(std::move(j));
  }
  return nlohmann::ordered_json{{"from", from}, {"verdicts", std::move(list)}}.dump();
}

}  // namespace cb
