// NVLink presence through NVML, loaded at run time with dlopen("libnvidia-ml.so.1") only: NVML
// ships with the driver, so a build machine (or a container without the driver mounted) has none,
// and collbench must still start there.
#pragma once

#include <optional>
#include <string>

namespace cb {

struct NvlinkState {
  bool nvmlLoaded = false;
  std::optional<int> activeLinks;  // set when NVML answered for this device
  std::string note;                // one line: the count, or why there is none
};

// Active NVLinks of the GPU at `pciBusId` ("0000:29:00.0").
NvlinkState probeNvlink(const std::string& pciBusId);
// probeNvlink(pciBusId).note.
std::string nvlinkSummary(const std::string& pciBusId);

}  // namespace cb
