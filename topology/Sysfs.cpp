#include "topology/Sysfs.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/Text.h"

namespace cb {
namespace {

namespace fs = std::filesystem;

std::string readLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return std::string(trim(line));
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The PCI address of a class device: PCI_SLOT_NAME in device/uevent (present in sysfs and easy to
// fake), else the name the device link points to when it looks like a bus id.
std::string pciSlotOf(const fs::path& classDevice) {
  std::ifstream in(classDevice / "device" / "uevent");
  std::string line;
  while (std::getline(in, line)) {
    if (startsWith(line, "PCI_SLOT_NAME=")) return normalizeBusId(line.substr(14));
  }
  std::error_code ec;
  fs::path target = fs::read_symlink(classDevice / "device", ec);
  if (!ec) {
    std::string name = target.filename().string();
    if (std::count(name.begin(), name.end(), ':') == 2) return normalizeBusId(name);
  }
  return "";
}

}  // namespace

int pcieGenOfSpeed(std::string_view speed) {
  double gts = std::atof(std::string(trim(speed)).c_str());
  static constexpr std::pair<double, int> kGens[] = {{2.5, 1}, {5, 2},  {8, 3},
                                                     {16, 4},  {32, 5}, {64, 6}};
  for (auto [rate, gen] : kGens) {
    if (std::fabs(gts - rate) < 0.05) return gen;
  }
  return 0;
}

double parseIbRate(std::string_view rate) {
  std::string s(trim(rate));
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v < 0) return 0;
  std::string unit = toLower(trim(std::string_view(end)));
  if (startsWith(unit, "mb")) return v / 1000;
  return v;
}

std::string parseIbState(std::string_view st) {
  std::string s(trim(st));
  auto colon = s.find(':');
  if (colon == std::string::npos) return s;
  return std::string(trim(std::string_view(s).substr(colon + 1)));
}

std::vector<Nic> readSysfsNics(const std::string& sysRoot) {
  std::vector<Nic> out;
  std::set<std::string> claimed;  // netdevs of RDMA devices
  fs::path ib = fs::path(sysRoot) / "class" / "infiniband";
  for (const auto& name : entries(ib)) {
    fs::path dev = ib / name;
    Nic nic;
    nic.name = name;
    nic.kind = "rdma";
    nic.busId = pciSlotOf(dev);
    nic.netdevs = entries(dev / "device" / "net");
    for (const auto& n : nic.netdevs) claimed.insert(n);
    for (const auto& port : entries(dev / "ports")) {
      fs::path p = dev / "ports" / port;
      NicPort np;
      np.port = std::atoi(port.c_str());
      np.state = parseIbState(readLine(p / "state"));
      np.rateGbps = parseIbRate(readLine(p / "rate"));
      np.linkLayer = readLine(p / "link_layer");
      nic.ports.push_back(np);
    }
    out.push_back(nic);
  }
  fs::path net = fs::path(sysRoot) / "class" / "net";
  for (const auto& name : entries(net)) {
    fs::path dev = net / name;
    std::error_code ec;
    if (claimed.count(name) || !fs::exists(dev / "device", ec)) continue;
    Nic nic;
    nic.name = name;
    nic.kind = "ethernet";
    nic.busId = pciSlotOf(dev);
    nic.netdevs = {name};
    NicPort p;
    p.state = readLine(dev / "operstate");
    long mbps = std::atol(readLine(dev / "speed").c_str());  // -1 or unreadable when down
    p.rateGbps = mbps > 0 ? mbps / 1000.0 : 0;
    p.linkLayer = "Ethernet";
    nic.ports.push_back(p);
    out.push_back(nic);
  }
  sortNics(out);
  return out;
}

std::optional<PcieLink> readSysfsPcieLink(const std::string& sysRoot, const std::string& busId) {
  fs::path d = fs::path(sysRoot) / "bus" / "pci" / "devices" / busId;
  std::string cur = readLine(d / "current_link_speed"), max = readLine(d / "max_link_speed");
  if (cur.empty() && max.empty()) return std::nullopt;
  PcieLink l;
  l.gen = pcieGenOfSpeed(cur);
  l.maxGen = pcieGenOfSpeed(max);
  l.width = std::atoi(readLine(d / "current_link_width").c_str());
  l.maxWidth = std::atoi(readLine(d / "max_link_width").c_str());
  return l;
}

void addSysfsFacts(MachineTopology& t, const std::string& sysRoot) {
  for (auto& n : t.pci) {
    if (n.role != "gpu" && n.role != "nic") continue;
    if (auto l = readSysfsPcieLink(sysRoot, n.busId)) {
      l->gbps = n.link.gbps;
      n.link = *l;
    }
  }
  // sysfs knows ports and rates; hwloc knows where the device sits. Merge by name, add the rest.
  for (auto& s : readSysfsNics(sysRoot)) {
    auto it = std::find_if(t.nics.begin(), t.nics.end(), [&](const Nic& n) {
      return n.name == s.name || (!s.busId.empty() && n.busId == s.busId && n.kind == s.kind);
    });
    if (it != t.nics.end()) {
      it->ports = s.ports;
      if (!s.netdevs.empty()) it->netdevs = s.netdevs;
      it->name = s.name;
      it->kind = s.kind;
    } else {
      s.pci = s.busId.empty() ? -1 : t.pciIndex(s.busId);
      t.nics.push_back(s);
    }
  }
  // An RDMA device and its own netdev are one NIC: drop Ethernet entries an RDMA NIC claims.
  std::set<std::string> claimed;
  for (const auto& n : t.nics) {
    if (n.kind == "rdma") claimed.insert(n.netdevs.begin(), n.netdevs.end());
  }
  t.nics.erase(
      std::remove_if(t.nics.begin(), t.nics.end(),
                     [&](const Nic& n) { return n.kind == "ethernet" && claimed.count(n.name); }),
      t.nics.end());
  sortNics(t.nics);
}

}  // namespace cb
