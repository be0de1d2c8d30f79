// The machine a run sees: CPUs (packages, NUMA nodes, last-level caches), the PCI tree (host
// bridges, switches, link speeds), GPUs, NICs and NVSwitches, NVLinks, from hwloc with I/O
// discovery (live or from an XML export), completed live by NVML (loaded at run time) and sysfs.
// The model is plain data with a JSON form, so a stored run can be shown exactly as it was seen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cb {

struct PcieLink {
  double gbps = 0;  // current link bandwidth in GB/s as hwloc reports it (0: unknown)
  int gen = 0, maxGen = 0, width = 0, maxWidth = 0;  // from sysfs or NVML (0: unknown)
};

struct PciNode {
  enum class Kind { kHostBridge, kBridge, kDevice };
  Kind kind = Kind::kDevice;
  std::string busId;         // "0000:34:00.0"; a host bridge: its bus range "0000:[2b-3b]"
  std::string vendorDevice;  // "10de:1db8"
  int classId = 0;           // PCI class << 8 | subclass: 0x0302 3D controller
  std::string name;          // "NVIDIA Corporation Tesla V100" when the export names it
  PcieLink link;
  int parent = -1;    // index into MachineTopology::pci; -1: under a CPU-side object
  int numaNode = -1;  // NUMA node of the CPU-side object it hangs from (-1: several/unknown)
  std::string cpus;   // CPUs near it ("0-23,48-71")
  std::string role;   // "gpu", "nic", "nvswitch", "switch" (a PCIe switch port), "" other
};

struct NvlinkEdge {
  std::string from;        // bus id of a GPU
  std::string to;          // bus id of the remote GPU or NVSwitch; "" when the remote is a CPU
  std::string remoteKind;  // "gpu", "nvswitch", "cpu"
  int links = 0;           // parallel links
  int version = 0;         // NVLink version (0: unknown)
  int linksDown = 0;       // links NVML reports inactive
};

struct Gpu {
  std::string name;  // "GPU0": index in PCI bus order, as nvidia-smi numbers them
  std::string busId;
  std::string model;
  std::string uuid;
  int pci = -1;  // index into MachineTopology::pci
};

struct NicPort {
  int port = 1;
  std::string state;      // "ACTIVE", "DOWN", "INIT", ...; Ethernet: operstate "up"/"down"
  double rateGbps = 0;    // 0: unknown
  std::string linkLayer;  // "InfiniBand", "Ethernet"
};

struct Nic {
  std::string name;   // "mlx5_0" (RDMA) or "eth0"
  std::string kind;   // "rdma" or "ethernet"
  std::string busId;  // "" for a NIC hwloc does not place on the PCI tree
  std::vector<std::string> netdevs;
  std::vector<NicPort> ports;
  int pci = -1;
};

struct NumaNode {
  int os = -1;
  std::string cpus;
  uint64_t memoryBytes = 0;
};

struct CpuPackage {
  int os = -1;
  std::string model;
  std::string cpus;
  int cores = 0, pus = 0;
  std::vector<int> numaNodes;
};

struct CoreGroup {  // a last-level cache (or a package without one): ranks inside share it
  int index = -1;
  std::string cpus;
  uint64_t cacheBytes = 0;
  int level = 0;  // 3 for an L3, 0 for a package
};

struct MachineTopology {
  std::string host;
  std::string source;  // "live" or the export's file name
  std::string cpuModel;
  std::string kernel;
  std::string product;  // DMIProductName ("NVIDIA DGX-2H")
  int cores = 0, pus = 0;
  std::vector<CpuPackage> packages;
  std::vector<NumaNode> numa;
  std::vector<CoreGroup> coreGroups;
  std::vector<PciNode> pci;             // parents before children
  std::vector<Gpu> gpus;                // PCI bus order
  std::vector<Nic> nics;                // RDMA first, then Ethernet, each by name
  std::vector<std::string> nvswitches;  // bus ids
  std::vector<NvlinkEdge> nvlinks;
  std::string driverVersion;  // NVIDIA driver (NVML), "" when not known
  std::string notes;          // why a source was not read ("NVML not available (...)")

  // Indexes of the GPU/NIC by bus id or name; -1 when absent.
  int gpuIndex(const std::string& busId) const;
  int pciIndex(const std::string& busId) const;
  int numaNodeOfCpus(const std::vector<int>& cpus) const;  // -1: several or none
  int coreGroupOfCpus(const std::vector<int>& cpus) const;

  // A one-line description that is hashed into the fingerprint: what decides performance
  // (CPU model, packages, NUMA nodes, cores, GPU models and count, NVLink shape, NICs and rates,
  // link speeds), not what changes between identical machines (bus numbers, UUIDs, host name).
  std::string summary() const;
  std::string summaryHash() const;  // 16 hex digits (FNV-1a 64 of summary())
};

struct LiveOptions {
  std::string sysRoot = "/sys";  // sysfs root (tests: a fake tree)
  bool nvml = true;              // probe NVML (libnvidia-ml.so.1) when present
};

// The live machine. Never throws for a missing source: what could not be read is said in notes.
MachineTopology detectTopology(const LiveOptions& o = {});
// An hwloc XML export (v1, v2 or v3 layout). Throws EnvironmentError naming the file if it cannot
// be read or is not an hwloc export. The host name is the export's HostName ("" if none).
MachineTopology loadTopologyXml(const std::string& path);
// The same from the XML text; `name` is used in messages and as the source.
MachineTopology loadTopologyXmlText(const std::string& xml, const std::string& name);

std::string topologyToJson(const MachineTopology& t);  // compact JSON
// Throws EnvironmentError for JSON that is not a collbench topology.
MachineTopology topologyFromJson(const std::string& json);

// "0-3,8" -> {0,1,2,3,8}; throws nothing, ignores malformed parts.
std::vector<int> parseCpuList(const std::string& list);
std::string formatCpuList(const std::vector<int>& cpus);
// "00000000:34:00.0" (NVML) or "0000:34:00.0" -> "0000:34:00.0" (lower case, 4-digit domain).
std::string normalizeBusId(const std::string& busId);

}  // namespace cb
