#include "topology/LinkBounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/Text.h"
#include "topology/Placement.h"

namespace cb {
namespace {

const MachineTopology* hostOf(const std::vector<MachineTopology>& hosts, const RankPlacement& p) {
  for (const auto& h : hosts) {
    if (h.host == p.host) return &h;
  }
  return hosts.size() == 1 ? &hosts[0] : nullptr;
}

Bound unknown(std::string why) {
  Bound b;
  b.unknownWhy = std::move(why);
  return b;
}

const Bound& lower(const Bound& a, const Bound& b) {
  if (!a.known()) return a;
  if (!b.known()) return b;
  return b.busbw < a.busbw ? b : a;
}

// The GPU's links into an NVSwitch fabric (links summed), or to one peer GPU ("" = switches).
Bound nvlinkOf(const MachineTopology& h, const RankPlacement& p, const std::string& peer) {
  int links = 0, version = 0;
  for (const auto& e : h.nvlinks) {
    if (e.from != p.gpuBusId) continue;
    bool counted = peer.empty() ? e.remoteKind == "nvswitch" : e.to == peer;
    if (!counted) continue;
    links += std::max(e.links - e.linksDown, 0);
    version = std::max(version, e.version);
  }
  auto model = gpuLinks(p.gpuModel);
  std::string id = version > 0 ? fmt::format("nvlink{}", version)
                   : model     ? std::string(model->nvlink)
                               : "";
  if (id.empty()) return unknown(fmt::format("NVLink generation of '{}' unknown", p.gpuModel));
  return nvlinkBound(id, links, peer.empty());
}

Bound pcieOf(const MachineTopology& h, const RankPlacement& p) {
  int g = h.gpuIndex(p.gpuBusId);
  if (g < 0 || h.gpus[g].pci < 0) return unknown("GPU not on the recorded PCI tree");
  const PcieLink& l = h.pci[h.gpus[g].pci].link;
  auto model = gpuLinks(p.gpuModel);
  const bool p2p = !model || model->p2p;
  if (l.gen > 0 && l.width > 0) return pcieBound(fmt::format("pcie{}", l.gen), l.width, p2p);
  if (l.gbps <= 0) return unknown("PCIe link speed of the GPU unknown");
  // hwloc keeps GB/s only: find the generation and width that give it.
  for (const auto& row : peakTable()) {
    if (!startsWith(row.id, "pcie")) continue;
    for (int w : {16, 8, 4, 2, 1}) {
      if (std::abs(row.unitGBps * w - l.gbps) < 0.01 * l.gbps) {
        // gen3 x16 and gen4 x8 give the same rate: prefer the model's own generation.
        if (model && row.id != model->pcie && w != 16) continue;
        return pcieBound(row.id, w, p2p);
      }
    }
  }
  Bound b;
  b.busbw = l.gbps;
  b.limit = fmt::format("PCIe {:.1f} GB/s", l.gbps);
  b.basis = "the GPU's PCIe link as recorded";
  return b;
}

const NicPort* activePort(const Nic& n) {
  for (const auto& port : n.ports) {
    if (port.rateGbps > 0 && (port.state == "ACTIVE" || port.state == "up")) return &port;
  }
  return nullptr;
}

Bound nicOf(const MachineTopology& h, const std::string& nic, int sharers) {
  for (const auto& n : h.nics) {
    if (n.name != nic) continue;
    const NicPort* port = activePort(n);
    if (!port) return unknown(fmt::format("rate of {} on {} unknown", nic, h.host));
    return nicBound(port->linkLayer, port->rateGbps, sharers);
  }
  return unknown(fmt::format("no NIC recorded near the ranks on '{}'", h.host));
}

int sharersOf(const std::vector<RankPlacement>& pl, const RankPlacement& p) {
  return static_cast<int>(std::count_if(pl.begin(), pl.end(), [&](const RankPlacement& q) {
    return q.host == p.host && q.nic == p.nic;
  }));
}

}  // namespace

Bound pairLinkBound(const std::vector<MachineTopology>& hosts,
                    const std::vector<RankPlacement>& placements, int a, int b,
                    double copyGBpsPerRank) {
  const RankPlacement& pa = placements.at(a);
  const RankPlacement& pb = placements.at(b);
  const MachineTopology* ha = hostOf(hosts, pa);
  const MachineTopology* hb = hostOf(hosts, pb);
  if (!ha || !hb) return unknown("host topology not recorded");
  const LinkClass cls = classifyPair(pa, pb);
  if (cls == LinkClass::kNetwork) {
    return lower(nicOf(*ha, pa.nic, sharersOf(placements, pa)),
                 nicOf(*hb, pb.nic, sharersOf(placements, pb)));
  }
  if (pa.gpuBusId.empty() || pb.gpuBusId.empty()) {
    return memoryBound(Collective::kSendRecv, 2, copyGBpsPerRank);
  }
  if (cls == LinkClass::kNvlink) {
    if (!pa.nvlinkFabric.empty() && pa.nvlinkFabric == pb.nvlinkFabric) {
      return lower(nvlinkOf(*ha, pa, ""), nvlinkOf(*hb, pb, ""));
    }
    return nvlinkOf(*ha, pa, pb.gpuBusId);
  }
  return lower(pcieOf(*ha, pa), pcieOf(*hb, pb));
}

std::vector<RankPlacement> placeGpuRanks(const MachineTopology& machine,
                                         const std::vector<std::string>& rankHosts,
                                         const std::vector<int>& localRanks) {
  std::vector<RankPlacement> out;
  for (size_t r = 0; r < rankHosts.size() && r < localRanks.size(); ++r) {
    const int local = localRanks[r];
    if (local < 0 || local >= static_cast<int>(machine.gpus.size())) return {};
    out.push_back(placeThisRank(machine, static_cast<int>(r), rankHosts[r], local,
                                machine.gpus[local].busId));
  }
  return out;
}

Bound collectiveLinkBound(const std::vector<MachineTopology>& hosts,
                          const std::vector<RankPlacement>& placements, Collective c,
                          double copyGBpsPerRank) {
  const int n = static_cast<int>(placements.size());
  if (n < 2) return unknown("one rank: nothing crosses a link");
  std::map<std::string, std::vector<int>> byHost;
  bool hostRanks = false;
  for (const auto& p : placements) {
    byHost[p.host].push_back(p.rank);
    hostRanks = hostRanks || p.gpuBusId.empty();
  }
  if (hostRanks && byHost.size() == 1) return memoryBound(c, n, copyGBpsPerRank);
  Bound intra;
  bool haveIntra = false;
  if (!hostRanks) {
    for (int r = 0; r < n; ++r) {
      int next = (r + 1) % n;
      if (placements[r].host != placements[next].host) continue;
      Bound b = pairLinkBound(hosts, placements, r, next, copyGBpsPerRank);
      intra = haveIntra ? lower(intra, b) : b;
      haveIntra = true;
      if (!intra.known()) return intra;
    }
  }
  if (byHost.size() == 1) return intra;
  if (c == Collective::kSendRecv) {
    // Each rank sends to one peer: a crossing pair has its ranks' NICs, not the host's.
    Bound cross;
    bool any = false;
    for (int r = 0; r < n; ++r) {
      int next = (r + 1) % n;
      if (placements[r].host == placements[next].host) continue;
      const RankPlacement& a = placements[r];
      const RankPlacement& b = placements[next];
      const MachineTopology* ha = hostOf(hosts, a);
      const MachineTopology* hb = hostOf(hosts, b);
      if (!ha || !hb) return unknown("host topology not recorded");
      Bound one = lower(nicOf(*ha, a.nic, 1), nicOf(*hb, b.nic, 1));
      cross = any ? lower(cross, one) : one;
      any = true;
    }
    return haveIntra ? lower(intra, cross) : cross;
  }
  // Across hosts: each host's distinct NICs together, the smallest host's.
  Bound inter;
  bool haveInter = false;
  int perHost = 0;
  for (const auto& [host, ranks] : byHost) {
    perHost = std::max(perHost, static_cast<int>(ranks.size()));
    std::set<std::string> nics;
    for (int r : ranks) nics.insert(placements[r].nic);
    const MachineTopology* h = hostOf(hosts, placements[ranks.front()]);
    if (!h) return unknown(fmt::format("topology of host '{}' not recorded", host));
    Bound sum;
    std::vector<std::string> names;
    for (const auto& nic : nics) {
      Bound one = nicOf(*h, nic, 1);
      if (!one.known()) return one;
      if (names.empty()) {
        sum = one;
      } else {
        sum.busbw += one.busbw;
      }
      names.push_back(one.limit);
    }
    if (nics.size() > 1) {
      sum.limit = fmt::format("{} x {}", nics.size(), names.front());
      sum.basis = fmt::format("{} NICs of {} ranks on {}", nics.size(), ranks.size(), host);
    }
    inter = haveInter ? lower(inter, sum) : sum;
    haveInter = true;
  }
  if (c == Collective::kAllToAll && n > perHost) {
    // Only (n - L)/n of each rank's data leaves its host; busbw counts (n-1)/n of it.
    const double scale = (n - 1.0) / (n - perHost) / perHost;
    inter.busbw *= scale;
    inter.basis +=
        fmt::format("; alltoall: x (n-1)/(n-L)/L = {:.3f} (n {}, L {})", scale, n, perHost);
  }
  return haveIntra ? lower(intra, inter) : inter;
}

}  // namespace cb
