#include "topology/Placement.h"

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/Error.h"
#include "topology/Paths.h"
#include "topology/Render.h"

namespace cb {
namespace {

using nlohmann::json;

}  // namespace

std::vector<int> threadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

std::vector<int> cpusNearGpu(const MachineTopology& t, const std::string& gpuBusId,
                             const std::vector<int>& allowed) {
  const int pci = t.pciIndex(normalizeBusId(gpuBusId));
  if (pci < 0) return {};
  std::vector<int> near = parseCpuList(t.pci[pci].cpus);
  std::vector<int> out;
  for (int c : near) {
    if (std::find(allowed.begin(), allowed.end(), c) != allowed.end()) out.push_back(c);
  }
  return out;
}

std::vector<int> bindThisThreadTo(const std::vector<int>& cpus, int localRank) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0) {
    throw EnvironmentError(
        fmt::format("--bind auto: cannot bind rank {}'s thread to its GPU's CPUs "
                    "{}: {}",
                    localRank, formatCpuList(cpus), std::strerror(rc)));
  }
  return threadCpus();
}

RankPlacement placeThisRank(const MachineTopology& host, int rank, const std::string& hostName,
                            int localRank, const std::string& gpuBusId) {
  RankPlacement p;
  p.rank = rank;
  p.host = hostName;
  p.localRank = localRank;
  p.cpus = threadCpus();
  p.numaNode = host.numaNodeOfCpus(p.cpus);
  p.coreGroup = host.coreGroupOfCpus(p.cpus);
  if (!gpuBusId.empty()) {
    p.gpuBusId = normalizeBusId(gpuBusId);
    int g = host.gpuIndex(p.gpuBusId);
    if (g >= 0) {
      const Gpu& gpu = host.gpus[g];
      p.gpuModel = gpu.model;
      if (gpu.pci >= 0) {
        p.gpuNumaNode = host.pci[gpu.pci].numaNode;
        p.pcieSwitch = topSwitchOf(host, gpu.pci);
      }
      p.nvlinkFabric = nvlinkFabricOf(host, gpu.busId);
      for (const auto& e : host.nvlinks) {
        if (e.from == gpu.busId && e.remoteKind == "gpu" && e.links > 0) {
          p.nvlinkPeers.push_back(e.to);
        }
      }
    }
  }
  p.nic = nearestNic(host, p);
  return p;
}

std::string nearestNic(const MachineTopology& host, const RankPlacement& p) {
  int gpu = p.gpuBusId.empty() ? -1 : host.gpuIndex(p.gpuBusId);
  int gpuPci = gpu >= 0 ? host.gpus[gpu].pci : -1;
  std::string best;
  int bestScore = 1 << 30;
  for (const auto& n : host.nics) {
    int score = 0;
    if (gpuPci >= 0 && n.pci >= 0) {
      score = static_cast<int>(pciPathBetween(host, gpuPci, n.pci)) * 10;
    } else {
      int numa = n.pci >= 0 ? host.pci[n.pci].numaNode : -1;
      score = numa >= 0 && numa == p.numaNode ? 0 : 10;
    }
    if (n.kind != "rdma") score += 5;
    if (score < bestScore) {
      bestScore = score;
      best = n.name;
    }
  }
  return best;
}

std::string placementToJson(const RankPlacement& p) {
  json j = {{"rank", p.rank},
            {"host", p.host},
            {"local_rank", p.localRank},
            {"cpus", formatCpuList(p.cpus)},
            {"numa", p.numaNode},
            {"core_group", p.coreGroup},
            {"gpu", p.gpuBusId},
            {"gpu_model", p.gpuModel},
            {"gpu_numa", p.gpuNumaNode},
            {"pcie_switch", p.pcieSwitch},
            {"nvlink_fabric", p.nvlinkFabric},
            {"nvlink_peers", p.nvlinkPeers},
            {"nic", p.nic}};
  return j.dump();
}

RankPlacement placementFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw EnvironmentError("rank placement: not JSON");
  try {
    RankPlacement p;
    p.rank = j.value("rank", -1);
    p.host = j.value("host", "");
    p.localRank = j.value("local_rank", -1);
    p.cpus = parseCpuList(j.value("cpus", ""));
    p.numaNode = j.value("numa", -1);
    p.coreGroup = j.value("core_group", -1);
    p.gpuBusId = j.value("gpu", "");
    p.gpuModel = j.value("gpu_model", "");
    p.gpuNumaNode = j.value("gpu_numa", -1);
    p.pcieSwitch = j.value("pcie_switch", "");
    p.nvlinkFabric = j.value("nvlink_fabric", "");
    p.nvlinkPeers = j.value("nvlink_peers", std::vector<std::string>{});
    p.nic = j.value("nic", "");
    return p;
  } catch (const json::exception& e) {
    throw EnvironmentError(fmt::format("rank placement: {}", e.what()));
  }
}

