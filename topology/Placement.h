// Where each rank runs (host, cores, NUMA node, GPU, nearest NIC), binding local-world rank
// threads the way mpirun binds processes, and the run-wide topology every run records.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/Clock.h"
#include "core/Communicator.h"
#include "core/HostMap.h"
#include "core/LinkClass.h"
#include "topology/Preflight.h"
#include "topology/Topology.h"

namespace cb {

// This rank's placement from the calling thread's CPU affinity and the host's topology.
// gpuBusId "" for a host rank; else the GPU's NUMA node, PCIe switch, NVLink fabric and peers
// are filled from `host`.
RankPlacement placeThisRank(const MachineTopology& host, int rank, const std::string& hostName,
                            int localRank, const std::string& gpuBusId = "");

// The NIC nearest a placement: for a GPU rank the one with the shortest PCIe path from the GPU,
// else one on the rank's NUMA node; RDMA before Ethernet. "" when the host has none.
std::string nearestNic(const MachineTopology& host, const RankPlacement& p);

std::string placementToJson(const RankPlacement& p);
RankPlacement placementFromJson(const std::string& json);  // throws EnvironmentError

// Collective: one allgather of the serialized placements; every rank gets all, by rank.
std::vector<RankPlacement> gatherPlacements(Communicator& comm, const RankPlacement& mine,
                                            Deadline d);

// kAuto (the default): kCore when the local ranks fit this machine's cores (one each), else
// kNone, as mpirun binds by default; kNone too when an affinity mask (taskset, a launcher)
// leaves this process fewer CPUs than the machine has: that choice is the user's. Unbound, the
// 2 rank threads of a 2-core host share one core whenever another process keeps the other busy
// (the kernel sees no imbalance: two tasks there, one here, either way) and every step runs one
// rank after the other: under one compile, 4 of 6 unbound runs and 8 of 12 runs of two unbound
// processes at once were 1.3-1.9x slower, bound 6 of 6 and two bound at once 12 of 12 within
// 10% of the idle figures (docs/ARCHITECTURE.md, Topology). Before the ranks' waits stopped
// yielding to other processes (collectives/transport/WaitPolicy.h), bound runs were the worse
// ones (a pinned rank that yields waits for its own core's other tasks), so none was the default.
enum class BindPolicy { kNone, kCore, kNuma, kAuto };
std::optional<BindPolicy> parseBindPolicy(std::string_view s);  // "none", "core", "numa", "auto"
std::string_view bindPolicyName(BindPolicy p);
// kAuto resolved for `ranks` local ranks on this machine; other policies as they are.
BindPolicy resolveBindPolicy(BindPolicy p, int ranks);

// Binds the calling thread as mpirun --map-by core --bind-to core|numa would bind local rank
// `localRank`: the localRank-th core (wrapping), or the whole NUMA node holding that core.
// Returns the CPUs bound to; throws EnvironmentError if the binding fails.
std::vector<int> bindThisThread(BindPolicy p, int localRank);

// --bind auto for a rank that drives a GPU: the CPUs local to the GPU `gpuBusId` (its PCI
// device's nearby CPUs, sysfs local_cpulist as hwloc reads it) that `allowed` holds, so ranks
// 4-7 of a two-socket node run on the socket of their GPUs, as NCCL sets its own threads'
// affinity (its affinity is the GPU's CPUs within the thread's mask: empty on core r of the far
// socket). Empty when the topology does not place the GPU or nothing is allowed there.
std::vector<int> cpusNearGpu(const MachineTopology& t, const std::string& gpuBusId,
                             const std::vector<int>& allowed);
// Binds the calling thread to `cpus` (not empty); returns them; EnvironmentError on failure.
std::vector<int> bindThisThreadTo(const std::vector<int>& cpus, int localRank);
// The calling thread's allowed CPUs (its affinity mask).
std::vector<int> threadCpus();

// This host's live topology, read once per process (hwloc with I/O, sysfs, NVML) and shared by
// the rank threads of a local world.
const MachineTopology& liveTopology();

// What every run records about where it ran (collective over the world).
struct RunTopology {
  std::vector<MachineTopology> hosts;     // one per host, in the order hosts first appear
  std::vector<RankPlacement> placements;  // by rank
  std::vector<LinkClass> links;           // n*n, classifyAll(placements)
  std::vector<Finding> findings;          // the preflight: machines, hosts, placements
  // Fingerprint pieces: "gpu_model", "gpu_count", "driver", "ranks_per_host", "topology".
  std::vector<std::pair<std::string, std::string>> fingerprint;
  std::string toJson() const;  // {"hosts": [...], "placements": [...], "findings": [...]}
};
// Collective over comm, whose host map is `hosts` (the Team's: host names are not asked again).
// `gpuBusId`: the GPU this rank drives ("" for a host rank or a build without the GPU path).
RunTopology collectRunTopology(Communicator& comm, const HostMap& hosts, Deadline d,
                               const std::string& gpuBusId = "");

// A stored RunTopology::toJson as text, each line starting with `prefix`: per host its summary
// and matrix, then each rank's placement, the link classes counted over rank pairs, and the
// preflight's findings. Throws EnvironmentError for JSON that is not such a record.
std::string renderRunTopology(const std::string& json, const std::string& prefix);

}  // namespace cb
