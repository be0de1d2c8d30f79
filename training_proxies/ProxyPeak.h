// A proxy step's calls against the bound the hardware sets for each (core/PeakModel.h applied by
// topology/LinkBounds.h): per call kind the busbw bound of its group's ranks, and per step the
// communication time the calls would take at their bounds, beside the time they took.
#pragma once

#include <string>
#include <vector>

#include "topology/Topology.h"
#include "training_proxies/Proxy.h"

namespace cb::proxy {

// The world ranks of rank 0's `group` ("dp", "tp", "pp", "emb", "mp", "world", "sharded"), in the
// group's rank order (the order Team::split gives them); empty for a group that has no members
// list ("ps": the parameter server's pushes and pulls).
std::vector<int> groupOfRankZero(const ProxyOptions& o, int worldSize, const std::string& group);

// Sets each call's bound (CallStat::peak, peakLimit) and the run's commAtPeak: the seconds per
// step of every call at its bound (S x busbw factor / bound; a pipeline message: its bytes over
// the pair's sendrecv bound), left -1 when any call has no bound. `copyGBpsPerRank`: the host
// memory copy rate for host ranks on one host (0: not measured).
void setCallPeaks(const ProxyOptions& o, const std::vector<MachineTopology>& hosts,
                  const std::vector<RankPlacement>& placements, double copyGBpsPerRank,
                  ProxyRun& run);

// Sum over the calls of callsPerStep x seconds: the communication time of one step as measured
// call by call (rank 0's calls, slowest rank's medians).
double measuredCallSeconds(const ProxyRun& run);

}  // namespace cb::proxy
