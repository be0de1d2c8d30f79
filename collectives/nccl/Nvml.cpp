// NVLink presence through a run-time-loaded NVML (see Nvml.h). The few NVML entry points used are
// declared here with NVML's C ABI, so no nvml.h is needed at build time.
#include "collectives/nccl/Nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace cb {
namespace {

using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (H100: 18)

// dlopen/dlclose as RAII.
class Library {
 public:
  explicit Library(const char* name) : handle_(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) {
      const char* err = dlerror();
      error_ = err ? err : name;
    }
  }
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  template <class Fn>
  Fn symbol(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  void* handle_;
  std::string error_;
};

}  // namespace

NvlinkState probeNvlink(const std::string& pciBusId) {
  NvlinkState state;
  Library nvml("libnvidia-ml.so.1");
  if (!nvml.loaded()) {
    state.note = fmt::format("NVML not available ({})", nvml.error());
    return state;
  }
  auto init = nvml.symbol<NvmlReturn (*)()>("nvmlInit_v2");
  auto shutdown = nvml.symbol<NvmlReturn (*)()>("nvmlShutdown");
  auto byBusId =
      nvml.symbol<NvmlReturn (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByPciBusId_v2");
  auto linkState =
      nvml.symbol<NvmlReturn (*)(NvmlDevice, unsigned, int*)>("nvmlDeviceGetNvLinkState");
  if (!init || !shutdown || !byBusId || !linkState) {
    state.note = "NVML too old (missing nvmlDeviceGetNvLinkState)";
    return state;
  }
  if (NvmlReturn r = init(); r != kNvmlSuccess) {
    state.note = fmt::format("NVML did not initialize (nvmlReturn {})", r);
    return state;
  }
  state.nvmlLoaded = true;
  NvmlDevice dev = nullptr;
  if (NvmlReturn r = byBusId(pciBusId.c_str(), &dev); r != kNvmlSuccess) {
    state.note = fmt::format("NVML does not know GPU {} (nvmlReturn {})", pciBusId, r);
  } else {
    int active = 0;
    for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
      int enabled = 0;
      // Links past the device's last one answer with an error; those are simply absent.
      if (linkState(dev, link, &enabled) == kNvmlSuccess && enabled == 1) ++active;
    }
    state.activeLinks = active;
    state.note = active > 0 ? fmt::format("{} NVLink{} active", active, active == 1 ? "" : "s")
                            : "no active NVLink (PCIe only)";
  }
  shutdown();
  return state;
}

std::string nvlinkSummary(const std::string& pciBusId) { return probeNvlink(pciBusId).note; }

}  // namespace cb
