// Host description through hwloc, the environment variables that change collective performance,
// and the fingerprint that decides whether two runs are comparable.
#include "topology/Environment.h"

#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/Error.h"
#include "core/HostMap.h"
#include "core/Text.h"

extern char** environ;

namespace cb {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

Topology initTopology() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) throw EnvironmentError("hwloc_topology_init failed");
  return Topology(t);
}

int countOf(hwloc_topology_t t, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(t, type);
  return n < 0 ? 0 : n;  // -1: objects at several depths (not for these types)
}

std::string infoOf(hwloc_obj_t obj, const char* name) {
  const char* v = obj ? hwloc_obj_get_info_by_name(obj, name) : nullptr;
  return v ? v : "";
}

// Counts and CPU model of a loaded topology, plus the GPUs it lists as OS devices. A GPU can
// appear once per backend (NVML, CUDA, OpenCL, ...) under the same PCI device: count PCI
// devices, not OS devices.
void fillFromTopology(hwloc_topology_t t, HostInfo& h) {
  h.cores = countOf(t, HWLOC_OBJ_CORE);
  h.pus = countOf(t, HWLOC_OBJ_PU);
  h.numaNodes = countOf(t, HWLOC_OBJ_NUMANODE);
  h.cpuModel = infoOf(hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0), "CPUModel");
  if (h.cpuModel.empty()) h.cpuModel = infoOf(hwloc_get_root_obj(t), "CPUModel");

  std::vector<std::pair<hwloc_obj_t, std::string>> gpus;  // (PCI parent, model)
  for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
    std::string model = infoOf(o, "GPUModel");
    if (model.empty()) continue;
    hwloc_obj_t parent = o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE ? o->parent : o;
    bool seen =
        std::any_of(gpus.begin(), gpus.end(), [&](const auto& g) { return g.first == parent; });
    if (!seen) gpus.emplace_back(parent, model);
  }
  if (gpus.empty()) return;
  h.gpuCount = static_cast<int>(gpus.size());
  std::vector<std::string> distinct;
  for (const auto& g : gpus) {
    if (std::find(distinct.begin(), distinct.end(), g.second) == distinct.end()) {
      distinct.push_back(g.second);
    }
  }
  for (const auto& m : distinct) h.gpuModels += (h.gpuModels.empty() ? "" : ", ") + m;
}

std::string cpuModelFromProcCpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (startsWith(line, "model name")) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return std::string(trim(line.substr(colon + 1)));
    }
  }
  return "";
}

// hwloc 3 writes <topology version="3.0">, which hwloc 2 refuses outright. The objects and
// attributes read here (packages, cores, PUs, NUMA nodes, info attributes, OS devices) are the
// same in both versions except that hwloc 3 keeps the machine-wide info attributes (HostName,
// OSRelease, ...) as <info> elements after the root object, where hwloc 2 expects them inside
// it. So an hwloc 2 build reads such a file as version 2.0 with those elements moved.
std::string compatibleXml(std::string xml) {
#if HWLOC_API_VERSION < 0x00030000
  static constexpr std::string_view kV3 = "<topology version=\"3.0\">";
  auto pos = xml.find(kV3);
  if (pos == std::string::npos) return xml;
  xml.replace(pos, kV3.size(), "<topology version=\"2.0\">");
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

void appendLengthPrefixed(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

}  // namespace

HostInfo readHostInfo() {
  HostInfo h;
  h.hostname = hostName();
  struct utsname u {};
  if (uname(&u) == 0) h.kernel = u.release;
  try {
    Topology t = initTopology();
    if (hwloc_topology_load(t.get()) == 0) fillFromTopology(t.get(), h);
  } catch (const Error&) {
    // Never throws: the fields stay empty.
  }
  if (h.cpuModel.empty()) h.cpuModel = cpuModelFromProcCpuinfo();
  return h;
}

HostInfo readHostInfoFromXml(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw EnvironmentError(
        fmt::format("cannot read hwloc topology '{}': {}", path, std::strerror(errno)));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string xml = compatibleXml(buf.str());

  Topology t = initTopology();
  // Keep the I/O objects the file lists (hwloc drops them by default), for the GPU fields.
  hwloc_topology_set_io_types_filter(t.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
  // hwloc wants the size including the terminating NUL.
  if (hwloc_topology_set_xmlbuffer(t.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
      hwloc_topology_load(t.get()) != 0) {
    throw EnvironmentError(
        fmt::format("cannot load hwloc topology '{}': not a valid hwloc XML export", path));
  }
  HostInfo h;
  fillFromTopology(t.get(), h);
  hwloc_obj_t root = hwloc_get_root_obj(t.get());
  h.hostname = infoOf(root, "HostName");
  h.kernel = infoOf(root, "OSRelease");
  return h;
}

std::string Fingerprint::hash() const {
  // Length prefixes make the serialization unambiguous ("a"+"bc" differs from "ab"+"c").
  std::string text;
  for (const auto& [k, v] : comparable) {
    appendLengthPrefixed(text, k);
    appendLengthPrefixed(text, v);
  }
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  return fmt::format("{:016x}", h);
}

std::string Fingerprint::toJson() const {
  nlohmann::json j;
  j["hash"] = hash();
  j["comparable"] = comparable;
  j["informative"] = informative;
  return j.dump();
}

bool isRelevantEnvironmentVariable(std::string_view name) {
  if (name == "CUDA_VISIBLE_DEVICES") return true;
  if (startsWith(name, "UCX_")) return true;
  if (startsWith(name, "NCCL_")) {
    // The bootstrap rendezvous address (host:port) changes from launch to launch.
    return name != "NCCL_COMM_ID";
  }
  if (!startsWith(name, "OMPI_")) return false;
  // What Open MPI's launcher (mpirun/orted in 4.x, prte in 5.x) sets for itself: the rank and
  // world shape of this process (recorded separately as world size and ranks per host), job
  // ids, daemon URIs, session directories, random transport keys, the command line and working
  // directory. They differ per rank or per launch and say nothing about the network set-up.
  // User-given MCA parameters (OMPI_MCA_btl, OMPI_MCA_pml, ...) are kept: they change results.
  static constexpr std::string_view kLaunchPrefixes[] = {"OMPI_COMM_WORLD_",
                                                         "OMPI_MCA_orte_",
                                                         "OMPI_MCA_ess",
                                                         "OMPI_MCA_pmix",
                                                         "OMPI_MCA_prte",
                                                         "OMPI_MCA_initial_wdir",
                                                         "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
                                                         "OMPI_FILE_LOCATION",
                                                         "OMPI_FIRST_RANKS",
                                                         "OMPI_APP_CTX_NUM_PROCS",
                                                         "OMPI_NUM_APP_CTX",
                                                         "OMPI_UNIVERSE_SIZE",
                                                         "OMPI_ARGV",
                                                         "OMPI_COMMAND",
                                                         "OMPI_MCA_ompi_command",
                                                         "OMPI_MCA_ompi_argv"};
  for (auto prefix : kLaunchPrefixes) {
    if (startsWith(name, prefix)) return false;
  }
  return true;
}

std::map<std::string, std::string> relevantEnvironmentVariables() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (isRelevantEnvironmentVariable(name)) out.emplace(name, entry.substr(eq + 1));
  }
  return out;
}

}  // namespace cb
