// GPU availability, device selection and description (see GpuDevice.h).
#include "collectives/nccl/GpuDevice.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string_view>

#include "collectives/Registry.h"
#include "collectives/nccl/CudaCheck.h"
#include "core/Error.h"
#include "core/HostMap.h"

namespace cb {
namespace {

std::string runtimeVersionText() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "?";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

// sysfs fallback for the NUMA node of a PCI device ("0000:29:00.0").
int sysfsNumaNode(const std::string& pciBusId) {
  std::string id = pciBusId;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::ifstream in("/sys/bus/pci/devices/" + id + "/numa_node");
  int node = -1;
  if (in >> node) return node;
  return -1;
}

}  // namespace

std::optional<std::string> gpuUnavailableReasonFor(int cudaErrorCode, int deviceCount) {
  auto e = static_cast<cudaError_t>(cudaErrorCode);
  if (e == cudaSuccess) {
    if (deviceCount > 0) return std::nullopt;
    return std::string("no CUDA devices");
  }
  if (e == cudaErrorNoDevice) {
    return fmt::format("no CUDA devices ({}, {}; check CUDA_VISIBLE_DEVICES)", cudaGetErrorName(e),
                       cudaErrorCode);
  }
  if (e == cudaErrorInsufficientDriver) {
    return fmt::format(
        "no usable CUDA device: CUDA driver is missing or too old for CUDA runtime {} ({}, {})",
        runtimeVersionText(), cudaGetErrorName(e), cudaErrorCode);
  }
  return fmt::format("no usable CUDA device: {} ({}, {})", cudaGetErrorString(e),
                     cudaGetErrorName(e), cudaErrorCode);
}

std::optional<std::string> gpuUnavailableReason() {
  static const std::optional<std::string> reason = [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) cudaGetLastError();
    return gpuUnavailableReasonFor(static_cast<int>(e), e == cudaSuccess ? n : 0);
  }();
  return reason;
}

int gpuDeviceCount() {
  if (auto why = gpuUnavailableReason()) throw EnvironmentError(*why);
  int n = 0;
  checkCuda(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  return n;
}

int visibleGpuCount() {
  if (gpuUnavailableReason()) return 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::optional<int> localRankFromEnvironment(const EnvLookup& env) {
  static constexpr std::array<const char*, 7> kVars{"OMPI_COMM_WORLD_LOCAL_RANK",
                                                    "MPI_LOCALRANKID",
                                                    "MV2_COMM_WORLD_LOCAL_RANK",
                                                    "SLURM_LOCALID",
                                                    "PMI_LOCAL_RANK",
                                                    "PALS_LOCAL_RANKID",
                                                    "FLUX_TASK_LOCAL_ID"};
  for (const char* var : kVars) {
    const char* value = env(var);
    if (!value || !*value) continue;
    std::string_view v(value);
    int rank = -1;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), rank);
    if (ec != std::errc() || end != v.data() + v.size() || rank < 0) {
      throw EnvironmentError(fmt::format("{}='{}' is not a local rank", var, v));
    }
    return rank;
  }
  return std::nullopt;
}

DeviceChoice chooseDevice(const Communicator& comm) {
  if (auto why = gpuUnavailableReason()) return {-1, *why};
  int local = comm.rank();
  if (comm.worldKind() == WorldKind::kMpi) {
    auto fromEnv = localRankFromEnvironment([](const char* v) { return std::getenv(v); });
    if (!fromEnv) {
      return {-1,
              "cannot pick a GPU: the launcher exported no local rank "
              "(OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...)"};
    }
    local = *fromEnv;
  }
  int count = 0;
  checkCuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  // Local-world ranks are threads of this process: all of them need a GPU here.
  const int processRanks = comm.worldKind() == WorldKind::kMpi ? 1 : comm.size();
  return pickDevice(local, processRanks, count);
}

