#include "topology/NodeKind.h"

#include <algorithm>
#include <map>

namespace cb {
namespace {

// The table key of the one model all `machines` GPUs share; "" when they differ or none has one.
std::string sharedGpu(const std::vector<const MachineTopology*>& machines) {
  std::string gpu;
  for (const auto* m : machines) {
    for (const auto& g : m->gpus) {
      const std::string key = referenceGpu(g.model);
      if (key.empty() || (!gpu.empty() && key != gpu)) return "";
      gpu = key;
    }
  }
  return gpu;
}

}  // namespace

NodeKind runNodeKind(const RunTopology& topology) {
  NodeKind k;
  k.how = "topology";
  std::map<std::string, int> gpuRanks;
  for (const auto& p : topology.placements) {
    if (!p.gpuBusId.empty()) ++gpuRanks[p.host];
  }
  if (gpuRanks.empty()) return k;
  std::vector<const MachineTopology*> machines;
  for (const auto& h : topology.hosts) {
    if (gpuRanks.count(h.host)) machines.push_back(&h);
  }
  k.gpu = sharedGpu(machines);
  for (const auto& [host, n] : gpuRanks) k.gpusPerNode = std::max(k.gpusPerNode, n);
  k.nodes = static_cast<int>(gpuRanks.size());
  return k;
}

NodeKind machineNodeKind(const MachineTopology& machine, int nodes) {
  NodeKind k;
  k.how = "topology";
  k.gpu = sharedGpu({&machine});
  k.gpusPerNode = static_cast<int>(machine.gpus.size());
  k.nodes = nodes;
  return k;
}

}  // namespace cb
