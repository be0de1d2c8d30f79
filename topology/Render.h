// Text views of a topology: a tree (CPU side, then the PCI tree of each host bridge) and the
// GPU/NIC matrix in the legend of `nvidia-smi topo -m`.
#pragma once

#include <string>

#include "topology/Topology.h"

namespace cb {

std::string renderTree(const MachineTopology& t);
// The matrix, its legend and the NIC legend; a line saying so when there is no GPU and no NIC.
std::string renderMatrix(const MachineTopology& t);

}  // namespace cb
