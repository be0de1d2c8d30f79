#include "topology/Paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace cb {
namespace {

// The unit a bridge counts as on a path: the switch (its upstream port) for a switch port, else
// the bridge itself.
int unitOf(const MachineTopology& t, int i) {
  return isSwitchDownstreamPort(t, i) ? t.pci[i].parent : i;
}

std::vector<int> chain(const MachineTopology& t, int i) {
  std::vector<int> out;
  for (int guard = 0; i >= 0 && guard < 256; ++guard, i = t.pci[i].parent) out.push_back(i);
  return out;
}

int linksFrom(const MachineTopology& t, const std::string& from, const std::string& to) {
  int n = 0;
  for (const auto& e : t.nvlinks) {
    if (e.from == from && e.to == to) n += e.links;
  }
  return n;
}

int switchLinks(const MachineTopology& t, const std::string& gpu) {
  int n = 0;
  for (const auto& e : t.nvlinks) {
    if (e.from == gpu && e.remoteKind == "nvswitch") n += e.links;
  }
  return n;
}

}  // namespace

bool isSwitchDownstreamPort(const MachineTopology& t, int i) {
  const auto& n = t.pci[i];
  if (n.role != "switch" || n.parent < 0) return false;
  const auto& p = t.pci[n.parent];
  return p.role == "switch" && p.vendorDevice == n.vendorDevice &&
         !isSwitchDownstreamPort(t, n.parent);
}

const char* pciPathName(PciPath p) {
  switch (p) {
    case PciPath::kSelf: return "X";
    case PciPath::kPix: return "PIX";
    case PciPath::kPxb: return "PXB";
    case PciPath::kPhb: return "PHB";
    case PciPath::kNode: return "NODE";
    case PciPath::kSys: return "SYS";
  }
  return "SYS";
}

PciPath pciPathBetween(const MachineTopology& t, int a, int b) {
  if (a == b) return PciPath::kSelf;
  auto ca = chain(t, a), cb = chain(t, b);
  int common = -1;
  for (int x : ca) {
    if (std::find(cb.begin(), cb.end(), x) != cb.end()) {
      common = x;
      break;
    }
  }
  if (common < 0) {
    int na = t.pci[ca.back()].numaNode, nb = t.pci[cb.back()].numaNode;
    return na >= 0 && na == nb ? PciPath::kNode : PciPath::kSys;
  }
  if (t.pci[common].kind == PciNode::Kind::kHostBridge) return PciPath::kPhb;
  std::set<int> units;
  for (const auto* c : {&ca, &cb}) {
    for (size_t k = 1; k < c->size(); ++k) {
      units.insert(unitOf(t, (*c)[k]));
      if ((*c)[k] == common) break;
    }
  }
  return units.size() <= 1 ? PciPath::kPix : PciPath::kPxb;
}

std::string nvlinkFabricOf(const MachineTopology& t, const std::string& gpuBusId) {
  // NVML sees a GPU's links into the NVSwitches but not the trunks between switches; on one
  // machine they are always joined (a DGX-2 links its two boards' 12 switches; nvidia-smi prints
  // NV6 between all 16 GPUs). So a machine's switches are one fabric, named by the lowest id.
  if (switchLinks(t, gpuBusId) == 0 || t.nvswitches.empty()) return "";
  return "nvswitch:" + *std::min_element(t.nvswitches.begin(), t.nvswitches.end());
}

int nvlinksBetween(const MachineTopology& t, const std::string& a, const std::string& b) {
  if (a == b) return 0;
  int direct = std::max(linksFrom(t, a, b), linksFrom(t, b, a));
  if (direct > 0) return direct;
  std::string fa = nvlinkFabricOf(t, a);
  if (fa.empty() || fa != nvlinkFabricOf(t, b)) return 0;
  return std::min(switchLinks(t, a), switchLinks(t, b));
}

int activeNvlinks(const MachineTopology& t, const std::string& gpuBusId) {
  int n = 0;
  for (const auto& e : t.nvlinks) {
    if (e.from == gpuBusId) n += e.links;
  }
  return n;
}

std::string topSwitchOf(const MachineTopology& t, int pciIndex) {
  std::string top;
  for (int i : chain(t, pciIndex)) {
    if (t.pci[i].role == "switch" && !isSwitchDownstreamPort(t, i)) top = t.pci[i].busId;
  }
  return top;
}

std::string matrixCell(const MachineTopology& t, int i, int j) {
  if (i == j) return "X";
  int ng = static_cast<int>(t.gpus.size());
  auto pciOf = [&](int k) { return k < ng ? t.gpus[k].pci : t.nics[k - ng].pci; };
  if (i < ng && j < ng) {
    int nv = nvlinksBetween(t, t.gpus[i].busId, t.gpus[j].busId);
    if (nv > 0) return fmt::format("NV{}", nv);
  }
  int a = pciOf(i), b = pciOf(j);
  if (a < 0 || b < 0) return "N/A";
  return pciPathName(pciPathBetween(t, a, b));
}

}  // namespace cb
