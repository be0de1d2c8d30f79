#include "core/PeakModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/Size.h"
#include "core/Text.h"

namespace cb {
namespace {

constexpr std::string_view kNvlinkSource =
    "NVIDIA NVLink/NVSwitch page (nvidia.com/en-us/data-center/nvlink): per GPU 160, 300, 600, "
    "900, 1800 GB/s bidirectional over 4, 6, 12, 18, 18 links (P100, V100, A100, H100, B200)";
constexpr std::string_view kNvlinkTypical =
    "NVIDIA/nccl-tests#212 (S. Jeaugey): 450 GB/s line rate, NCCL reaches 370 GB/s busbw";
constexpr std::string_view kPcieSource =
    "PCI-SIG specifications (pcisig.com): 8, 16, 32 GT/s with 128b/130b (gen3-5), 64 GT/s "
    "PAM4 FLIT (gen6: x16 256 GB/s bidirectional)";
constexpr std::string_view kPcieTypical =
    "NVIDIA/nccl#406 (S. Jeaugey): GPUs under one PCIe switch reach 12 GB/s on gen3 x16";
constexpr std::string_view kIbSource =
    "InfiniBand Trade Association roadmap (infinibandta.org): 4x ports EDR 100, HDR 200, NDR 400, "
    "XDR 800 Gb/s; FDR 56 Gb/s";
constexpr std::string_view kIbTypical =
    "NVIDIA/nccl-tests#119 (S. Jeaugey): 24 GB/s is the peak per 200G NIC, 12 GB/s per 100G";
// Through host memory (no P2P), gen3: "12GB/s instead of 9 or 6"; the low end.
constexpr double kPcieHostTypical = 6.0 / 15.754;
constexpr std::string_view kPcieHostTypicalSource =
    "NVIDIA/nccl#406 (S. Jeaugey): through host memory 9 or 6 GB/s on gen3 x16 (low end taken)";

}  // namespace

const std::vector<LinkPeak>& peakTable() {
  static const std::vector<LinkPeak> table{
      {"nvlink1", "NVLink1", 20, "link", kNvlinkSource, 0, ""},
      {"nvlink2", "NVLink2", 25, "link", kNvlinkSource, 0, ""},
      {"nvlink3", "NVLink3", 25, "link", kNvlinkSource, 0, ""},
      {"nvlink4", "NVLink4", 25, "link", kNvlinkSource, 370.0 / 450, kNvlinkTypical},
      {"nvlink5", "NVLink5", 50, "link", kNvlinkSource, 0, ""},
      // NVSwitches are non-blocking: a GPU's bound through them is its own links'. Per port.
      {"nvswitch1", "NVSwitch gen1 (18 NVLink2 ports, DGX-2)", 25, "port",
       "NVIDIA DGX-2 / NVSwitch technical overview (2018)", 0, ""},
      {"nvswitch2", "NVSwitch gen2 (36 NVLink3 ports)", 25, "port",
       "NVIDIA A100 Tensor Core GPU architecture whitepaper", 0, ""},
      {"nvswitch3", "NVSwitch gen3 (64 NVLink4 ports)", 25, "port",
       "NVIDIA H100 Tensor Core GPU architecture whitepaper", 0, ""},
      {"nvswitch4", "NVSwitch gen4 (72 NVLink5 ports)", 50, "port",
       "NVIDIA Blackwell architecture technical brief", 0, ""},
      {"pcie3", "PCIe gen3", 8.0 * 128 / 130 / 8, "lane", kPcieSource, 12.0 / 15.754, kPcieTypical},
      {"pcie4", "PCIe gen4", 16.0 * 128 / 130 / 8, "lane", kPcieSource, 0, ""},
      {"pcie5", "PCIe gen5", 32.0 * 128 / 130 / 8, "lane", kPcieSource, 0, ""},
      {"pcie6", "PCIe gen6", 8.0, "lane", kPcieSource, 0, ""},
      {"ib-fdr", "InfiniBand FDR", 56.0 / 8, "port", kIbSource, 0, ""},
      {"ib-edr", "InfiniBand EDR", 100.0 / 8, "port", kIbSource, 0.96, kIbTypical},
      {"ib-hdr", "InfiniBand HDR", 200.0 / 8, "port", kIbSource, 0.96, kIbTypical},
      {"ib-ndr", "InfiniBand NDR", 400.0 / 8, "port", kIbSource, 0, ""},
      {"ib-xdr", "InfiniBand XDR", 800.0 / 8, "port", kIbSource, 0, ""},
  };
  return table;
}

const LinkPeak* findLinkPeak(std::string_view id) {
  for (const auto& p : peakTable()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

double expectedFraction(const Bound& b, double override) {
  if (override > 0) return override;
  if (b.typical > 0) return std::round(b.typical * 0.9 * 100) / 100;
  return kDefaultExpectedFraction;
}

double memoryTrafficPerByte(Collective c, int n) {
  const double f = n > 0 ? (n - 1.0) / n : 0;
  switch (c) {
    case Collective::kAllReduce: return 5 * f;
    case Collective::kReduceScatter: return 3 * f;
    case Collective::kAllGather:
    case Collective::kAllToAll: return 2 * f;
    case Collective::kBroadcast:
    case Collective::kSendRecv: return 2;
    case Collective::kReduce: return 0;
  }
  return 0;
}

double buffersPerByte(Collective c, int n) {
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter: return 1 + 1.0 / std::max(n, 1);
    default: return 2;
  }
}

void setCache(Bound& b, uint64_t bytes, std::string_view level) {
  b.cacheBytes = bytes;
  b.cacheName = bytes > 0 ? fmt::format("{} {}", formatSize(bytes), level) : "";
}

Bound withCollective(Bound b, Collective c) {
  if (c == Collective::kAllReduce && b.known() && b.nvls && b.passReason.empty()) {
    b.passReason =
        "NVLS (NVLink SHARP) reduces in the switch: each byte crosses the GPU's links once each "
        "way";
  }
  return b;
}

Bound memoryBound(Collective c, int n, double copyGBpsPerRank) {
  Bound b;
  b.limit = "host memory";
  b.measured = true;
  b.workingSetPerByte = n * buffersPerByte(c, n);
  const double traffic = memoryTrafficPerByte(c, n);
  if (traffic <= 0 || copyGBpsPerRank <= 0 || n < 2) {
    b.unknownWhy = traffic <= 0 ? fmt::format("no memory traffic model for {}", collectiveName(c))
                                : "no copy bandwidth measured";
    return b;
  }
  b.busbw = busBwFactor(c, n) * 2 * copyGBpsPerRank / traffic;
  b.basis = fmt::format(
      "host memory: {:.2f} GB/s copied per rank with {} ranks copying; {} moves {:.2f} x S per "
      "rank (reads + writes)",
      copyGBpsPerRank, n, collectiveName(c), traffic);
  return b;
}

Bound oneRankBound(double copyGBps, std::string limit, std::string basis) {
  Bound b;
  b.limit = std::move(limit);
  b.onAlgbw = true;
  if (copyGBps <= 0) {
    b.unknownWhy = "no copy bandwidth measured";
    return b;
  }
  b.busbw = copyGBps;
  b.basis = fmt::format(
      "{}; one rank: out of place a collective copies S once (algbw), in place nothing", basis);
  return b;
}

std::optional<double> judgedFigure(int nranks, bool inPlace, double algbw, double busbw) {
  if (!judgedPoint(nranks, inPlace)) return std::nullopt;
  return nranks == 1 ? algbw : busbw;
}

namespace {

constexpr std::string_view kH100Sheet =
    "NVIDIA H100 Tensor Core GPU datasheet (SXM 3.35 TB/s, PCIe 2 TB/s, NVL 3.9 TB/s)";
constexpr std::string_view kA100Sheet =
    "NVIDIA A100 Tensor Core GPU datasheet (40GB 1,555 GB/s; 80GB SXM 2,039, PCIe 1,935)";

}  // namespace

std::optional<GpuMemory> gpuMemory(std::string_view model) {
  const std::string m = toLower(model);
  auto has = [&](std::string_view s) { return m.find(s) != std::string::npos; };
  if (has("h200"))
    return GpuMemory{4800, "HBM3e", "NVIDIA H200 Tensor Core GPU datasheet (4.8 TB/s)"};
  if (has("h100") && has("nvl")) return GpuMemory{3900, "HBM3", kH100Sheet};
  if (has("h100") && has("pcie")) return GpuMemory{2000, "HBM2e", kH100Sheet};
  if (has("h100")) return GpuMemory{3350, "HBM3", kH100Sheet};
  if (has("a100") && has("80gb")) {
    return has("pcie") ? GpuMemory{1935, "HBM2e", kA100Sheet}
                       : GpuMemory{2039, "HBM2e", kA100Sheet};
  }
  if (has("a100")) return GpuMemory{1555, "HBM2", kA100Sheet};
  if (has("b200")) return GpuMemory{8000, "HBM3e", "NVIDIA HGX B200 datasheet (8 TB/s per GPU)"};
  if (has("v100s")) return GpuMemory{1134, "HBM2", "NVIDIA V100S datasheet (1,134 GB/s)"};
  // The DGX-2H's "-H" parts run other clocks than the datasheet's.
  if (has("v100") && !m.ends_with("-h")) {
    return GpuMemory{900, "HBM2", "NVIDIA Tesla V100 datasheet (900 GB/s, SXM2 and PCIe)"};
  }
  if (has("2080 ti")) {
    return GpuMemory{616, "GDDR6", "NVIDIA GeForce RTX 2080 Ti specifications (616 GB/s)"};
  }
  if (has("tesla t4")) return GpuMemory{320, "GDDR6", "NVIDIA T4 datasheet (320 GB/s)"};
  if (has("l40s")) return GpuMemory{864, "GDDR6", "NVIDIA L40S datasheet (864 GB/s)"};
  return std::nullopt;
}

Bound gpuOneRankBound(std::string_view model) {
  auto mem = gpuMemory(model);
  if (!mem) {
    Bound b;
    b.onAlgbw = true;
    b.unknownWhy = fmt::format("memory bandwidth of '{}' is not in the peak model", model);
    return b;
  }
  return oneRankBound(mem->gbps / 2, fmt::format("{} memory", mem->name),
                      fmt::format("{} {:g} GB/s read + write ({}) / 2 for a copy", mem->name,
                                  mem->gbps, mem->source));
}

std::optional<GpuLinks> gpuLinks(std::string_view model) {
  const std::string m = toLower(model);
  auto has = [&](std::string_view s) { return m.find(s) != std::string::npos; };
  // PCIe cards first: "H100 PCIe" must not read as the SXM part.
  if (has("geforce") || has("rtx 20") || has("rtx 30") || has("rtx 40") || has("rtx 50")) {
    std::string_view gen = has("rtx 20") || has("2080")   ? "pcie3"
                           : has("5090") || has("rtx 50") ? "pcie5"
                                                          : "pcie4";
    return GpuLinks{"", 0, false, gen, false};
  }
  if (has("pcie")) {
    std::string_view gen = has("v100") || has("p100") ? "pcie3"
                           : has("a100")              ? "pcie4"
                           : has("h100")              ? "pcie5"
                                                      : "";
    if (gen.empty()) return std::nullopt;
    return GpuLinks{"", 0, false, gen, true};
  }
  if (has("p100")) return GpuLinks{"nvlink1", 4, false, "pcie3", true};
  if (has("v100-sxm3")) return GpuLinks{"nvlink2", 6, true, "pcie3", true};  // DGX-2
  if (has("v100")) return GpuLinks{"nvlink2", 6, false, "pcie3", true};      // hybrid cube mesh
  if (has("a800")) return GpuLinks{"nvlink3", 8, true, "pcie4", true};
  if (has("a100")) return GpuLinks{"nvlink3", 12, true, "pcie4", true};
  if (has("h800")) return GpuLinks{"nvlink4", 8, true, "pcie5", true};
  if (has("h100") || has("h200")) return GpuLinks{"nvlink4", 18, true, "pcie5", true};
  if (has("b200") || has("gb200") || has("b100")) {
    return GpuLinks{"nvlink5", 18, true, "pcie5", true};
  }
  if (has("tesla t4") || has("tesla p4")) return GpuLinks{"", 0, false, "pcie3", true};
  return std::nullopt;
}

namespace {

// `units` units of a table row with its usual share; unknownWhy when the row or count is unknown.
Bound unitsOf(const LinkPeak* p, int units, const char* unknownWhy) {
  Bound b;
  if (!p || units <= 0) {
    b.unknownWhy = unknownWhy;
    return b;
  }
  b.busbw = p->unitGBps * units;
  b.typical = p->typical;
  b.typicalSource = std::string(p->typicalSource);
  return b;
}

}  // namespace

Bound nvlinkBound(std::string_view peakId, int links, bool nvswitch) {
  const LinkPeak* p = findLinkPeak(peakId);
  Bound b = unitsOf(p, links, "NVLink generation or link count unknown");
  if (!b.known()) return b;
  b.limit = fmt::format("{} x{}", p->name, links);
  b.basis = fmt::format("{} links x {:g} GB/s per direction{}", links, p->unitGBps,
                        nvswitch ? " through NVSwitch" : " (direct)");
  b.nvls = nvswitch && (peakId == "nvlink4" || peakId == "nvlink5");
  return b;
}

Bound pcieBound(std::string_view peakId, int width, bool p2p) {
  const LinkPeak* p = findLinkPeak(peakId);
  Bound b = unitsOf(p, width, "PCIe generation or width unknown");
  if (!b.known()) return b;
  b.limit = fmt::format("{} x{}{}", p->name, width, p2p ? "" : " (no P2P)");
  b.basis = fmt::format("{} lanes x {:.3f} GB/s per direction{}", width, p->unitGBps,
                        p2p ? "" : ", through host memory (no peer-to-peer)");
  if (!p2p) {
    // The usual share through host memory is known for gen3 only.
    b.typical = peakId == "pcie3" ? kPcieHostTypical : 0;
    b.typicalSource = peakId == "pcie3" ? std::string(kPcieHostTypicalSource) : "";
  }
  return b;
}

Bound nicBound(std::string_view linkLayer, double rateGbps, int sharers) {
  Bound b;
  if (rateGbps <= 0) {
    b.unknownWhy = "network port rate unknown";
    return b;
  }
  sharers = std::max(sharers, 1);
  const bool ib = toLower(linkLayer) == "infiniband";
  const LinkPeak* p = nullptr;
  if (ib) {
    for (auto [id, gbps] : {std::pair{"ib-fdr", 56.0},
                            {"ib-edr", 100.0},
                            {"ib-hdr", 200.0},
                            {"ib-ndr", 400.0},
                            {"ib-xdr", 800.0}}) {
      if (std::abs(rateGbps - gbps) < 1) p = findLinkPeak(id);
    }
  }
  b.busbw = rateGbps / 8 / sharers;
  b.limit = p ? std::string(p->name)
              : fmt::format("{} {:g} Gb/s", ib ? "InfiniBand" : "Ethernet", rateGbps);
  b.basis = fmt::format("{} port at {:g} Gb/s{}", ib ? "InfiniBand" : "Ethernet/RoCE", rateGbps,
                        sharers > 1 ? fmt::format(", shared by {} ranks", sharers) : "");
  if (p) {
    b.typical = p->typical;
    b.typicalSource = std::string(p->typicalSource);
  }
  return b;
}

Bound deviceLinesBound(std::string_view gpuModel, int gpus, int nodes) {
  if (gpus == 1) return gpuOneRankBound(gpuModel);
  Bound b;
  auto links = gpuLinks(gpuModel);
  if (!links) {
    b.unknownWhy = fmt::format("GPU model '{}' is not in the peak model", gpuModel);
    return b;
  }
  if (nodes > 1) {
    b.unknownWhy = "the log spans several nodes and does not name their NICs (give --topology)";
    return b;
  }
  if (gpus < 1) {
    b.unknownWhy = "the log names no GPU";
    return b;
  }
  // NVSwitch boards hold 4 or more GPUs; fewer may sit on an NVLink bridge or mesh.
  if (!links->nvlink.empty() && links->nvswitch && gpus >= 2) {
    return nvlinkBound(links->nvlink, links->nvlinkLinks, true);
  }
  if (links->nvlink.empty()) return pcieBound(links->pcie, 16, links->p2p);
  b.unknownWhy =
      fmt::format("'{}' boards connect GPUs by a direct NVLink mesh, not modelled", gpuModel);
  return b;
}

std::string_view verdictKindName(Verdict::Kind k) {
  switch (k) {
    case Verdict::Kind::kNormal: return "normal";
    case Verdict::Kind::kLow: return "low";
    case Verdict::Kind::kNoBound: return "no-bound";
    case Verdict::Kind::kNotJudged: return "not-judged";
    case Verdict::Kind::kAboveBound: return "above-bound";
  }
  return "not-judged";
}

namespace {

// Why `v.best` may pass `b` ("" none known).
std::string passReasonOf(const Verdict& v, const Bound& b) {
  if (!b.passReason.empty()) return b.passReason;
  if (b.cacheBytes > 0 && b.workingSet(v.bytes) <= kPartlyCachedFactor * b.cacheBytes) {
    return fmt::format("part of the {} working set stays in the {}",
                       formatSize(b.workingSet(v.bytes)), b.cacheName);
  }
  if (b.measured && v.fraction <= kMeasuredBoundSlack) {
    return fmt::format("within the {:.0f}% a measured copy rate varies by",
                       100 * (kMeasuredBoundSlack - 1));
  }
  return "";
}

}  // namespace

Verdict judge(const std::vector<std::pair<uint64_t, double>>& points, const Bound& b,
              double expectedOverride) {
  Verdict v;
  if (!b.known()) {
    v.kind = Verdict::Kind::kNoBound;
    v.line = "no bound known for this hardware";
    if (!b.unknownWhy.empty()) v.line += " (" + b.unknownWhy + ")";
    return v;
  }
  bool any = false;
  uint64_t cachedUpTo = 0;
  for (auto [bytes, busbw] : points) {
    if (bytes < kJudgeMinBytes) continue;
    if (b.cacheResident(bytes)) {
      cachedUpTo = std::max(cachedUpTo, bytes);
      continue;
    }
    if (!any || busbw > v.best) {
      v.best = busbw;
      v.bytes = bytes;
    }
    any = true;
  }
  v.figure = b.figure();
  v.expected = expectedFraction(b, expectedOverride);
  if (!any) {
    v.kind = Verdict::Kind::kNotJudged;
    v.line =
        cachedUpTo > 0
            ? fmt::format(
                  "not judged: cache-resident: the buffers of every size from {} to {} ({} at {}) "
                  "fit the {} the ranks share, so no memory bound applies",
                  formatSize(kJudgeMinBytes), formatSize(cachedUpTo),
                  formatSize(b.workingSet(cachedUpTo)), formatSize(cachedUpTo), b.cacheName)
            : fmt::format("not judged: no size of {} or more (the {} bound is for large messages)",
                          formatSize(kJudgeMinBytes), b.limit);
    return v;
  }
  v.fraction = v.best / b.busbw;
  const bool low = v.fraction < v.expected;
  std::string reason;
  if (v.fraction > 1) {
    reason = passReasonOf(v, b);
    if (reason.empty()) {
      v.kind = Verdict::Kind::kAboveBound;
      v.line = fmt::format(
          "above the bound: {:.0f}% of the {} bound ({:.{}f} GB/s) at {}, and the model knows no "
          "reason: the bound or the figure is wrong",
          100 * v.fraction, b.limit, b.busbw, b.busbw < 10 ? 2 : 1, formatSize(v.bytes));
      return v;
    }
  }
  v.kind = low ? Verdict::Kind::kLow : Verdict::Kind::kNormal;
  v.line = fmt::format("{}: {:.0f}% of the {} bound ({:.{}f} GB/s) at {}{}; expected >= {:.0f}%",
                       low ? "low" : "normal", 100 * v.fraction, b.limit, b.busbw,
                       b.busbw < 10 ? 2 : 1, formatSize(v.bytes),
                       reason.empty() ? "" : ", above it: " + reason, 100 * v.expected);
  if (cachedUpTo > 0) {
    v.line += fmt::format(" (sizes up to {} fit the {}: cache-resident, not judged)",
                          formatSize(cachedUpTo), b.cacheName);
  }
  return v;
}

std::string verdictText(const Verdict& v) {
  return v.best > 0 ? fmt::format("best {:.2f} GB/s {}: {}", v.best, v.figure, v.line) : v.line;
}

std::string percentOfPeak(double figure, double peak) {
  if (peak <= 0) return "";
  return fmt::format("{:.0f}%", 100 * figure / peak);
}

}  // namespace cb
