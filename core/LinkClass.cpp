#include "core/LinkClass.h"

#include <algorithm>
#include <array>

namespace cb {
namespace {

constexpr std::array<std::pair<LinkClass, std::string_view>, 7> kNames{{
    {LinkClass::kSelf, "self"},
    {LinkClass::kCoreGroup, "core-group"},
    {LinkClass::kNvlink, "nvlink"},
    {LinkClass::kPcieSwitch, "pcie-switch"},
    {LinkClass::kNuma, "numa"},
    {LinkClass::kCrossNuma, "cross-numa"},
    {LinkClass::kNetwork, "network"},
}};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string_view linkClassName(LinkClass c) {
  for (const auto& [k, name] : kNames) {
    if (k == c) return name;
  }
  return "unknown";
}

std::optional<LinkClass> parseLinkClass(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

const std::vector<LinkClass>& allLinkClasses() {
  static const std::vector<LinkClass> all = [] {
    std::vector<LinkClass> v;
    for (const auto& kn : kNames) v.push_back(kn.first);
    return v;
  }();
  return all;
}

LinkClass classifyPair(const RankPlacement& a, const RankPlacement& b) {
  if (a.rank >= 0 && a.rank == b.rank && a.host == b.host) return LinkClass::kSelf;
  if (a.host != b.host) return LinkClass::kNetwork;
  bool gpus = !a.gpuBusId.empty() && !b.gpuBusId.empty();
  if (gpus) {
    if (a.gpuBusId == b.gpuBusId) return LinkClass::kSelf;  // two ranks sharing one GPU
    if ((!a.nvlinkFabric.empty() && a.nvlinkFabric == b.nvlinkFabric) ||
        contains(a.nvlinkPeers, b.gpuBusId) || contains(b.nvlinkPeers, a.gpuBusId)) {
      return LinkClass::kNvlink;
    }
    if (!a.pcieSwitch.empty() && a.pcieSwitch == b.pcieSwitch) return LinkClass::kPcieSwitch;
    if (a.gpuNumaNode >= 0 && a.gpuNumaNode == b.gpuNumaNode) return LinkClass::kNuma;
    return LinkClass::kCrossNuma;
  }
  if (a.coreGroup >= 0 && a.coreGroup == b.coreGroup) return LinkClass::kCoreGroup;
  if (a.numaNode >= 0 && a.numaNode == b.numaNode) return LinkClass::kNuma;
  return LinkClass::kCrossNuma;
}

std::vector<LinkClass> classifyAll(const std::vector<RankPlacement>& placements) {
  size_t n = placements.size();
  std::vector<LinkClass> out(n * n, LinkClass::kSelf);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      out[i * n + j] = i == j ? LinkClass::kSelf : classifyPair(placements[i], placements[j]);
    }
  }
  return out;
}

std::string linkClassCounts(const std::vector<LinkClass>& links) {
  size_t n = 0;
  while (n * n < links.size()) ++n;
  std::array<int, kNames.size()> count{};
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) count.at(static_cast<size_t>(links[i * n + j]))++;
  }
  std::string out;
  for (size_t k = 0; k < kNames.size(); ++k) {
    if (count[k] == 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(count[k]) + " ";
    out += kNames[k].second;
  }
  return out;
}

}  // namespace cb
