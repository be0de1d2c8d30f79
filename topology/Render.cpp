#include "topology/Render.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/Size.h"
#include "topology/Paths.h"

namespace cb {
namespace {

std::string bytesText(uint64_t b) {
  if (b == 0) return "?";
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (auto [u, name] : kUnits) {
    if (b >= u) return fmt::format("{:.0f} {}", static_cast<double>(b) / u, name);
  }
  return fmt::format("{} B", b);
}

std::string linkText(const PcieLink& l) {
  std::string s;
  if (l.gbps > 0) s = fmt::format("{:.1f} GB/s", l.gbps);
  if (l.gen > 0 || l.width > 0) {
    s += (s.empty() ? "" : ", ") + fmt::format("gen{} x{}", l.gen, l.width);
    if ((l.maxGen > l.gen) || (l.maxWidth > l.width)) {
      s += fmt::format(" (max gen{} x{})", l.maxGen, l.maxWidth);
    }
  }
  return s;
}

class TreePrinter {
 public:
  explicit TreePrinter(const MachineTopology& t) : t_(t) {
    for (size_t i = 0; i < t.pci.size(); ++i) {
      if (t.pci[i].parent >= 0) children_[t.pci[i].parent].push_back(static_cast<int>(i));
    }
  }

  std::string print() {
    const auto& t = t_;
    std::string name = t.host;
    if (!t.product.empty()) name += (name.empty() ? "(" : " (") + t.product + ")";
    out_ += fmt::format("Machine{}{}: {} package{}, {} NUMA node{}, {} cores, {} PUs\n",
                        name.empty() ? "" : " ", name, t.packages.size(),
                        t.packages.size() == 1 ? "" : "s", t.numa.size(),
                        t.numa.size() == 1 ? "" : "s", t.cores, t.pus);
    for (const auto& p : t.packages) {
      out_ += fmt::format("  Package {}: {}{} cores, {} PUs, CPUs {}\n", p.os,
                          p.model.empty() ? "" : p.model + ", ", p.cores, p.pus, p.cpus);
    }
    for (const auto& n : t.numa) {
      out_ += fmt::format("  NUMANode {}: {}, CPUs {}\n", n.os, bytesText(n.memoryBytes), n.cpus);
    }
    for (const auto& g : t.coreGroups) {
      if (g.level == 3) {
        out_ += fmt::format("  L3 #{}: {}, CPUs {}\n", g.index, bytesText(g.cacheBytes), g.cpus);
      }
    }
    for (size_t i = 0; i < t.pci.size(); ++i) {
      if (t.pci[i].parent < 0) node(static_cast<int>(i), 1);
    }
    // NICs sysfs knows but hwloc did not place (virtual devices).
    for (size_t k = 0; k < t.nics.size(); ++k) {
      if (t.nics[k].pci < 0) out_ += "  " + nicText(static_cast<int>(k)) + "\n";
    }
    if (!t.driverVersion.empty()) out_ += fmt::format("  NVIDIA driver {}\n", t.driverVersion);
    if (!t.notes.empty()) out_ += fmt::format("  ({})\n", t.notes);
    return out_;
  }

 private:
  std::string nicText(int k) const {
    const Nic& n = t_.nics[k];
    std::string s = fmt::format("NIC{} {}", k, n.name);
    if (!n.busId.empty()) s += " " + n.busId;
    std::vector<std::string> others;
    for (const auto& d : n.netdevs) {
      if (d != n.name) others.push_back(d);
    }
    if (!others.empty()) s += fmt::format(" ({})", fmt::join(others, ","));
    for (const auto& p : n.ports) {
      s += fmt::format(", port {} {}", p.port, p.state.empty() ? "state ?" : p.state);
      if (p.rateGbps > 0) s += fmt::format(" {:g} Gb/s", p.rateGbps);
      if (!p.linkLayer.empty()) s += " " + p.linkLayer;
    }
    return s;
  }

  std::string label(int i) const {
    const PciNode& n = t_.pci[i];
    std::string link = linkText(n.link);
    std::string tail = link.empty() ? "" : ", " + link;
    if (n.kind == PciNode::Kind::kHostBridge) {
      return fmt::format("HostBridge {} (NUMA {}, CPUs {})", n.busId,
                         n.numaNode >= 0 ? std::to_string(n.numaNode) : "?", n.cpus);
    }
    std::string id = n.vendorDevice.empty() ? "" : " [" + n.vendorDevice + "]";
    if (n.kind == PciNode::Kind::kBridge) {
      const char* what = n.role != "switch"              ? "PCIBridge"
                         : isSwitchDownstreamPort(t_, i) ? "SwitchPort"
                                                         : "Switch";
      return fmt::format("{} {}{}{}", what, n.busId, id, tail);
    }
    for (size_t g = 0; g < t_.gpus.size(); ++g) {
      if (t_.gpus[g].pci != i) continue;
      std::string s = fmt::format("{} {} {}{}", t_.gpus[g].name, n.busId, t_.gpus[g].model, tail);
      int nv = activeNvlinks(t_, n.busId);
      if (nv > 0) {
        bool sw = !nvlinkFabricOf(t_, n.busId).empty();
        s += fmt::format(", NVLink x{}{}", nv, sw ? " to NVSwitches" : "");
      }
      return s;
    }
    for (size_t k = 0; k < t_.nics.size(); ++k) {
      if (t_.nics[k].pci == i) return nicText(static_cast<int>(k)) + tail;
    }
    if (n.role == "nvswitch") return fmt::format("NVSwitch {}{}{}", n.busId, id, tail);
    return fmt::format("PCI {}{}{}{}", n.busId, id, n.name.empty() ? "" : " " + n.name, tail);
  }

  void node(int i, int depth) {
    out_ += std::string(depth * 2, ' ') + label(i) + "\n";
    for (int c : children_[i]) node(c, depth + 1);
  }

  const MachineTopology& t_;
  std::map<int, std::vector<int>> children_;
  std::string out_;
};

}  // namespace

std::string renderTree(const MachineTopology& t) { return TreePrinter(t).print(); }

std::string renderMatrix(const MachineTopology& t) {
  int ng = static_cast<int>(t.gpus.size()), nn = static_cast<int>(t.nics.size());
  int n = ng + nn;
  if (n == 0) return "No GPU and no NIC found: no device matrix.\n";
  std::vector<std::string> names;
  for (int i = 0; i < ng; ++i) names.push_back(t.gpus[i].name);
  for (int k = 0; k < nn; ++k) names.push_back(fmt::format("NIC{}", k));
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {""};
  header.insert(header.end(), names.begin(), names.end());
  header.push_back("CPU Affinity");
  header.push_back("NUMA Affinity");
  rows.push_back(header);
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> row = {names[i]};
    for (int j = 0; j < n; ++j) row.push_back(matrixCell(t, i, j));
    int pci = i < ng ? t.gpus[i].pci : t.nics[i - ng].pci;
    const PciNode* p = pci >= 0 ? &t.pci[pci] : nullptr;
    row.push_back(p && !p->cpus.empty() ? p->cpus : "N/A");
    row.push_back(p && p->numaNode >= 0 ? std::to_string(p->numaNode) : "N/A");
    rows.push_back(row);
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += fmt::format("{:<{}}", r[c], width[c] + (c + 1 < r.size() ? 2 : 0));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
      "within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (nn > 0) {
    out += "\nNIC Legend:\n\n";
    for (int k = 0; k < nn; ++k) out += fmt::format("  NIC{}: {}\n", k, t.nics[k].name);
  }
  return out;
}

}  // namespace cb
