// Will the sweep fit in this host's memory? The engine keeps, per rank, the largest send and
// receive buffers of the sweep (shareable memfd memory: it is neither swappable nor limited by
// /dev/shm, and ftruncate never fails early, so a size that cannot fit ends in the kernel's
// out-of-memory killer), host copies for verification, and each algorithm's scratch. This
// estimates that for the largest point and compares it with what the host (and the cgroup the
// process runs in) has available, before anything is measured.
#pragma once

#include <cstdint>
#include <string>

#include "bench/Sweep.h"
#include "core/Size.h"

namespace cb {

struct MemoryNeed {
  uint64_t buffers = 0;       // send + receive buffers of host-memory variants (pool), per rank
  uint64_t verification = 0;  // host chunks of input, output and expected values, per rank
  uint64_t scratch = 0;       // the largest scratch of a selected hand-written host algorithm
  // GPU memory, per rank: the pool's device buffers (NCCL, --transport cuda) and the device
  // algorithms' scratch. Kept apart: an 8-GPU node's -e 8G is 8 x 4 GiB on the GPUs, not 32 GiB
  // of host memory (checked against the host it was refused under a Slurm memory limit).
  uint64_t deviceBuffers = 0;
  uint64_t deviceScratch = 0;
  uint64_t perRank() const {  // host memory
    return saturatingAdd(saturatingAdd(buffers, verification), scratch);
  }
  uint64_t devicePerRank() const { return saturatingAdd(deviceBuffers, deviceScratch); }
};

class SweepPlan;
// Host memory one rank needs at the plan's largest point (every collective and data type).
MemoryNeed sweepMemoryPerRank(const SweepPlan& plan);
MemoryNeed sweepMemoryPerRank(const SweepOptions& o, int nranks);  // of SweepPlan(o, nranks)

struct HostMemory {
  uint64_t availableBytes = 0;  // the smaller of MemAvailable and the cgroup's headroom
  std::string source;           // "MemAvailable" or "cgroup memory.max"
};
HostMemory readHostMemory();

// UsageError (one line, with the figures) when `ranksOnHost` ranks needing `need` each do not
// fit in `host`.
void checkMemoryFit(const MemoryNeed& need, int ranksOnHost, const HostMemory& host,
                    uint64_t maxBytes);
// UsageError when `ranksOnDevice` ranks (more than one only where ranks share a GPU) needing
// need.devicePerRank() each do not fit in the device's `freeBytes` (cudaMemGetInfo).
void checkDeviceMemoryFit(const MemoryNeed& need, int ranksOnDevice, uint64_t freeBytes,
                          const std::string& device, uint64_t maxBytes);

}  // namespace cb
