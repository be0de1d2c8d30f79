// hwloc -> MachineTopology, the JSON form, and the summary hashed into the fingerprint.
#include "topology/Topology.h"

#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/Error.h"
#include "core/HostMap.h"
#include "core/Text.h"
#include "topology/Nvml.h"
#include "topology/Sysfs.h"

namespace cb {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using HwlocTopology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

HwlocTopology initTopology() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) throw EnvironmentError("hwloc_topology_init failed");
  return HwlocTopology(t);
}

std::string infoOf(hwloc_obj_t obj, const char* name) {
  const char* v = obj ? hwloc_obj_get_info_by_name(obj, name) : nullptr;
  return v ? v : "";
}

std::string listOf(hwloc_const_bitmap_t set) {
  if (!set) return "";
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) return "";
  std::string out = s;
  free(s);
  return out;
}

std::string busIdOf(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& p) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p.domain, p.bus, p.dev, p.func);
}

// The NUMA node of a CPU-side object: its nodeset's only node, or -1.
int numaOf(hwloc_obj_t cpuSide) {
  if (!cpuSide || !cpuSide->nodeset || hwloc_bitmap_weight(cpuSide->nodeset) != 1) return -1;
  return hwloc_bitmap_first(cpuSide->nodeset);
}

// hwloc 3 writes <topology version="3.0">, which hwloc 2 refuses outright. What differs for the
// objects read here: hwloc 3 keeps the machine-wide info attributes (HostName, OSRelease, ...) as
// <info> elements after the root object, where hwloc 2 expects them inside it; and OS device
// types are a bitmask (storage 1, memory 2, GPU 4, coprocessor 8, network 16, OpenFabrics 32,
// DMA 64) where hwloc 2 has an enum. So an hwloc 2 build reads such a file as version 2.0 with
// those elements moved and the types mapped. hwloc 2 reads v1 and v2 exports itself.
std::string compatibleXml(std::string xml) {
#if HWLOC_API_VERSION < 0x00030000
  static constexpr std::string_view kV3 = "<topology version=\"3.0\">";
  auto pos = xml.find(kV3);
  if (pos == std::string::npos) return xml;
  xml.replace(pos, kV3.size(), "<topology version=\"2.0\">");
  // OS device types.
  static constexpr std::string_view kAttr = "osdev_type=\"";
  for (size_t at = xml.find(kAttr); at != std::string::npos; at = xml.find(kAttr, at + 1)) {
    size_t v = at + kAttr.size();
    size_t end = xml.find('"', v);
    if (end == std::string::npos) break;
    unsigned long bits = std::strtoul(xml.substr(v, end - v).c_str(), nullptr, 10);
    int type = HWLOC_OBJ_OSDEV_BLOCK;
    if (bits & 32)
      type = HWLOC_OBJ_OSDEV_OPENFABRICS;
    else if (bits & 8)
      type = HWLOC_OBJ_OSDEV_COPROC;
    else if (bits & 4)
      type = HWLOC_OBJ_OSDEV_GPU;
    else if (bits & 16)
      type = HWLOC_OBJ_OSDEV_NETWORK;
    else if (bits & 64)
      type = HWLOC_OBJ_OSDEV_DMA;
    xml.replace(v, end - v, std::to_string(type));
  }
  size_t rootOpen = xml.find("<object", pos);
  size_t rootOpenEnd = rootOpen == std::string::npos ? rootOpen : xml.find('>', rootOpen);
  size_t rootEnd = xml.rfind("</object>");
  size_t topologyEnd = xml.rfind("</topology>");
  if (rootOpenEnd == std::string::npos || rootEnd == std::string::npos ||
      topologyEnd == std::string::npos || rootEnd < rootOpenEnd || topologyEnd < rootEnd ||
      xml[rootOpenEnd - 1] == '/') {
    return xml;  // not the expected shape: let hwloc judge it
  }
  std::string infos, rest;
  std::string_view tail = std::string_view(xml).substr(rootEnd, topologyEnd - rootEnd);
  size_t i = 0;
  while (true) {
    size_t start = tail.find("<info ", i);
    size_t end = start == std::string_view::npos ? start : tail.find("/>", start);
    if (end == std::string_view::npos) break;
    rest += tail.substr(i, start - i);
    infos += tail.substr(start, end + 2 - start);
    i = end + 2;
  }
  rest += tail.substr(i);
  return xml.substr(0, rootOpenEnd + 1) + infos +
         xml.substr(rootOpenEnd + 1, rootEnd - rootOpenEnd - 1) + rest + xml.substr(topologyEnd);
#else
  return xml;
#endif
}

