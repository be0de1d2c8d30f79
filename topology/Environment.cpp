// Host description through hwloc, the environment variables that change collective performance,
// and the fingerprint that decides whether two runs are comparable.
#include "topology/Environment.h"

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
#include "core/Text.h"
#include "topology/Placement.h"
#include "topology/Topology.h"

extern char** environ;

namespace cb {
namespace {

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

void appendLengthPrefixed(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

}  // namespace

HostInfo hostInfoOf(const MachineTopology& t) {
  HostInfo h;
  h.hostname = t.host;
  h.kernel = t.kernel;
  h.cpuModel = t.cpuModel;
  h.cores = t.cores;
  h.pus = t.pus;
  h.numaNodes = static_cast<int>(t.numa.size());
  h.gpuCount = static_cast<int>(t.gpus.size());
  std::vector<std::string> distinct;
  for (const auto& g : t.gpus) {
    if (std::find(distinct.begin(), distinct.end(), g.model) == distinct.end()) {
      distinct.push_back(g.model);
    }
  }
  for (const auto& m : distinct) h.gpuModels += (h.gpuModels.empty() ? "" : ", ") + m;
  return h;
}

HostInfo readHostInfo() {
  HostInfo h = hostInfoOf(liveTopology());
  if (h.cpuModel.empty()) h.cpuModel = cpuModelFromProcCpuinfo();
  return h;
}

HostInfo readHostInfoFromXml(const std::string& path) { return hostInfoOf(loadTopologyXml(path)); }

std::string compilerDescription() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

std::string buildType() {
#if defined(COLLBENCH_BUILD_TYPE)
  return COLLBENCH_BUILD_TYPE;
#else
  return "unknown";
#endif
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
    // The bootstrap rendezvous address (host:port) changes from launch to launch, and
    // NCCL_HOSTID names the rank's host (the host map's identity, core/HostMap.h): per rank by
    // design where processes of one machine pose as hosts.
    return name != "NCCL_COMM_ID" && name != "NCCL_HOSTID";
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
