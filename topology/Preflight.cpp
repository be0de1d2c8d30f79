#include "topology/Preflight.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "topology/Paths.h"

namespace cb {
namespace {

std::string deviceName(const MachineTopology& t, int pci) {
  for (const auto& g : t.gpus) {
    if (g.pci == pci) return fmt::format("{} {} ({})", g.name, g.busId, g.model);
  }
  for (size_t k = 0; k < t.nics.size(); ++k) {
    if (t.nics[k].pci == pci)
      return fmt::format("NIC{} {} {}", k, t.nics[k].name, t.pci[pci].busId);
  }
  return fmt::format("{} {}", t.pci[pci].role, t.pci[pci].busId);
}

void checkPcie(const MachineTopology& t, std::vector<Finding>& out) {
  // Peers: devices of one role and one vendor:device id. The fastest of them sets the bar when
  // the maximum is not known (an hwloc export records only the current speed).
  std::map<std::string, std::vector<int>> peers;
  for (size_t i = 0; i < t.pci.size(); ++i) {
    const auto& n = t.pci[i];
    if (n.kind != PciNode::Kind::kDevice) continue;
    if (n.role == "gpu" || n.role == "nic" || n.role == "nvswitch") {
      peers[n.role + "/" + n.vendorDevice].push_back(static_cast<int>(i));
    }
  }
  for (const auto& [key, members] : peers) {
    double best = 0;
    for (int i : members) best = std::max(best, t.pci[i].link.gbps);
    for (int i : members) {
      const PcieLink& l = t.pci[i].link;
      if (l.maxGen > 0 && l.maxWidth > 0 && l.gen > 0 && l.width > 0) {
        if (l.gen < l.maxGen || l.width < l.maxWidth) {
          out.push_back({t.host, deviceName(t, i), "PCIe link",
                         fmt::format("gen{} x{}", l.maxGen, l.maxWidth),
                         fmt::format("gen{} x{}", l.gen, l.width)});
        }
        continue;
      }
      // 2% slack: hwloc derives the speed from generation and width with rounding.
      if (members.size() > 1 && l.gbps > 0 && l.gbps < best * 0.98) {
        out.push_back({t.host, deviceName(t, i), "PCIe link",
                       fmt::format("{:.1f} GB/s like its {} peers", best, members.size() - 1),
                       fmt::format("{:.1f} GB/s", l.gbps)});
      }
    }
  }
}

void checkNvlinks(const MachineTopology& t, std::vector<Finding>& out) {
  std::map<std::string, int> bestOfModel;
  std::map<std::string, int> countOfModel;
  for (const auto& g : t.gpus) {
    int n = activeNvlinks(t, g.busId);
    bestOfModel[g.model] = std::max(bestOfModel[g.model], n);
    countOfModel[g.model]++;
  }
  for (const auto& g : t.gpus) {
    int active = activeNvlinks(t, g.busId), down = 0;
    for (const auto& e : t.nvlinks) {
      if (e.from == g.busId) down += e.linksDown;
    }
    int best = bestOfModel[g.model];
    std::string dev = fmt::format("{} {} ({})", g.name, g.busId, g.model);
    if (down > 0 && active > 0) {
      out.push_back({t.host, dev, "NVLinks", fmt::format("{} active", active + down),
                     fmt::format("{} active, {} down", active, down)});
    } else if (active < best) {
      out.push_back({t.host, dev, "NVLinks", fmt::format("{} active like its peers", best),
                     fmt::format("{} active", active)});
    }
  }
}

void checkNics(const MachineTopology& t, std::vector<Finding>& out) {
  double bestRdma = 0;
  for (const auto& n : t.nics) {
    for (const auto& p : n.ports) {
      if (n.kind == "rdma" && p.state == "ACTIVE") bestRdma = std::max(bestRdma, p.rateGbps);
    }
  }
  for (size_t k = 0; k < t.nics.size(); ++k) {
    const Nic& n = t.nics[k];
    if (n.kind != "rdma") continue;  // Ethernet ports are often unplugged on purpose
    for (const auto& p : n.ports) {
      std::string dev = fmt::format("NIC{} {} port {}", k, n.name, p.port);
      if (!p.state.empty() && p.state != "ACTIVE") {
        out.push_back({t.host, dev, "port state", "ACTIVE", p.state});
      } else if (p.rateGbps > 0 && p.rateGbps < bestRdma) {
        out.push_back({t.host, dev, "rate", fmt::format("{:g} Gb/s like its peers", bestRdma),
                       fmt::format("{:g} Gb/s", p.rateGbps)});
      }
    }
  }
}

// GPUs hang in equal numbers under the PCIe switches of one board (two per switch on a DGX-2); a
// switch with fewer than its peers has lost one (fallen off the bus, or not enumerated).
void checkGpusPerSwitch(const MachineTopology& t, std::vector<Finding>& out) {
  std::map<int, int> gpusOf;  // lowest switch (upstream port) above a GPU -> GPUs below it
  for (const auto& g : t.gpus) {
    for (int i = g.pci >= 0 ? t.pci[g.pci].parent : -1; i >= 0; i = t.pci[i].parent) {
      if (t.pci[i].role == "switch" && !isSwitchDownstreamPort(t, i)) {
        gpusOf[i]++;
        break;
      }
    }
  }
  int most = 0;
  for (const auto& [sw, n] : gpusOf) most = std::max(most, n);
  if (gpusOf.size() < 2) return;
  for (const auto& [sw, n] : gpusOf) {
    if (n < most) {
      out.push_back({t.host, fmt::format("PCIe switch {}", t.pci[sw].busId), "GPUs below it",
                     fmt::format("{} like its peers", most), std::to_string(n)});
    }
  }
}

template <class T>
T mostCommon(const std::vector<T>& values, bool preferLarger) {
  std::map<T, int> count;
  for (const auto& v : values) count[v]++;
  T best = values.front();
  for (const auto& [v, n] : count) {
    if (n > count[best] || (n == count[best] && preferLarger && best < v)) best = v;
  }
  return best;
}

std::string gpuModels(const MachineTopology& t) {
  std::vector<std::string> models;
  for (const auto& g : t.gpus) {
    if (std::find(models.begin(), models.end(), g.model) == models.end()) models.push_back(g.model);
  }
  std::sort(models.begin(), models.end());
  std::string s;
  for (const auto& m : models) s += (s.empty() ? "" : ", ") + m;
  return s.empty() ? "none" : s;
}

}  // namespace

std::string Finding::line() const {
  return fmt::format("{}{}: {}: expected {}, seen {}", host.empty() ? "" : host + ": ", device,
                     what, expected, seen);
}

std::vector<Finding> checkMachine(const MachineTopology& t) {
  std::vector<Finding> out;
  checkPcie(t, out);
  checkNvlinks(t, out);
  checkGpusPerSwitch(t, out);
  checkNics(t, out);
  return out;
}

std::vector<Finding> checkHosts(const std::vector<MachineTopology>& hosts) {
  std::vector<Finding> out;
  if (hosts.size() < 2) return out;
  std::vector<int> counts;
  std::vector<std::string> models;
  for (const auto& h : hosts) {
    counts.push_back(static_cast<int>(h.gpus.size()));
    models.push_back(gpuModels(h));
  }
  int count = mostCommon(counts, true);
  std::string model = mostCommon(models, false);
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (counts[i] != count) {
      out.push_back(
          {hosts[i].host, "host", "GPU count", std::to_string(count), std::to_string(counts[i])});
    }
    if (models[i] != model) {
      out.push_back({hosts[i].host, "host", "GPU model", model, models[i]});
    }
  }
  return out;
}

std::vector<Finding> checkPlacements(const std::vector<RankPlacement>& ranks) {
  std::vector<Finding> out;
  for (const auto& r : ranks) {
    if (r.gpuBusId.empty() || r.gpuNumaNode < 0 || r.numaNode < 0) continue;
    if (r.numaNode != r.gpuNumaNode) {
      out.push_back({r.host, fmt::format("rank {} (GPU {})", r.rank, r.gpuBusId), "NUMA binding",
                     fmt::format("node {} (the GPU's)", r.gpuNumaNode),
                     fmt::format("node {}", r.numaNode)});
    }
  }
  return out;
}

std::vector<Finding> checkFingerprints(const std::vector<std::string>& hostOfRank,
                                       const std::vector<std::string>& fingerprintOfRank) {
  std::vector<Finding> out;
  for (size_t r = 1; r < fingerprintOfRank.size(); ++r) {
    if (fingerprintOfRank[r] != fingerprintOfRank[0]) {
      out.push_back({r < hostOfRank.size() ? hostOfRank[r] : "", fmt::format("rank {}", r),
                     "fingerprint", fingerprintOfRank[0] + " (rank 0's)", fingerprintOfRank[r]});
    }
  }
  return out;
}

}  // namespace cb