// Walks hwloc's tree into the model.
class Builder {
 public:
  Builder(hwloc_topology_t t, MachineTopology& m) : t_(t), m_(m) {}

  void build() {
    hwloc_obj_t root = hwloc_get_root_obj(t_);
    m_.product = infoOf(root, "DMIProductName");
    m_.cores = std::max(0, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_CORE));
    m_.pus = std::max(0, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_PU));
    int np = std::max(0, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_PACKAGE));
    for (int i = 0; i < np; ++i) {
      hwloc_obj_t p = hwloc_get_obj_by_type(t_, HWLOC_OBJ_PACKAGE, i);
      CpuPackage pkg;
      pkg.os = static_cast<int>(p->os_index);
      pkg.model = infoOf(p, "CPUModel");
      pkg.cpus = listOf(p->cpuset);
      pkg.cores = hwloc_get_nbobjs_inside_cpuset_by_type(t_, p->cpuset, HWLOC_OBJ_CORE);
      pkg.pus = hwloc_get_nbobjs_inside_cpuset_by_type(t_, p->cpuset, HWLOC_OBJ_PU);
      unsigned node;
      hwloc_bitmap_foreach_begin(node, p->nodeset) {
        pkg.numaNodes.push_back(static_cast<int>(node));
      }
      hwloc_bitmap_foreach_end();
      m_.packages.push_back(pkg);
    }
    m_.cpuModel = m_.packages.empty() ? "" : m_.packages[0].model;
    if (m_.cpuModel.empty()) m_.cpuModel = infoOf(root, "CPUModel");
    int nn = std::max(0, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_NUMANODE));
    for (int i = 0; i < nn; ++i) {
      hwloc_obj_t n = hwloc_get_obj_by_type(t_, HWLOC_OBJ_NUMANODE, i);
      m_.numa.push_back({static_cast<int>(n->os_index), listOf(n->cpuset),
                         n->attr ? n->attr->numanode.local_memory : 0});
    }
    int nl3 = std::max(0, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_L3CACHE));
    for (int i = 0; i < nl3; ++i) {
      hwloc_obj_t c = hwloc_get_obj_by_type(t_, HWLOC_OBJ_L3CACHE, i);
      m_.coreGroups.push_back({i, listOf(c->cpuset), c->attr->cache.size, 3});
    }
    if (m_.coreGroups.empty()) {
      for (int i = 0; i < np; ++i) {
        hwloc_obj_t p = hwloc_get_obj_by_type(t_, HWLOC_OBJ_PACKAGE, i);
        m_.coreGroups.push_back({i, listOf(p->cpuset), 0, 0});
      }
    }
    walkIo(root, -1);
    finishDevices();
    readNvlinkDistances();
  }

 private:
  // Every I/O object, depth first, parents before children.
  void walkIo(hwloc_obj_t obj, int parentPci) {
    for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling) walkIo(c, -1);
    for (hwloc_obj_t c = obj->io_first_child; c; c = c->next_sibling) visitIo(c, parentPci);
  }

  void visitIo(hwloc_obj_t obj, int parentPci) {
    int self = parentPci;
    if (obj->type == HWLOC_OBJ_BRIDGE || obj->type == HWLOC_OBJ_PCI_DEVICE) {
      PciNode n;
      n.parent = parentPci;
      hwloc_obj_t cpuSide = hwloc_get_non_io_ancestor_obj(t_, obj);
      n.numaNode = numaOf(cpuSide);
      n.cpus = cpuSide ? listOf(cpuSide->cpuset) : "";
      const hwloc_obj_attr_u::hwloc_pcidev_attr_s* pci = nullptr;
      if (obj->type == HWLOC_OBJ_BRIDGE) {
        const auto& b = obj->attr->bridge;
        if (b.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
          n.kind = PciNode::Kind::kHostBridge;
          n.busId = fmt::format("{:04x}:[{:02x}-{:02x}]", b.downstream.pci.domain,
                                b.downstream.pci.secondary_bus, b.downstream.pci.subordinate_bus);
        } else {
          n.kind = PciNode::Kind::kBridge;
          pci = &b.upstream.pci;
        }
      } else {
        n.kind = PciNode::Kind::kDevice;
        pci = &obj->attr->pcidev;
      }
      if (pci) {
        n.busId = busIdOf(*pci);
        n.vendorDevice = fmt::format("{:04x}:{:04x}", pci->vendor_id, pci->device_id);
        n.classId = pci->class_id;
        n.link.gbps = pci->linkspeed;
      }
      std::string vendor = infoOf(obj, "PCIVendor"), device = infoOf(obj, "PCIDevice");
      n.name = vendor.empty() ? device : device.empty() ? vendor : vendor + " " + device;
      if (obj->subtype && std::string_view(obj->subtype) == "NVSwitch") n.role = "nvswitch";
      m_.pci.push_back(n);
      self = static_cast<int>(m_.pci.size()) - 1;
      objOfPci_.push_back(obj);
    } else if (obj->type == HWLOC_OBJ_OS_DEVICE && parentPci >= 0) {
      osdevs_.push_back({parentPci, obj});
    }
    for (hwloc_obj_t c = obj->io_first_child; c; c = c->next_sibling) visitIo(c, self);
  }

  void finishDevices() {
    // PCIe switches: a bridge with the device id of its parent bridge is a downstream port of the
    // switch whose upstream port is that parent, unless the parent is itself a downstream port
    // (then the child is the upstream port of the next switch down; cascaded switches often share
    // one device id).
    std::vector<bool> downstream(m_.pci.size(), false);
    for (size_t i = 0; i < m_.pci.size(); ++i) {
      auto& n = m_.pci[i];
      if (n.kind != PciNode::Kind::kBridge || n.parent < 0) continue;
      const auto& p = m_.pci[n.parent];
      if (p.kind == PciNode::Kind::kBridge && p.vendorDevice == n.vendorDevice &&
          !downstream[n.parent]) {
        downstream[i] = true;
        m_.pci[n.parent].role = "switch";
        n.role = "switch";
      }
    }
    std::map<int, std::vector<hwloc_obj_t>> osdevsOf;
    for (const auto& [pci, obj] : osdevs_) osdevsOf[pci].push_back(obj);
    for (size_t i = 0; i < m_.pci.size(); ++i) {
      auto& n = m_.pci[i];
      if (n.kind != PciNode::Kind::kDevice) continue;
      const auto& devs = osdevsOf[static_cast<int>(i)];
      std::string gpuModel, uuid, rdma;
      std::vector<std::string> netdevs;
      for (hwloc_obj_t o : devs) {
        std::string model = infoOf(o, "GPUModel");
        if (!model.empty() && gpuModel.empty()) gpuModel = model;
        if (uuid.empty()) uuid = infoOf(o, "NVIDIAUUID");
        auto type = o->attr->osdev.type;
        if (type == HWLOC_OBJ_OSDEV_OPENFABRICS && o->name) rdma = o->name;
        if (type == HWLOC_OBJ_OSDEV_NETWORK && o->name) netdevs.push_back(o->name);
      }
      bool nvidia = startsWith(n.vendorDevice, "10de:");
      bool display = (n.classId >> 8) == 0x03;
      if (n.role == "nvswitch" || (nvidia && n.classId == 0x0680)) {
        n.role = "nvswitch";
        m_.nvswitches.push_back(n.busId);
      } else if (!gpuModel.empty() || (nvidia && display)) {
        n.role = "gpu";
        Gpu g;
        g.busId = n.busId;
        std::string device = infoOf(objOfPci_[i], "PCIDevice");
        g.model = !gpuModel.empty() ? gpuModel : !device.empty() ? device : n.vendorDevice;
        g.uuid = uuid;
        g.pci = static_cast<int>(i);
        m_.gpus.push_back(g);
      } else if (!rdma.empty() || !netdevs.empty() || (n.classId >> 8) == 0x02) {
        n.role = "nic";
        Nic nic;
        nic.kind = rdma.empty() ? "ethernet" : "rdma";
        nic.name = !rdma.empty() ? rdma : !netdevs.empty() ? netdevs[0] : n.busId;
        nic.busId = n.busId;
        nic.netdevs = netdevs;
        nic.pci = static_cast<int>(i);
        for (hwloc_obj_t o : devs) {
          // hwloc records an RDMA port's state as Port<N>State (IB port states: 4 is ACTIVE).
          for (int port = 1; port <= 4 && !rdma.empty(); ++port) {
            std::string st = infoOf(o, fmt::format("Port{}State", port).c_str());
            if (st.empty() || o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
            NicPort p;
            p.port = port;
            p.state = ibPortStateName(std::atoi(st.c_str()));
            p.linkLayer = infoOf(o, fmt::format("Port{}LinkLayer", port).c_str());
            nic.ports.push_back(p);
          }
        }
        m_.nics.push_back(nic);
      }
    }
    std::sort(m_.gpus.begin(), m_.gpus.end(),
              [](const Gpu& a, const Gpu& b) { return a.busId < b.busId; });
    for (size_t i = 0; i < m_.gpus.size(); ++i) m_.gpus[i].name = fmt::format("GPU{}", i);
    sortNics(m_.nics);
  }

  // hwloc's NVML backend records NVLinks as a "NVLinkBandwidth" distance matrix over GPU OS
  // devices and NVSwitch PCI devices, in MB/s: links x the per-link rate of the NVLink version
  // (20000 for NVLink 1, 25000 for later versions).
  void readNvlinkDistances() {
    unsigned nr = 1;
    hwloc_distances_s* d = nullptr;
    if (hwloc_distances_get_by_name(t_, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0 || !d) {
      return;
    }
    std::vector<std::string> bus(d->nbobjs);
    std::vector<std::string> kind(d->nbobjs);
    for (unsigned i = 0; i < d->nbobjs; ++i) {
      hwloc_obj_t o = d->objs[i];
      hwloc_obj_t p = o && o->type == HWLOC_OBJ_OS_DEVICE ? o->parent : o;
      if (!p || p->type != HWLOC_OBJ_PCI_DEVICE) continue;
      bus[i] = busIdOf(p->attr->pcidev);
      if (m_.gpuIndex(bus[i]) >= 0) kind[i] = "gpu";
      if (std::find(m_.nvswitches.begin(), m_.nvswitches.end(), bus[i]) != m_.nvswitches.end()) {
        kind[i] = "nvswitch";
      }
    }
    for (unsigned i = 0; i < d->nbobjs; ++i) {
      for (unsigned j = 0; j < d->nbobjs; ++j) {
        uint64_t v = d->values[i * d->nbobjs + j];
        if (i == j || v == 0 || kind[i].empty() || kind[j].empty()) continue;
        if (kind[i] == "nvswitch" && kind[j] == "gpu") continue;  // the GPU's row says it
        NvlinkEdge e;
        e.from = bus[i];
        e.to = bus[j];
        e.remoteKind = kind[j];
        e.links = linksOfBandwidth(v);
        m_.nvlinks.push_back(e);
      }
    }
    hwloc_distances_release(t_, d);
  }

  static int linksOfBandwidth(uint64_t mbps) {
    if (mbps % 25000 == 0) return static_cast<int>(mbps / 25000);
    if (mbps % 20000 == 0) return static_cast<int>(mbps / 20000);
    return std::max(1, static_cast<int>(std::lround(mbps / 25000.0)));
  }

  hwloc_topology_t t_;
  MachineTopology& m_;
  std::vector<hwloc_obj_t> objOfPci_;
  std::vector<std::pair<int, hwloc_obj_t>> osdevs_;
};

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::string ibPortStateName(int state) {
  switch (state) {
    case 1: return "DOWN";
    case 2: return "INIT";
    case 3: return "ARMED";
    case 4: return "ACTIVE";
    case 5: return "ACTIVE_DEFER";
    default: return state == 0 ? "NOP" : fmt::format("state {}", state);
  }
}

void sortNics(std::vector<Nic>& nics) {
  std::stable_sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) {
    if (a.kind != b.kind) return a.kind == "rdma";
    return a.name < b.name;
  });
}

