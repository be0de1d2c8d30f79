// Which GPU a rank uses and whether there is one at all. The CUDA runtime is linked, but nothing
// assumes a driver: gpuUnavailableReason() asks cudaGetDeviceCount once and turns a missing
// driver or an empty device list into one line that variants report as "unsupported".
//
// Device selection follows nccl-tests: one GPU per rank, the rank's index among the ranks on its
// host. In the local (threads) world that is the rank; under a launcher it is the local rank the
// launcher exports (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...). When a rank
// sees exactly one device (Slurm --gpus-per-task=1), that device is its own: device 0.
#pragma once

#include <cstdint>
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
// The rule chooseDevice applies (pure, tested on the host). `processRanks` is how many ranks
// this process drives: 1 for an MPI rank, every rank for the local world of threads. Those must
// sit on distinct GPUs (NCCL refuses two ranks of one communicator on one GPU), so a local world
// larger than the visible devices is refused here, before anything is allocated. With one rank
// per process and one visible device, device 0 (each rank was given its own GPU); otherwise the
// local rank's index, if it is visible.
DeviceChoice pickDevice(int localRank, int processRanks, int visibleDevices);
// chooseDevice(comm).device, or throws EnvironmentError with the reason.
int deviceForRank(const Communicator& comm);

// The device calls below go through one function: cudaSetDevice by default, a counter in tests.
// Since CUDA 12 cudaSetDevice creates the device's primary context (about 0.5 GB), so what it is
// called with is what a test of "never touch device 0 by default" must see. Returns the old one.
using SetDeviceFn = int (*)(int device);
SetDeviceFn exchangeSetDeviceForTesting(SetDeviceFn fn);

// Makes `device` current on the calling thread, once: the thread remembers the device it set, so
// a second call with the same device costs nothing. Every GPU path selects devices through here,
// never by asking the runtime (cudaGetDevice answers 0 on a thread that chose nothing).
void setThreadDevice(int device);
// The device this thread set through setThreadDevice, or -1.
int threadDevice();

// Makes `device` current for the calling thread while in scope (CUDA's current device is
// per-thread state; local-world ranks are threads sharing one process). On leaving it restores
// the device the thread had chosen before, if it had chosen one: a thread that chose nothing
// (a verification worker, a destructor on a pool thread) keeps `device` and is never switched to
// device 0, which would create a context there.
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
// Free memory of `device` (cudaMemGetInfo, made current for the call).
uint64_t deviceFreeBytes(int device);

// Collective: throws EnvironmentError if two ranks on one host would drive the same GPU (NCCL
// would fail later with a vaguer "Duplicate GPU detected").
void checkDistinctDevices(Communicator& comm, int device, Deadline d);

}  // namespace cb
