// The bound a recorded machine sets on a collective: the peak model (core/PeakModel.h) applied to
// the run's hosts, rank placements and link classes. Pure functions of the recorded topology, so
// a stored run or an imported log with `import --topology` is judged as a live run is.
#pragma once

#include <string>
#include <vector>

#include "core/LinkClass.h"
#include "core/PeakModel.h"
#include "topology/Topology.h"

namespace cb {

// The bound of the link between ranks a and b (GB/s per direction):
//   nvlink: both GPUs on an NVSwitch fabric: the smaller GPU's links x rate; direct: the links
//     between them x rate;
//   pcie-switch, numa, cross-numa (GPUs): the slower PCIe link of the two (GeForce models without
//     peer-to-peer: through host memory);
//   network: the slower end's port rate over the ranks of its host that share that NIC;
//   host ranks on one host: host memory, from `copyGBpsPerRank` (sendrecv's traffic).
Bound pairLinkBound(const std::vector<MachineTopology>& hosts,
                    const std::vector<RankPlacement>& placements, int a, int b,
                    double copyGBpsPerRank = 0);

// The busbw bound of a collective over every rank (one rank: the algbw bound of oneRankBound,
// from the GPU model's memory or the host's copy rate; ring in rank order): the slowest hop of the
// ring inside the hosts (host ranks on one host: the memory traffic model against the copy
// bandwidth), and across hosts the NICs the ranks of a host use together (their distinct NICs'
// rates summed: NCCL runs a ring per NIC), the smallest host's; alltoall across hosts moves only
// (n - L)/n of its data through them, L ranks per host; a PCIe link above the GPUs that several
// hops of the ring cross, or that is slower than theirs, bounds it too (see LinkBounds.cpp).
Bound collectiveLinkBound(const std::vector<MachineTopology>& hosts,
                          const std::vector<RankPlacement>& placements, Collective c,
                          double copyGBpsPerRank = 0);

// The last-level cache the ranks' buffers can sit in: the bytes of every L3 of their host that
// holds one of their CPUs (all of the host's when their CPUs are unknown); 0 when the ranks span
// hosts or the host records no L3.
uint64_t ranksCacheBytes(const std::vector<MachineTopology>& hosts,
                         const std::vector<RankPlacement>& placements);

// The placements of GPU ranks on copies of one machine: rank r on host rankHosts[r], driving the
// localRanks[r]-th GPU in bus order (as nccl-tests numbers devices). Empty when a host has more
// ranks than the machine has GPUs.
std::vector<RankPlacement> placeGpuRanks(const MachineTopology& machine,
                                         const std::vector<std::string>& rankHosts,
                                         const std::vector<int>& localRanks);

}  // namespace cb