int MachineTopology::gpuIndex(const std::string& busId) const {
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].busId == busId) return static_cast<int>(i);
  }
  return -1;
}

int MachineTopology::pciIndex(const std::string& busId) const {
  for (size_t i = 0; i < pci.size(); ++i) {
    if (pci[i].busId == busId) return static_cast<int>(i);
  }
  return -1;
}

namespace {
template <class Groups>
int groupOfCpus(const Groups& groups, const std::vector<int>& cpus,
                int (*idOf)(const typename Groups::value_type&)) {
  if (cpus.empty()) return -1;
  for (const auto& g : groups) {
    auto in = parseCpuList(g.cpus);
    if (std::all_of(cpus.begin(), cpus.end(),
                    [&](int c) { return std::binary_search(in.begin(), in.end(), c); })) {
      return idOf(g);
    }
  }
  return -1;
}
}  // namespace

int MachineTopology::numaNodeOfCpus(const std::vector<int>& cpus) const {
  return groupOfCpus(
      numa, cpus, +[](const NumaNode& n) { return n.os; });
}

int MachineTopology::coreGroupOfCpus(const std::vector<int>& cpus) const {
  return groupOfCpus(
      coreGroups, cpus, +[](const CoreGroup& g) { return g.index; });
}

std::string MachineTopology::summary() const {
  std::string s = fmt::format("cpu={}; packages={}; numa={}; cores={}; pus={}", cpuModel,
                              packages.size(), numa.size(), cores, pus);
  std::map<std::string, int> gpuModels;
  for (const auto& g : gpus) gpuModels[g.model]++;
  for (const auto& [model, n] : gpuModels) s += fmt::format("; gpu={}x{}", n, model);
  std::map<std::string, int> gpuLinks;
  for (const auto& g : gpus) {
    if (g.pci < 0) continue;
    const auto& l = pci[g.pci].link;
    std::string link = l.gbps > 0 ? fmt::format("{:.1f}GB/s", l.gbps) : "";
    if (l.gen > 0) link += fmt::format("{}gen{}x{}", link.empty() ? "" : " ", l.gen, l.width);
    if (!link.empty()) gpuLinks[link]++;
  }
  for (const auto& [l, n] : gpuLinks) s += fmt::format("; gpu_pcie={}x{}", n, l);
  int up = 0;
  for (const auto& e : nvlinks) up += e.links - e.linksDown;
  s += fmt::format("; nvswitches={}; nvlinks={}", nvswitches.size(), up);
  std::map<std::string, int> nicKinds;
  for (const auto& n : nics) {
    std::string rates;
    for (const auto& p : n.ports) {
      rates += p.rateGbps > 0 ? fmt::format("/{:g}Gb/s", p.rateGbps) : "/?";
    }
    nicKinds[n.kind + rates]++;
  }
  for (const auto& [k, n] : nicKinds) s += fmt::format("; nic={}x{}", n, k);
  if (!driverVersion.empty()) s += "; driver=" + driverVersion;
  return s;
}

