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

// One recorded PCIe link; `gen` ("pcie3", "" none) breaks the tie where two generations and
// widths give the same rate (gen3 x16 and gen4 x8).
Bound pcieLinkOf(const PcieLink& l, std::string_view gen, bool p2p, std::string_view what) {
  if (l.gen > 0 && l.width > 0) return pcieBound(fmt::format("pcie{}", l.gen), l.width, p2p);
  if (l.gbps <= 0) return unknown(fmt::format("PCIe link speed of the {} unknown", what));
  // hwloc keeps GB/s only: find the generation and width that give it.
  for (const auto& row : peakTable()) {
    if (!startsWith(row.id, "pcie")) continue;
    for (int w : {16, 8, 4, 2, 1}) {
      if (std::abs(row.unitGBps * w - l.gbps) < 0.01 * l.gbps) {
        if (!gen.empty() && row.id != gen && w != 16) continue;
        return pcieBound(row.id, w, p2p);
      }
    }
  }
  Bound b;
  b.busbw = l.gbps;
  b.limit = fmt::format("PCIe {:.1f} GB/s", l.gbps);
  b.basis = fmt::format("the {}'s PCIe link as recorded", what);
  return b;
}

Bound pcieOf(const MachineTopology& h, const RankPlacement& p) {
  int g = h.gpuIndex(p.gpuBusId);
  if (g < 0 || h.gpus[g].pci < 0) return unknown("GPU not on the recorded PCI tree");
  auto model = gpuLinks(p.gpuModel);
  return pcieLinkOf(h.pci[h.gpus[g].pci].link, model ? model->pcie : "", !model || model->p2p,
                    "GPU");
}

// The PCI nodes above a GPU rank's GPU, nearest first (the GPU itself left out: its own link is
// pcieOf's); empty when the GPU is not on the tree.
std::vector<int> nodesAbove(const MachineTopology& h, const RankPlacement& p) {
  std::vector<int> out;
  int g = h.gpuIndex(p.gpuBusId);
  if (g < 0 || h.gpus[g].pci < 0) return out;
  for (int n = h.pci[h.gpus[g].pci].parent; n >= 0; n = h.pci[n].parent) out.push_back(n);
  return out;
}