std::vector<RankPlacement> gatherPlacements(Communicator& comm, const RankPlacement& mine,
                                            Deadline d) {
  std::vector<RankPlacement> out;
  for (const auto& s : comm.allgatherStrings(placementToJson(mine), d)) {
    out.push_back(placementFromJson(s));
  }
  return out;
}

std::optional<BindPolicy> parseBindPolicy(std::string_view s) {
  if (s == "none") return BindPolicy::kNone;
  if (s == "core") return BindPolicy::kCore;
  if (s == "numa") return BindPolicy::kNuma;
  if (s == "auto") return BindPolicy::kAuto;
  return std::nullopt;
}

std::string_view bindPolicyName(BindPolicy p) {
  switch (p) {
    case BindPolicy::kNone: return "none";
    case BindPolicy::kCore: return "core";
    case BindPolicy::kNuma: return "numa";
    case BindPolicy::kAuto: return "auto";
  }
  return "none";
}

BindPolicy resolveBindPolicy(BindPolicy p, int ranks) {
  if (p != BindPolicy::kAuto) return p;
  // The cores this process may use: hwloc's cores, limited by the affinity mask (taskset,
  // cgroups), so a rank is never bound to a core it is not allowed on.
  hwloc_topology_t t = nullptr;
  int cores = 0;
  int pus = 0;
  if (hwloc_topology_init(&t) == 0 && hwloc_topology_load(t) == 0) {
    cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  }
  if (t) hwloc_topology_destroy(t);
  const int allowed = static_cast<int>(threadCpus().size());
  // A mask narrower than the machine (taskset, a launcher's binding) is the user's placement:
  // binding by hwloc's core numbers would leave it.
  if (allowed < pus) return BindPolicy::kNone;
  return ranks <= std::min(cores, allowed) ? BindPolicy::kCore : BindPolicy::kNone;
}

std::vector<int> bindThisThread(BindPolicy policy, int localRank) {
  if (policy == BindPolicy::kAuto) {
    throw InternalError("bindThisThread: resolve --bind auto first (resolveBindPolicy)");
  }
  if (policy == BindPolicy::kNone) return threadCpus();
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
    if (t) hwloc_topology_destroy(t);
    throw EnvironmentError("--bind: hwloc cannot read this machine's topology");
  }
  int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  hwloc_obj_t obj =
      cores > 0 ? hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, localRank % cores) : nullptr;
  if (obj && policy == BindPolicy::kNuma) {
    // The NUMA node(s) local to that core: bind to their whole cpuset.
    hwloc_obj_t a = obj;
    while (a && (!a->memory_arity && a->parent)) a = a->parent;
    if (a) obj = a;
  }
  if (!obj) {
    hwloc_topology_destroy(t);
    throw EnvironmentError("--bind: this machine reports no cores");
  }
  int rc = hwloc_set_cpubind(t, obj->cpuset, HWLOC_CPUBIND_THREAD);
  hwloc_topology_destroy(t);
  if (rc != 0) {
    throw EnvironmentError(fmt::format("--bind {}: cannot bind rank {}'s thread: {}",
                                       bindPolicyName(policy), localRank, std::strerror(errno)));
  }
  return threadCpus();
}

const MachineTopology& liveTopology() {
  static std::once_flag once;
  static MachineTopology topo;
  std::call_once(once, [] { topo = detectTopology(); });
  return topo;
}

std::string RunTopology::toJson() const {
  json j;
  j["hosts"] = json::array();
  for (const auto& h : hosts) {
    json host = json::parse(topologyToJson(h));
    host["matrix"] = renderMatrix(h);  // as seen then, for readers without this code (HTML)
    j["hosts"].push_back(host);
  }
  j["placements"] = json::array();
  for (const auto& p : placements) j["placements"].push_back(json::parse(placementToJson(p)));
  j["link_classes"] = json::array();
  size_t n = placements.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> row;
    for (size_t k = 0; k < n; ++k) row.emplace_back(linkClassName(links[i * n + k]));
    j["link_classes"].push_back(row);
  }
  j["findings"] = json::array();
  for (const auto& f : findings) j["findings"].push_back(f.line());
  return j.dump();
}

