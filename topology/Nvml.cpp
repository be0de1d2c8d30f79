#include "topology/Nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "core/PeakModel.h"
#include "core/Text.h"

namespace cb {
namespace {

constexpr NvmlReturn kSuccess = 0;

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
  void bind(Fn& fn, const char* name) const {
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  void* handle_;
  std::string error_;
};

std::string text(NvmlReturn (*fn)(NvmlDevice, char*, unsigned), NvmlDevice d) {
  char buf[128] = {};
  if (!fn || fn(d, buf, sizeof buf - 1) != kSuccess) return "";
  return buf;
}

int number(NvmlReturn (*fn)(NvmlDevice, unsigned*), NvmlDevice d) {
  unsigned v = 0;
  if (!fn || fn(d, &v) != kSuccess) return 0;
  return static_cast<int>(v);
}

}  // namespace

int nvlinkGenerationOfNvmlVersion(unsigned nvmlVersion) {
  switch (nvmlVersion) {
    case 1: return 1;  // NVML_NVLINK_VERSION_1_0 (P100)
    case 2: return 2;  // NVML_NVLINK_VERSION_2_0 (V100)
    case 3: return 2;  // NVML_NVLINK_VERSION_2_2
    case 4: return 3;  // NVML_NVLINK_VERSION_3_0 (A100)
    case 5: return 3;  // NVML_NVLINK_VERSION_3_1
    case 6: return 4;  // NVML_NVLINK_VERSION_4_0 (H100, H200)
    case 7: return 5;  // NVML_NVLINK_VERSION_5_0 (B200, GB200)
    case 8: return 6;  // NVML_NVLINK_VERSION_6_0
    default: return 0;
  }
}

int nvlinkGenerationFor(std::string_view model, int reported) {
  auto links = gpuLinks(model);
  if (links && startsWith(links->nvlink, "nvlink")) {
    int gen = 0;
    std::string_view digits = links->nvlink.substr(6);
    std::from_chars(digits.data(), digits.data() + digits.size(), gen);
    if (gen > 0) return gen;
  }
  return reported;
}

NvmlSnapshot readNvml(const NvmlApi& api) {
  NvmlSnapshot s;
  if (!api.init || !api.shutdown || !api.deviceCount || !api.deviceByIndex || !api.pciInfo) {
    s.note = "NVML too old (missing nvmlDeviceGetCount_v2 or nvmlDeviceGetPciInfo_v3)";
    return s;
  }
  if (NvmlReturn r = api.init(); r != kSuccess) {
    s.note = fmt::format("NVML did not initialize (nvmlReturn {})", r);
    return s;
  }
  s.loaded = true;
  char driver[96] = {};
  if (api.driverVersion && api.driverVersion(driver, sizeof driver - 1) == kSuccess) {
    s.driverVersion = driver;
  }
  unsigned count = 0;
  if (api.deviceCount(&count) != kSuccess) count = 0;
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice d = nullptr;
    NvmlPciInfo pci{};
    if (api.deviceByIndex(i, &d) != kSuccess || api.pciInfo(d, &pci) != kSuccess) continue;
    NvmlGpu g;
    g.busId = normalizeBusId(pci.busId);
    g.name = text(api.name, d);
    g.uuid = text(api.uuid, d);
    g.link.gen = number(api.currPcieGen, d);
    g.link.maxGen = number(api.maxPcieGen, d);
    g.link.width = number(api.currPcieWidth, d);
    g.link.maxWidth = number(api.maxPcieWidth, d);
    for (unsigned link = 0; api.nvlinkState && link < kNvmlMaxLinks; ++link) {
      int enabled = 0;
      // Links past the device's last one answer with an error; those are simply absent.
      if (api.nvlinkState(d, link, &enabled) != kSuccess) continue;
      NvmlLink l;
      l.link = link;
      l.active = enabled == 1;
      unsigned version = 0;
      if (api.nvlinkVersion && api.nvlinkVersion(d, link, &version) == kSuccess) {
        l.version = nvlinkGenerationOfNvmlVersion(version);
      }
      NvmlPciInfo remote{};
      if (api.nvlinkRemotePci && api.nvlinkRemotePci(d, link, &remote) == kSuccess) {
        l.remoteBusId = normalizeBusId(remote.busId);
      }
      int type = -1;
      if (api.nvlinkRemoteType && api.nvlinkRemoteType(d, link, &type) == kSuccess) {
        l.remoteType = type == 0xFF ? -1 : type;
      }
      g.nvlinks.push_back(l);
    }
    s.gpus.push_back(g);
  }
  std::sort(s.gpus.begin(), s.gpus.end(),
            [](const NvmlGpu& a, const NvmlGpu& b) { return a.busId < b.busId; });
  api.shutdown();
  return s;
}

