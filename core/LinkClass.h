// Where a rank runs, and the class of the link between two ranks. Pure data and a pure function,
// in core so every layer (engines, proxies, diagnosis, results) can use it; topology/ fills the
// placements from hwloc, NVML and sysfs (topology/Placement.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

// Nearest first: a smaller value is a closer (usually faster) link. GPU ranks are judged by how
// their GPUs connect (NVLink, a common PCIe switch, then the CPUs' NUMA relation); host ranks by
// their cores.
enum class LinkClass {
  kSelf,        // the same rank
  kCoreGroup,   // same host, both ranks' cores share a last-level cache (host ranks only)
  kNvlink,      // both GPUs on one NVLink fabric (direct NVLink or an NVSwitch)
  kPcieSwitch,  // both GPUs behind one PCIe switch, without going through the CPU
  kNuma,        // same host, same NUMA node (for GPUs: through the CPU's host bridge)
  kCrossNuma,   // same host, different NUMA nodes (or unknown placement): the CPU interconnect
  kNetwork,     // different hosts
};

// "self", "core-group", "nvlink", "pcie-switch", "numa", "cross-numa", "network".
std::string_view linkClassName(LinkClass c);
std::optional<LinkClass> parseLinkClass(std::string_view name);
// All classes, nearest first.
const std::vector<LinkClass>& allLinkClasses();

struct RankPlacement {
  int rank = -1;
  std::string host;
  int localRank = -1;
  std::vector<int> cpus;  // OS indexes of the PUs the rank may run on (its binding)
  int numaNode = -1;      // the one NUMA node holding all of `cpus`; -1 if several or unknown
  int coreGroup = -1;     // the one last-level cache holding all of `cpus` (hwloc logical index
                          // of the L3, else the package); -1 if several or unknown
  // GPU ranks only (gpuBusId empty for host ranks).
  std::string gpuBusId;      // "0000:34:00.0"
  std::string gpuModel;      // "Tesla V100-SXM3-32GB-H"
  int gpuNumaNode = -1;      // NUMA node nearest the GPU
  std::string pcieSwitch;    // bus id of the highest PCIe switch above the GPU ("" none)
  std::string nvlinkFabric;  // non-empty when the GPU reaches an NVSwitch fabric (same string on
                             // every GPU of that fabric)
  std::vector<std::string> nvlinkPeers;  // bus ids of GPUs linked directly by NVLink
  std::string nic;                       // nearest NIC ("mlx5_0"), "" none
};

// The class of the link between two placed ranks (pure; symmetric).
LinkClass classifyPair(const RankPlacement& a, const RankPlacement& b);
// n*n row-major matrix over placements ordered by rank (element [i*n+j]).
std::vector<LinkClass> classifyAll(const std::vector<RankPlacement>& placements);
// The pairs i < j of an n*n matrix counted by class, nearest first: "3 core-group, 1 network"
// ("" for fewer than two ranks).
std::string linkClassCounts(const std::vector<LinkClass>& links);

}  // namespace cb