std::string renderRunTopology(const std::string& text, const std::string& prefix) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("hosts") || !j["hosts"].is_array()) {
    throw EnvironmentError("stored topology: not a collbench run topology");
  }
  std::string out;
  auto lines = [&](const std::string& block) {
    size_t start = 0;
    while (start < block.size()) {
      size_t end = block.find('\n', start);
      if (end == std::string::npos) end = block.size();
      out += prefix + block.substr(start, end - start) + "\n";
      start = end + 1;
    }
  };
  for (const auto& h : j["hosts"]) {
    MachineTopology t = topologyFromJson(h.dump());
    lines(fmt::format("host {}: {}", t.host, t.summary()));
    lines(renderMatrix(t));
  }
  if (j.contains("placements")) {
    for (const auto& p : j["placements"]) {
      RankPlacement r = placementFromJson(p.dump());
      std::string line = fmt::format("rank {} on {} (local {}): CPUs {}, NUMA {}", r.rank, r.host,
                                     r.localRank, formatCpuList(r.cpus),
                                     r.numaNode >= 0 ? std::to_string(r.numaNode) : "several");
      if (!r.gpuBusId.empty()) line += fmt::format(", GPU {} {}", r.gpuBusId, r.gpuModel);
      if (!r.nic.empty()) line += ", NIC " + r.nic;
      lines(line);
    }
  }
  if (j.contains("link_classes")) {
    std::vector<LinkClass> links;
    for (const auto& row : j["link_classes"]) {
      for (const auto& name : row) {
        auto c = parseLinkClass(name.get<std::string>());
        if (!c) throw EnvironmentError("stored topology: unknown link class " + name.dump());
        links.push_back(*c);
      }
    }
    const std::string counts = linkClassCounts(links);
    if (!counts.empty()) lines("rank pairs by link class: " + counts);
  }
  if (j.contains("findings")) {
    for (const auto& f : j["findings"]) lines("preflight: " + f.get<std::string>());
  }
  return out;
}

RunTopology collectRunTopology(Communicator& comm, const HostMap& hosts, Deadline d,
                               const std::string& gpuBusId) {
  RunTopology rt;
  const MachineTopology& mine = liveTopology();
  const std::vector<std::string>& hostOfRank = hosts.hostOfRank;
  const std::string& host = hostOfRank.at(comm.rank());
  const int localRank = hosts.localRank.at(comm.rank());
  RankPlacement me = placeThisRank(mine, comm.rank(), host, localRank, gpuBusId);
  rt.placements = gatherPlacements(comm, me, d);
  rt.links = classifyAll(rt.placements);
  // One topology per host: its local rank 0 sends it.
  auto tops = comm.allgatherStrings(localRank == 0 ? topologyToJson(mine) : "", d);
  std::map<std::string, int> ranksOnHost;
  for (size_t r = 0; r < tops.size(); ++r) {
    ranksOnHost[hostOfRank[r]]++;
    if (!tops[r].empty()) {
      MachineTopology t = topologyFromJson(tops[r]);
      t.host = hostOfRank[r];
      rt.hosts.push_back(std::move(t));
    }
  }
  for (const auto& h : rt.hosts) {
    auto f = checkMachine(h);
    rt.findings.insert(rt.findings.end(), f.begin(), f.end());
  }
  auto fh = checkHosts(rt.hosts);
  rt.findings.insert(rt.findings.end(), fh.begin(), fh.end());
  auto fp = checkPlacements(rt.placements);
  rt.findings.insert(rt.findings.end(), fp.begin(), fp.end());

  // Fingerprint pieces: per-host values joined when hosts differ (a mixed run is its own kind).
  auto joined = [&](auto value) {
    std::vector<std::string> vals;
    for (const auto& h : rt.hosts) {
      std::string v = value(h);
      if (std::find(vals.begin(), vals.end(), v) == vals.end()) vals.push_back(v);
    }
    std::string s;
    for (const auto& v : vals) s += (s.empty() ? "" : " | ") + v;
    return s;
  };
  rt.fingerprint.emplace_back("gpu_model", joined([](const MachineTopology& h) {
                                std::vector<std::string> m;
                                for (const auto& g : h.gpus) {
                                  if (std::find(m.begin(), m.end(), g.model) == m.end()) {
                                    m.push_back(g.model);
                                  }
                                }
                                std::sort(m.begin(), m.end());
                                std::string s;
                                for (const auto& x : m) s += (s.empty() ? "" : ", ") + x;
                                return s.empty() ? std::string("none") : s;
                              }));
  rt.fingerprint.emplace_back(
      "gpu_count", joined([](const MachineTopology& h) { return std::to_string(h.gpus.size()); }));
  rt.fingerprint.emplace_back("driver", joined([](const MachineTopology& h) {
                                return h.driverVersion.empty() ? std::string("none")
                                                               : h.driverVersion;
                              }));
  std::vector<std::string> perHost;
  for (const auto& [h, n] : ranksOnHost) perHost.push_back(std::to_string(n));
  std::sort(perHost.begin(), perHost.end());
  perHost.erase(std::unique(perHost.begin(), perHost.end()), perHost.end());
  std::string rph;
  for (const auto& v : perHost) rph += (rph.empty() ? "" : ",") + v;
  rt.fingerprint.emplace_back("ranks_per_host", rph);
  rt.fingerprint.emplace_back("topology",
                              joined([](const MachineTopology& h) { return h.summaryHash(); }));
  return rt;
}

}  // namespace cb