// The PCIe links above the GPUs that several ranks' traffic crosses at once: a switch's uplink,
// a root port. Ring collectives (rank order): each hop between two GPU ranks of one host that
// meet over PCIe goes up from the sender to the nearest common node and down to the receiver
// (through the host when the model has no peer-to-peer); a link carrying f hops one way bounds
// the ring at rate / f. Alltoall: a link with k of the n ranks below it carries k (l-k)/n of S
// each way to the other l-k ranks of its host while busbw counts (n-1)/n of it: rate x (n-1) /
// (k (l-k)) (traffic to other hosts may leave by a NIC below the link). Unknown when no link
// above a GPU is shared or its rate is not recorded.
Bound sharedPcieBound(const std::vector<MachineTopology>& hosts,
                      const std::vector<RankPlacement>& placements, Collective c) {
  const int n = static_cast<int>(placements.size());
  struct Load {
    int up = 0, down = 0, below = 0;
  };
  std::map<std::pair<const MachineTopology*, int>, Load> loads;
  std::map<const MachineTopology*, std::string> genOf;
  std::set<const MachineTopology*> nvlinkHosts;
  std::map<const MachineTopology*, int> ranksOn;
  for (const auto& p : placements) {
    if (const MachineTopology* h = hostOf(hosts, p)) ranksOn[h]++;
  }
  for (int r = 0; r < n; ++r) {
    const RankPlacement& a = placements[r];
    const MachineTopology* h = hostOf(hosts, a);
    if (!h || a.gpuBusId.empty()) return unknown("no GPU ranks");
    if (auto m = gpuLinks(a.gpuModel)) genOf[h] = std::string(m->pcie);
    if (!a.nvlinkFabric.empty() || !a.nvlinkPeers.empty()) nvlinkHosts.insert(h);
    const std::vector<int> up = nodesAbove(*h, a);
    for (int node : up) loads[{h, node}].below++;
    if (c == Collective::kAllToAll) continue;
    const int next = (r + 1) % n;
    const RankPlacement& b = placements[next];
    if (next == r || b.host != a.host) continue;
    const LinkClass cls = classifyPair(a, b);
    if (cls == LinkClass::kNvlink || cls == LinkClass::kNetwork) continue;
    auto model = gpuLinks(a.gpuModel);
    const bool p2p = !model || model->p2p;
    const std::vector<int> down = nodesAbove(*h, b);
    // The nearest node above both (none without peer-to-peer: the data passes host memory).
    int common = -1;
    for (int x : up) {
      if (p2p && std::find(down.begin(), down.end(), x) != down.end()) {
        common = x;
        break;
      }
    }
    for (int x : up) {
      if (x == common) break;
      loads[{h, x}].up++;
    }
    for (int x : down) {
      if (x == common) break;
      loads[{h, x}].down++;
    }
  }
  Bound best = unknown("no shared PCIe link");
  for (const auto& [key, load] : loads) {
    const auto& [h, node] = key;
    double share = 0;  // the bound as a fraction of the link's rate
    std::string why;
    if (c == Collective::kAllToAll) {
      // NVLink carries an alltoall between GPUs of one fabric; the PCIe tree then is not used.
      // Only the traffic to the host's other ranks is sure to cross it (a NIC may sit below).
      const int k = load.below, l = ranksOn[h];
      if (nvlinkHosts.count(h) || k == 0 || k >= l) continue;
      share = (n - 1.0) / (k * (l - k));
      why = fmt::format(
          "{} of the host's {} ranks below it send (l-k)/n of S across it: x (n-1)/(k(l-k)) = "
          "{:.3f}",
          k, l, share);
    } else {
      const int f = std::max(load.up, load.down);
      if (f < 1) continue;
      share = 1.0 / f;
      why = fmt::format("{} of the ring's hops cross it one way{}", f,
                        f > 1 ? fmt::format(": / {}", f) : "");
    }
    const PciNode& x = h->pci[node];
    if (x.kind == PciNode::Kind::kHostBridge) continue;  // a host bridge records no link
    Bound link = pcieLinkOf(x.link, genOf[h], true, "link");
    if (!link.known()) continue;
    Bound b = link;
    b.busbw = link.busbw * share;
    b.limit = fmt::format("{} link above the GPUs at {}{}", link.limit, x.busId,
                          share < 1 ? fmt::format(" (shared, x {:.2f})", share) : "");
    b.basis = fmt::format("{} ({}); {}", link.basis, x.busId, why);
    if (!best.known() || b.busbw < best.busbw) best = b;
  }
  return best;
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
    Bound m = memoryBound(Collective::kSendRecv, 2, copyGBpsPerRank);
    setCache(m, ranksCacheBytes(hosts, {pa, pb}));
    return m;
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

uint64_t ranksCacheBytes(const std::vector<MachineTopology>& hosts,
                         const std::vector<RankPlacement>& placements) {
  if (placements.empty()) return 0;
  const MachineTopology* h = hostOf(hosts, placements.front());
  if (!h) return 0;
  std::set<int> cpus;
  for (const auto& p : placements) {
    if (p.host != placements.front().host) return 0;
    cpus.insert(p.cpus.begin(), p.cpus.end());
  }
  // Every cache a rank may run beside holds part of the buffers (unknown CPUs: all of them).
  uint64_t bytes = 0;
  for (const auto& g : h->coreGroups) {
    const auto mine = parseCpuList(g.cpus);
    const bool used = cpus.empty() || std::any_of(mine.begin(), mine.end(),
                                                  [&](int c) { return cpus.count(c) > 0; });
    if (used && g.level > 0) bytes += g.cacheBytes;
  }
  return bytes;
}

namespace {

Bound collectiveBound(const std::vector<MachineTopology>& hosts,
                      const std::vector<RankPlacement>& placements, Collective c,
                      double copyGBpsPerRank) {
  const int n = static_cast<int>(placements.size());
  if (n < 1) return unknown("no ranks");
  if (n == 1) {
    const RankPlacement& p = placements.front();
    if (!p.gpuBusId.empty()) return gpuOneRankBound(p.gpuModel);
    Bound b =
        oneRankBound(copyGBpsPerRank, "host memory",
                     fmt::format("host memory: {:.2f} GB/s copied by the rank", copyGBpsPerRank));
    // Out of place one rank's buffers are S in and S out.
    b.measured = true;
    b.workingSetPerByte = 2;
    setCache(b, ranksCacheBytes(hosts, placements));
    return b;
  }
  std::map<std::string, std::vector<int>> byHost;
  bool hostRanks = false;
  for (const auto& p : placements) {
    byHost[p.host].push_back(p.rank);
    hostRanks = hostRanks || p.gpuBusId.empty();
  }
  if (hostRanks && byHost.size() == 1) {
    Bound b = memoryBound(c, n, copyGBpsPerRank);
    setCache(b, ranksCacheBytes(hosts, placements));
    return b;
  }
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
  if (haveIntra) {
    // A link above the GPUs can be slower than theirs, or carry several of the ring's hops.
    Bound shared = sharedPcieBound(hosts, placements, c);
    if (shared.known() && shared.busbw < intra.busbw * (1 - 1e-9)) intra = shared;
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

}  // namespace

Bound collectiveLinkBound(const std::vector<MachineTopology>& hosts,
                          const std::vector<RankPlacement>& placements, Collective c,
                          double copyGBpsPerRank) {
  return withCollective(collectiveBound(hosts, placements, c, copyGBpsPerRank), c);
}

}  // namespace cb
