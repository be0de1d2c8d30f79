// How two devices of one machine connect, in the terms of `nvidia-smi topo -m`: NVLinks, or the
// PCIe path (PIX, PXB, PHB, NODE, SYS). Also the NVLink fabric and highest PCIe switch of a GPU,
// which rank placements carry.
#pragma once

#include <string>

#include "topology/Topology.h"

namespace cb {

enum class PciPath {
  kSelf,  // X
  kPix,   // at most one PCIe bridge (one switch counts as one bridge)
  kPxb,   // several PCIe bridges, not through the host bridge
  kPhb,   // through a PCIe host bridge (the CPU)
  kNode,  // between host bridges within one NUMA node
  kSys,   // across NUMA nodes (the SMP interconnect)
};
const char* pciPathName(PciPath p);  // "X", "PIX", ...

// PCIe path between two PCI nodes (indexes into t.pci).
PciPath pciPathBetween(const MachineTopology& t, int a, int b);

// NVLinks between two GPUs (bus ids): the direct links between them, else, when both reach one
// NVSwitch fabric, the smaller of their link counts into the fabric (what nvidia-smi prints as
// NV#); 0 when none.
int nvlinksBetween(const MachineTopology& t, const std::string& a, const std::string& b);

// The NVSwitch fabric a GPU reaches ("" none): all NVSwitches of a machine are one fabric.
std::string nvlinkFabricOf(const MachineTopology& t, const std::string& gpuBusId);
// Active NVLinks of a GPU (to GPUs, NVSwitches or CPUs).
int activeNvlinks(const MachineTopology& t, const std::string& gpuBusId);
// A PCIe switch is an upstream port whose children are downstream ports with the same device id
// (both have role "switch"). A downstream port is a switch-role bridge whose parent is a
// switch-role bridge with the same id that is not itself a downstream port.
bool isSwitchDownstreamPort(const MachineTopology& t, int pciIndex);
// Bus id of the upstream port of the highest PCIe switch above a PCI node ("" none).
std::string topSwitchOf(const MachineTopology& t, int pciIndex);

// The nvidia-smi cell for two GPUs or NICs (indexes into the matrix order: GPUs, then NICs).
std::string matrixCell(const MachineTopology& t, int i, int j);

}  // namespace cb