std::string MachineTopology::summaryHash() const {
  return fmt::format("{:016x}", fnv1a(summary()));
}

MachineTopology loadTopologyXmlText(const std::string& text, const std::string& name) {
  std::string xml = compatibleXml(text);
  HwlocTopology t = initTopology();
  hwloc_topology_set_io_types_filter(t.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
  // hwloc wants the size including the terminating NUL.
  if (hwloc_topology_set_xmlbuffer(t.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
      hwloc_topology_load(t.get()) != 0) {
    throw EnvironmentError(
        fmt::format("cannot load hwloc topology '{}': not a valid hwloc XML export", name));
  }
  MachineTopology m;
  Builder(t.get(), m).build();
  hwloc_obj_t root = hwloc_get_root_obj(t.get());
  m.host = infoOf(root, "HostName");
  m.kernel = infoOf(root, "OSRelease");
  m.source = name;
  return m;
}

MachineTopology loadTopologyXml(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw EnvironmentError(
        fmt::format("cannot read hwloc topology '{}': {}", path, std::strerror(errno)));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return loadTopologyXmlText(buf.str(), path);
}

MachineTopology detectTopology(const LiveOptions& o) {
  MachineTopology m;
  m.source = "live";
  m.host = hostName();
  struct utsname u {};
  if (uname(&u) == 0) m.kernel = u.release;
  try {
    HwlocTopology t = initTopology();
    hwloc_topology_set_io_types_filter(t.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t.get()) == 0) {
      Builder(t.get(), m).build();
    } else {
      m.notes = "hwloc could not load this machine's topology";
    }
  } catch (const Error& e) {
    m.notes = e.what();
  }
  addSysfsFacts(m, o.sysRoot);
  if (o.nvml) {
    NvmlSnapshot snap = readNvml();
    applyNvml(m, snap);
  }
  return m;
}

// ---- JSON -----------------------------------------------------------------------------------

namespace {
using nlohmann::json;

std::string pciKindName(PciNode::Kind k) {
  switch (k) {
    case PciNode::Kind::kHostBridge: return "host-bridge";
    case PciNode::Kind::kBridge: return "bridge";
    case PciNode::Kind::kDevice: return "device";
  }
  return "device";
}

json linkJson(const PcieLink& l) {
  return {{"gbps", l.gbps},
          {"gen", l.gen},
          {"max_gen", l.maxGen},
          {"width", l.width},
          {"max_width", l.maxWidth}};
}

PcieLink linkOf(const json& j) {
  PcieLink l;
  l.gbps = j.value("gbps", 0.0);
  l.gen = j.value("gen", 0);
  l.maxGen = j.value("max_gen", 0);
  l.width = j.value("width", 0);
  l.maxWidth = j.value("max_width", 0);
  return l;
}
}  // namespace

std::string topologyToJson(const MachineTopology& t) {
  json j;
  j["format"] = "collbench-topology";  // the documents' one style: format + integer version
  j["version"] = 1;
  j["host"] = t.host;
  j["source"] = t.source;
  j["cpu_model"] = t.cpuModel;
  j["kernel"] = t.kernel;
  j["product"] = t.product;
  j["cores"] = t.cores;
  j["pus"] = t.pus;
  j["driver_version"] = t.driverVersion;
  j["notes"] = t.notes;
  j["summary"] = t.summary();
  j["summary_hash"] = t.summaryHash();
  j["packages"] = json::array();
  for (const auto& p : t.packages) {
    j["packages"].push_back({{"os", p.os},
                             {"model", p.model},
                             {"cpus", p.cpus},
                             {"cores", p.cores},
                             {"pus", p.pus},
                             {"numa", p.numaNodes}});
  }
  j["numa"] = json::array();
  for (const auto& n : t.numa) {
    j["numa"].push_back({{"os", n.os}, {"cpus", n.cpus}, {"memory_bytes", n.memoryBytes}});
  }
  j["core_groups"] = json::array();
  for (const auto& g : t.coreGroups) {
    j["core_groups"].push_back(
        {{"index", g.index}, {"cpus", g.cpus}, {"cache_bytes", g.cacheBytes}, {"level", g.level}});
  }
  j["pci"] = json::array();
  for (const auto& n : t.pci) {
    j["pci"].push_back({{"kind", pciKindName(n.kind)},
                        {"bus_id", n.busId},
                        {"id", n.vendorDevice},
                        {"class", n.classId},
                        {"name", n.name},
                        {"link", linkJson(n.link)},
                        {"parent", n.parent},
                        {"numa", n.numaNode},
                        {"cpus", n.cpus},
                        {"role", n.role}});
  }
  j["gpus"] = json::array();
  for (const auto& g : t.gpus) {
    j["gpus"].push_back({{"name", g.name},
                         {"bus_id", g.busId},
                         {"model", g.model},
                         {"uuid", g.uuid},
                         {"pci", g.pci}});
  }
  j["nics"] = json::array();
  for (const auto& n : t.nics) {
    json ports = json::array();
    for (const auto& p : n.ports) {
      ports.push_back({{"port", p.port},
                       {"state", p.state},
                       {"rate_gbps", p.rateGbps},
                       {"link_layer", p.linkLayer}});
    }
    j["nics"].push_back({{"name", n.name},
                         {"kind", n.kind},
                         {"bus_id", n.busId},
                         {"netdevs", n.netdevs},
                         {"ports", ports},
                         {"pci", n.pci}});
  }
  j["nvswitches"] = t.nvswitches;
  j["nvlinks"] = json::array();
  for (const auto& e : t.nvlinks) {
    j["nvlinks"].push_back({{"from", e.from},
                            {"to", e.to},
                            {"remote", e.remoteKind},
                            {"links", e.links},
                            {"version", e.version},
                            {"links_down", e.linksDown}});
  }
  return j.dump();
}

MachineTopology topologyFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  // Runs stored before the one style hold "collbench-topology-1" (the same fields).
  const bool current =
      j.is_object() && j.value("format", "") == "collbench-topology" && j.value("version", 0) == 1;
  const bool earlier = j.is_object() && j.value("format", "") == "collbench-topology-1";
  if (j.is_discarded() || !(current || earlier)) {
    throw EnvironmentError(
        "not a collbench topology (JSON with format collbench-topology, version 1)");
  }
  try {
    MachineTopology t;
    t.host = j.value("host", "");
    t.source = j.value("source", "");
    t.cpuModel = j.value("cpu_model", "");
    t.kernel = j.value("kernel", "");
    t.product = j.value("product", "");
    t.cores = j.value("cores", 0);
    t.pus = j.value("pus", 0);
    t.driverVersion = j.value("driver_version", "");
    t.notes = j.value("notes", "");
    for (const auto& p : j.at("packages")) {
      t.packages.push_back({p.value("os", -1), p.value("model", ""), p.value("cpus", ""),
                            p.value("cores", 0), p.value("pus", 0),
                            p.value("numa", std::vector<int>{})});
    }
    for (const auto& n : j.at("numa")) {
      t.numa.push_back({n.value("os", -1), n.value("cpus", ""), n.value("memory_bytes", 0ull)});
    }
    for (const auto& g : j.at("core_groups")) {
      t.coreGroups.push_back({g.value("index", -1), g.value("cpus", ""),
                              g.value("cache_bytes", 0ull), g.value("level", 0)});
    }
    for (const auto& n : j.at("pci")) {
      PciNode p;
      std::string kind = n.value("kind", "device");
      p.kind = kind == "host-bridge" ? PciNode::Kind::kHostBridge
               : kind == "bridge"    ? PciNode::Kind::kBridge
                                     : PciNode::Kind::kDevice;
      p.busId = n.value("bus_id", "");
      p.vendorDevice = n.value("id", "");
      p.classId = n.value("class", 0);
      p.name = n.value("name", "");
      p.link = linkOf(n.at("link"));
      p.parent = n.value("parent", -1);
      p.numaNode = n.value("numa", -1);
      p.cpus = n.value("cpus", "");
      p.role = n.value("role", "");
      t.pci.push_back(p);
    }
    for (const auto& g : j.at("gpus")) {
      t.gpus.push_back({g.value("name", ""), g.value("bus_id", ""), g.value("model", ""),
                        g.value("uuid", ""), g.value("pci", -1)});
    }
    for (const auto& n : j.at("nics")) {
      Nic nic;
      nic.name = n.value("name", "");
      nic.kind = n.value("kind", "");
      nic.busId = n.value("bus_id", "");
      nic.netdevs = n.value("netdevs", std::vector<std::string>{});
      nic.pci = n.value("pci", -1);
      for (const auto& p : n.at("ports")) {
        nic.ports.push_back({p.value("port", 1), p.value("state", ""), p.value("rate_gbps", 0.0),
                             p.value("link_layer", "")});
      }
      t.nics.push_back(nic);
    }
    t.nvswitches = j.value("nvswitches", std::vector<std::string>{});
    for (const auto& e : j.at("nvlinks")) {
      t.nvlinks.push_back({e.value("from", ""), e.value("to", ""), e.value("remote", ""),
                           e.value("links", 0), e.value("version", 0), e.value("links_down", 0)});
    }
    int n = static_cast<int>(t.pci.size());
    for (const auto& p : t.pci) {
      if (p.parent >= n) throw EnvironmentError("topology JSON: PCI parent out of range");
    }
    for (const auto& g : t.gpus) {
      if (g.pci >= n) throw EnvironmentError("topology JSON: GPU PCI index out of range");
    }
    for (const auto& x : t.nics) {
      if (x.pci >= n) throw EnvironmentError("topology JSON: NIC PCI index out of range");
    }
    return t;
  } catch (const json::exception& e) {
    throw EnvironmentError(fmt::format("topology JSON is incomplete: {}", e.what()));
  }
}

std::vector<int> parseCpuList(const std::string& list) {
  std::vector<int> out;
  for (const auto& part : splitList(list, ',')) {
    auto dash = part.find('-');
    char* end = nullptr;
    long a = std::strtol(part.c_str(), &end, 10);
    if (end == part.c_str() || a < 0) continue;
    long b = a;
    if (dash != std::string::npos) {
      b = std::strtol(part.c_str() + dash + 1, &end, 10);
      if (b < a || b - a > (1 << 20)) continue;
    }
    for (long c = a; c <= b; ++c) out.push_back(static_cast<int>(c));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string formatCpuList(const std::vector<int>& cpusIn) {
  std::vector<int> cpus = cpusIn;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string normalizeBusId(const std::string& busId) {
  std::string s = toLower(trim(busId));
  // domain:bus:dev.fn with a domain of any width.
  auto first = s.find(':');
  if (first == std::string::npos) return s;
  if (s.find(':', first + 1) == std::string::npos) return "0000:" + s;  // "34:00.0"
  std::string domain = s.substr(0, first);
  unsigned long d = std::strtoul(domain.c_str(), nullptr, 16);
  return fmt::format("{:04x}", d) + s.substr(first);
}

}  // namespace cb
