// Checks before a run: parts of the machine that are degraded, and ranks or hosts that differ.
// Each finding is one line naming the device, what was expected and what was seen.
#pragma once

#include <string>
#include <vector>

#include "core/LinkClass.h"
#include "topology/Topology.h"

namespace cb {

struct Finding {
  std::string host;
  std::string device;  // "GPU3 0000:39:00.0", "NIC0 mlx5_0 port 1", "rank 5"
  std::string what;    // "PCIe link", "NVLinks", "port state", ...
  std::string expected;
  std::string seen;
  std::string line() const;  // "host: device: what: expected X, seen Y"
};

// One machine: PCIe links below their maximum generation or width, or (when only hwloc's speed
// is known) below the same device model's fastest peer; NVLinks down, or fewer active than the
// same GPU model's peers; PCIe switches holding fewer GPUs than the others; RDMA ports not
// ACTIVE; NIC ports below the rate of their peers.
std::vector<Finding> checkMachine(const MachineTopology& t);

// Several machines of one run: GPU count and GPU models that differ from the most common (the
// larger count on a tie; a lost GPU is the usual fault).
std::vector<Finding> checkHosts(const std::vector<MachineTopology>& hosts);

// Ranks: bound to a NUMA node other than their GPU's.
std::vector<Finding> checkPlacements(const std::vector<RankPlacement>& ranks);

// Ranks whose environment fingerprints (hash per rank) differ from rank 0's.
std::vector<Finding> checkFingerprints(const std::vector<std::string>& hostOfRank,
                                       const std::vector<std::string>& fingerprintOfRank);

}  // namespace cb