NvmlSnapshot readNvml() {
  Library lib("libnvidia-ml.so.1");
  if (!lib.loaded()) {
    NvmlSnapshot s;
    s.note = fmt::format("NVML not available ({})", lib.error());
    return s;
  }
  NvmlApi api;
  lib.bind(api.init, "nvmlInit_v2");
  lib.bind(api.shutdown, "nvmlShutdown");
  lib.bind(api.driverVersion, "nvmlSystemGetDriverVersion");
  lib.bind(api.deviceCount, "nvmlDeviceGetCount_v2");
  lib.bind(api.deviceByIndex, "nvmlDeviceGetHandleByIndex_v2");
  lib.bind(api.name, "nvmlDeviceGetName");
  lib.bind(api.uuid, "nvmlDeviceGetUUID");
  lib.bind(api.pciInfo, "nvmlDeviceGetPciInfo_v3");
  lib.bind(api.currPcieGen, "nvmlDeviceGetCurrPcieLinkGeneration");
  lib.bind(api.maxPcieGen, "nvmlDeviceGetMaxPcieLinkGeneration");
  lib.bind(api.currPcieWidth, "nvmlDeviceGetCurrPcieLinkWidth");
  lib.bind(api.maxPcieWidth, "nvmlDeviceGetMaxPcieLinkWidth");
  lib.bind(api.nvlinkState, "nvmlDeviceGetNvLinkState");
  lib.bind(api.nvlinkVersion, "nvmlDeviceGetNvLinkVersion");
  lib.bind(api.nvlinkRemotePci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  lib.bind(api.nvlinkRemoteType, "nvmlDeviceGetNvLinkRemoteDeviceType");
  return readNvml(api);
}

void applyNvml(MachineTopology& t, const NvmlSnapshot& s) {
  if (!s.loaded) {
    if (!s.note.empty()) t.notes += (t.notes.empty() ? "" : "; ") + s.note;
    return;
  }
  if (!s.driverVersion.empty()) t.driverVersion = s.driverVersion;
  for (const auto& g : s.gpus) {
    int gi = t.gpuIndex(g.busId);
    if (gi < 0) {
      Gpu add;
      add.busId = g.busId;
      add.pci = t.pciIndex(g.busId);
      t.gpus.push_back(add);
      gi = static_cast<int>(t.gpus.size()) - 1;
    }
    Gpu& gpu = t.gpus[gi];
    if (!g.name.empty()) gpu.model = g.name;
    if (!g.uuid.empty()) gpu.uuid = g.uuid;
    if (gpu.pci >= 0) {
      PcieLink& l = t.pci[gpu.pci].link;
      if (l.gen == 0) l.gen = g.link.gen;
      if (l.maxGen == 0) l.maxGen = g.link.maxGen;
      if (l.width == 0) l.width = g.link.width;
      if (l.maxWidth == 0) l.maxWidth = g.link.maxWidth;
    }
    if (g.nvlinks.empty()) continue;
    t.nvlinks.erase(std::remove_if(t.nvlinks.begin(), t.nvlinks.end(),
                                   [&](const NvlinkEdge& e) { return e.from == g.busId; }),
                    t.nvlinks.end());
    std::map<std::string, NvlinkEdge> byRemote;  // key: remote bus id ("" down/unknown)
    for (const auto& l : g.nvlinks) {
      std::string key = l.active ? l.remoteBusId : "";
      NvlinkEdge& e = byRemote[key];
      e.from = g.busId;
      e.to = key;
      e.version = std::max(e.version, nvlinkGenerationFor(g.name, l.version));
      if (!l.active) {
        e.linksDown++;
        e.remoteKind = "down";
        continue;
      }
      e.links++;
      bool isSwitch = l.remoteType == 2 || std::find(t.nvswitches.begin(), t.nvswitches.end(),
                                                     key) != t.nvswitches.end();
      e.remoteKind = isSwitch ? "nvswitch" : l.remoteType == 1 ? "cpu" : "gpu";
      if (isSwitch &&
          std::find(t.nvswitches.begin(), t.nvswitches.end(), key) == t.nvswitches.end()) {
        t.nvswitches.push_back(key);
      }
    }
    for (auto& [k, e] : byRemote) t.nvlinks.push_back(e);
  }
  std::sort(t.gpus.begin(), t.gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.busId < b.busId; });
  for (size_t i = 0; i < t.gpus.size(); ++i) t.gpus[i].name = fmt::format("GPU{}", i);
}

}  // namespace cb
