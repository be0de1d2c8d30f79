// GPUs and NVLinks through NVML, loaded at run time with dlopen("libnvidia-ml.so.1") only: NVML
// ships with the driver, so a build machine (or a container without the driver mounted) has none,
// and collbench must still start there. The entry points are declared here with NVML's C ABI, so
// no nvml.h is needed at build time, and tests stand in recorded answers through NvmlApi.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/Topology.h"

namespace cb {

using NvmlReturn = int;  // nvmlReturn_t: 0 success
using NvmlDevice = struct NvmlDeviceOpaque*;

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2.
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];  // "00000000:34:00.0"
};

// The NVML entry points used; any may be null (an old driver): what needs it is skipped.
struct NvmlApi {
  NvmlReturn (*init)() = nullptr;  // nvmlInit_v2
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*driverVersion)(char*, unsigned) = nullptr;  // nvmlSystemGetDriverVersion
  NvmlReturn (*deviceCount)(unsigned*) = nullptr;          // nvmlDeviceGetCount_v2
  NvmlReturn (*deviceByIndex)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*pciInfo)(NvmlDevice, NvmlPciInfo*) = nullptr;  // nvmlDeviceGetPciInfo_v3
  NvmlReturn (*currPcieGen)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*maxPcieGen)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*currPcieWidth)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*maxPcieWidth)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*nvlinkState)(NvmlDevice, unsigned, int*) = nullptr;  // 1 enabled
  NvmlReturn (*nvlinkVersion)(NvmlDevice, unsigned, unsigned*) = nullptr;
  NvmlReturn (*nvlinkRemotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;  // _v2
  NvmlReturn (*nvlinkRemoteType)(NvmlDevice, unsigned, int*) = nullptr;  // 0 GPU, 1 NPU, 2 switch
};

struct NvmlLink {
  unsigned link = 0;
  bool active = false;
  int version = 0;          // NVLink generation (nvlinkGenerationOfNvmlVersion), 0 unknown
  std::string remoteBusId;  // normalized; "" when NVML does not say
  int remoteType = -1;      // 0 GPU, 1 IBM NPU (a CPU), 2 NVSwitch, -1 unknown
};

struct NvmlGpu {
  std::string busId;  // normalized "0000:34:00.0"
  std::string name, uuid;
  PcieLink link;
  std::vector<NvmlLink> nvlinks;  // every link NVML answered for
};

struct NvmlSnapshot {
  bool loaded = false;
  std::string note;  // why there is nothing, or ""
  std::string driverVersion;
  std::vector<NvmlGpu> gpus;
};

constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (H100: 18)

// nvmlDeviceGetNvLinkVersion answers with nvml.h's nvmlNvlinkVersion_t, not a generation:
// NVML_NVLINK_VERSION_1_0 = 1, 2_0 = 2, 2_2 = 3, 3_0 = 4, 3_1 = 5, 4_0 = 6, 5_0 = 7, 6_0 = 8.
// Returns the NVLink generation (1..6), 0 for INVALID or a value nvml.h did not name.
int nvlinkGenerationOfNvmlVersion(unsigned nvmlVersion);
// The generation to believe for a GPU of `model` whose NVML says `reported`: the architecture
// fixes it (H100s have been seen answering NVML_NVLINK_VERSION_5_0), so a model the peak table
// knows wins; otherwise what NVML said.
int nvlinkGenerationFor(std::string_view model, int reported);

// Reads every GPU through `api` (init .. shutdown).
NvmlSnapshot readNvml(const NvmlApi& api);
// The same through libnvidia-ml.so.1; a missing library gives loaded=false and a note.
NvmlSnapshot readNvml();

// Puts NVML's view into a topology: GPU names, UUIDs, PCIe generation and width, NVLinks (which
// replace those hwloc recorded for that GPU), the driver version. GPUs hwloc did not see are
// added.
void applyNvml(MachineTopology& t, const NvmlSnapshot& s);

}  // namespace cb
