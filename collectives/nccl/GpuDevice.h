// Which GPU a rank uses and whether there is one at all. The CUDA runtime is linked, but nothing
// assumes a driver: gpuUnavailableReason() asks cudaGetDeviceCount once and turns a missing
// driver or an empty device list into one line that variants report as "unsupported".
//
// Device selection follows nccl-tests: one GPU per rank, the rank's index among the ranks on its
// host. In the local (threads) world that is the rank; under a launcher it is the local rank the
// launcher exports (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...). When a rank
// sees exactly one device (Slurm --gpus-per-task=1), that device is its own: device 0.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/Clock.h"
#include "core/Communicator.h"

namespace cb {

// The reason for cudaGetDeviceCount's answer, or nullopt when it found devices. Pure, so the
// wording is tested for codes this machine cannot produce.
std::optional<std::string> gpuUnavailableReasonFor(int cudaErrorCode, int deviceCount);
// Asks the runtime once per process (the answer is cached in a function-local static).
std::optional<std::string> gpuUnavailableReason();
// Visible devices; throws EnvironmentError with gpuUnavailableReason() when there are none.
int gpuDeviceCount();

// Looks a variable up (std::getenv by default; tests pass a map).
using EnvLookup = std::function<const char*(const char*)>;
// The launcher-provided local rank: the first of OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
// MV2_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, PMI_LOCAL_RANK, PALS_LOCAL_RANKID, FLUX_TASK_LOCAL_ID
// that is set. Throws EnvironmentError if the first one set is not a non-negative integer.
std::optional<int> localRankFromEnvironment(const EnvLookup& env);
// The device index this rank uses, or the reason it has none (no GPU, unknown local rank, more
// ranks on this host than visible devices).
struct DeviceChoice {
  int device = -1;
  std::string reason;  // set when device < 0
};
DeviceChoice chooseDevice(const Communicator& comm);
// The rule chooseDevice applies (pure, tested on the host): with one visible device, device 0
// (each rank was given its own GPU); otherwise the local rank's index, if it is visible.
DeviceChoice pickDevice(int localRank, int visibleDevices);
// chooseDevice(comm).device, or throws EnvironmentError with the reason.
int deviceForRank(const Communicator& comm);

// Makes `device` current for the calling thread while in scope (CUDA's current device is
// per-thread state; local-world ranks are threads sharing one process).
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

struct DeviceInfo {
  int index = -1;
  std::string name;       // "NVIDIA H100 80GB HBM3"
  std::string pciBusId;   // "0000:29:00.0"
  int hostNumaNode = -1;  // NUMA node of the CPUs closest to the GPU (-1: unknown); bind there
};
DeviceInfo describeDevice(int device);

// Collective: throws EnvironmentError if two ranks on one host would drive the same GPU (NCCL
// would fail later with a vaguer "Duplicate GPU detected").
void checkDistinctDevices(Communicator& comm, int device, Deadline d);

}  // namespace cb
