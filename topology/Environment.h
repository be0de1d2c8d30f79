// What a run was measured on. The comparable part (hashed into the fingerprint) decides whether
// two runs may be compared; the informative part is shown but not hashed.
#pragma once

#include <map>
#include <string>

namespace cb {

struct HostInfo {
  std::string hostname;
  std::string cpuModel;      // from hwloc (or /proc/cpuinfo)
  int cores = 0;             // physical cores
  int pus = 0;               // hardware threads
  int numaNodes = 0;
  std::string kernel;        // uname -r
  std::string gpuModels;     // "" when none visible (NVML loaded at run time when present)
  int gpuCount = 0;
};

// This host, read with hwloc; never throws (fields it can't read stay empty).
HostInfo readHostInfo();

struct Fingerprint {
  // Comparable: collbench version and build type, compiler, MPI/UCX/CUDA/NCCL versions, CPU
  // model, GPU models and count, world size, ranks per host, NCCL_*, UCX_*, OMPI_*,
  // CUDA_VISIBLE_DEVICES.
  std::map<std::string, std::string> comparable;
  // Informative: hosts, kernel, load, ...
  std::map<std::string, std::string> informative;
  std::string hash() const;  // hex digest of `comparable` (stable across runs and hosts)
  std::string toJson() const;
};

// Environment variables whose names start with NCCL_, UCX_, OMPI_ or are CUDA_VISIBLE_DEVICES.
std::map<std::string, std::string> relevantEnvironmentVariables();

}  // namespace cb
