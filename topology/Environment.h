// What a run was measured on. The comparable part (hashed into the fingerprint) decides whether
// two runs may be compared; the informative part is shown but not hashed.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace cb {

struct HostInfo {
  std::string hostname;
  std::string cpuModel;  // from hwloc (or /proc/cpuinfo)
  int cores = 0;         // physical cores
  int pus = 0;           // hardware threads
  int numaNodes = 0;
  std::string kernel;     // uname -r
  std::string gpuModels;  // "" when none visible (NVML loaded at run time when present)
  int gpuCount = 0;
};

// This host, from its live topology (read once per process: hwloc with I/O, sysfs, NVML); never
// throws (fields it can't read stay empty).
HostInfo readHostInfo();

// A recorded host from an hwloc XML export (lstopo foo.xml), including the GPUs it lists as OS
// devices with a GPUModel attribute. hostname and kernel come from the file's HostName and
// OSRelease attributes when present. Throws EnvironmentError for a missing or unreadable file.
HostInfo readHostInfoFromXml(const std::string& path);

struct MachineTopology;
HostInfo hostInfoOf(const MachineTopology& t);

// The compiler that built collbench ("gcc 12.2.0") and the CMake build type ("Release").
std::string compilerDescription();
std::string buildType();

struct Fingerprint {
  // Comparable: collbench version and build type, compiler, MPI/UCX/CUDA/NCCL versions, CPU
  // model, GPU models and count, world size, ranks per host, NCCL_*, UCX_*, OMPI_*,
  // CUDA_VISIBLE_DEVICES.
  std::map<std::string, std::string> comparable;
  // Informative: hosts, kernel, load, ...
  std::map<std::string, std::string> informative;
  // 16 hex digits: FNV-1a 64 over the length-prefixed keys and values of `comparable` in key
  // order. Depends on nothing else (not the host, not the process), so it is stable across runs.
  std::string hash() const;
  // {"hash": ..., "comparable": {...}, "informative": {...}}
  std::string toJson() const;
};

// Environment variables whose names start with NCCL_, UCX_, OMPI_ or are CUDA_VISIBLE_DEVICES,
// less those a launcher sets differently per rank or per launch (see
// isRelevantEnvironmentVariable), so that two identical runs hash equal.
std::map<std::string, std::string> relevantEnvironmentVariables();
bool isRelevantEnvironmentVariable(std::string_view name);

}  // namespace cb
