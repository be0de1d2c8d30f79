#include "training_proxies/ProxyPeak.h"

#include <algorithm>

#include "core/Collective.h"
#include "topology/LinkBounds.h"

namespace cb::proxy {
namespace {

// A group's placements renumbered 0..k-1 (the bounds index placements by rank).
std::vector<RankPlacement> placementsOf(const std::vector<RankPlacement>& all,
                                        const std::vector<int>& ranks) {
  std::vector<RankPlacement> out;
  for (int r : ranks) {
    if (r < 0 || r >= static_cast<int>(all.size())) return {};
    out.push_back(all[r]);
    out.back().rank = static_cast<int>(out.size()) - 1;
  }
  return out;
}

}  // namespace

std::vector<int> groupOfRankZero(const ProxyOptions& o, int worldSize, const std::string& group) {
  const Layout z = resolveLayout(o, worldSize, 0);
  // (key, rank): key orders the members as Team::split does (Proxy.cpp, the sub-teams).
  std::vector<std::pair<int, int>> members;
  for (int r = 0; r < worldSize; ++r) {
    const Layout l = resolveLayout(o, worldSize, r);
    const bool sameDp = l.dpIdx == z.dpIdx, samePp = l.ppIdx == z.ppIdx,
               sameTp = l.tpIdx == z.tpIdx;
    if (group == "tp" && sameDp && samePp) members.push_back({l.tpIdx, r});
    if (group == "pp" && sameDp && sameTp) members.push_back({l.ppIdx, r});
    if ((group == "dp" || group == "sharded") && samePp && sameTp) members.push_back({l.dpIdx, r});
    if (group == "emb" && sameDp && sameTp && (l.ppIdx == 0 || l.ppIdx == l.pp - 1)) {
      members.push_back({l.ppIdx, r});
    }
    if (group == "mp" && sameDp) members.push_back({l.ppIdx * l.tp + l.tpIdx, r});
    if (group == "world") members.push_back({r, r});
  }
  std::sort(members.begin(), members.end());
  std::vector<int> out;
  for (const auto& [key, r] : members) out.push_back(r);
  return out;
}

void setCallPeaks(const ProxyOptions& o, const std::vector<MachineTopology>& hosts,
                  const std::vector<RankPlacement>& placements, double copyGBpsPerRank,
                  ProxyRun& run) {
  double atPeak = 0;
  bool all = !run.calls.empty();
  for (CallStat& c : run.calls) {
    c.peak = 0;
    c.peakLimit.clear();
    std::vector<int> ranks = groupOfRankZero(o, run.n, c.group);
    std::vector<RankPlacement> group = placementsOf(placements, ranks);
    Bound b;
    double busBytes = 0;
    if (c.coll == "send" || c.coll == "recv") {
      // Rank 0 is the first stage: its messages go to and come from the second.
      if (group.size() >= 2) {
        b = pairLinkBound(hosts, group, 0, 1, copyGBpsPerRank);
        busBytes = static_cast<double>(c.bytes);
      }
    } else if (group.size() >= 2 && c.coll != "push" && c.coll != "pull") {
      const Collective coll = parseCollective(c.coll);
      b = collectiveLinkBound(hosts, group, coll, copyGBpsPerRank);
      busBytes = static_cast<double>(c.bytes) * busBwFactor(coll, static_cast<int>(group.size()));
    }
    if (!b.known()) {
      all = false;
      continue;
    }
    c.peak = b.busbw;
    c.peakLimit = b.limit;
    atPeak += c.callsPerStep * busBytes / (b.busbw * 1e9);
  }
  run.commAtPeak = all ? atPeak : -1;
}

double measuredCallSeconds(const ProxyRun& run) {
  double s = 0;
  for (const CallStat& c : run.calls) s += c.callsPerStep * c.seconds;
  return s;
}

}  // namespace cb::proxy