DeviceChoice pickDevice(int localRank, int processRanks, int visibleDevices) {
  if (visibleDevices < 1) return {-1, "no CUDA devices"};
  if (processRanks > visibleDevices) {
    return {-1, fmt::format("{} ranks in one process need {} GPUs (one per rank), this host has {} "
                            "visible (use --np {} or CUDA_VISIBLE_DEVICES)",
                            processRanks, processRanks, visibleDevices, visibleDevices)};
  }
  // One visible device: the launcher gave each rank its own GPU (Slurm --gpus-per-task=1,
  // CUDA_VISIBLE_DEVICES per rank); it is device 0 whatever the local rank. Ranks that share it
  // by mistake are caught by checkDistinctDevices (same PCI bus id on one host).
  if (visibleDevices == 1) return {0, ""};
  if (localRank >= visibleDevices) {
    return {-1, fmt::format("local rank {} needs GPU {}, but only {} CUDA devices are visible",
                            localRank, localRank, visibleDevices)};
  }
  return {localRank, ""};
}

int deviceForRank(const Communicator& comm) {
  auto choice = chooseDevice(comm);
  if (choice.device < 0) throw EnvironmentError(choice.reason);
  return choice.device;
}

namespace {

int realSetDevice(int device) { return static_cast<int>(cudaSetDevice(device)); }

std::atomic<SetDeviceFn> setDeviceFn{&realSetDevice};
thread_local int chosenDevice = -1;

}  // namespace

SetDeviceFn exchangeSetDeviceForTesting(SetDeviceFn fn) {
  return setDeviceFn.exchange(fn ? fn : &realSetDevice);
}

void setThreadDevice(int device) {
  if (chosenDevice == device) return;
  checkCuda(static_cast<cudaError_t>(setDeviceFn.load()(device)), "cudaSetDevice");
  chosenDevice = device;
}

int threadDevice() { return chosenDevice; }

ScopedDevice::ScopedDevice(int device) : previous_(chosenDevice) { setThreadDevice(device); }

ScopedDevice::~ScopedDevice() {
  if (previous_ < 0 || previous_ == chosenDevice) return;
  if (setDeviceFn.load()(previous_) == 0) {
    chosenDevice = previous_;
  } else {
    cudaGetLastError();
  }
}

DeviceInfo describeDevice(int device) {
  DeviceInfo info;
  info.index = device;
  cudaDeviceProp prop{};
  checkCuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  info.name = prop.name;
  std::array<char, 64> bus{};
  checkCuda(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device),
            "cudaDeviceGetPCIBusId");
  info.pciBusId = bus.data();
  // The host NUMA node closest to the GPU; older drivers lack the attribute, sysfs has it too.
  int numa = -1;
  if (cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, device) != cudaSuccess || numa < 0) {
    cudaGetLastError();
    numa = sysfsNumaNode(info.pciBusId);
  }
  info.hostNumaNode = numa;
  return info;
}

uint64_t deviceFreeBytes(int device) {
  ScopedDevice on(device);
  size_t free = 0, total = 0;
  checkCuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

void checkDistinctDevices(Communicator& comm, int device, Deadline d) {
  std::array<char, 64> bus{};
  checkCuda(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device),
            "cudaDeviceGetPCIBusId");
  // Hosts as NCCL sees them: ranks with distinct NCCL_HOSTID values may share a GPU.
  std::string mine = hostIdentity() + " " + bus.data();
  auto all = comm.allgatherStrings(mine, d);
  std::map<std::string, int> firstRank;
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    auto [it, inserted] = firstRank.emplace(all[r], r);
    if (!inserted) {
      throw EnvironmentError(fmt::format(
          "ranks {} and {} would share GPU {} on host {}: one GPU "
          "per rank (check CUDA_VISIBLE_DEVICES and the local rank)",
          it->second, r, all[r].substr(all[r].find(' ') + 1), all[r].substr(0, all[r].find(' '))));
    }
  }
}

}  // namespace cb
