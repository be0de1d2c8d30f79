// Expansion of --nccl-algo / --nccl-proto into variants (see NcclVariantPlan.h).
#include "collectives/nccl/NcclVariantPlan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {
namespace {

// NCCL's own spellings (ncclAlgoStr / ncclProtoStr in NCCL 2.28).
constexpr std::array<std::string_view, 7> kAlgos{
    "Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, 3> kProtos{"LL", "LL128", "Simple"};

std::string squash(std::string_view s) {
  std::string out;
  for (char c : toLower(s)) {
    if (c != '_' && c != '-') out += c;
  }
  return out;
}

template <size_t N>
std::vector<std::string> expand(const std::string& list,
                                const std::array<std::string_view, N>& known,
                                std::string_view what) {
  std::vector<std::string> out;
  if (trim(list).empty()) return out;
  if (toLower(trim(list)) == "all") return {known.begin(), known.end()};
  for (const auto& item : splitList(list)) {
    auto it = std::find_if(known.begin(), known.end(),
                           [&](std::string_view k) { return squash(k) == squash(item); });
    if (it == known.end()) {
      std::string expected;
      for (auto k : known) expected += (expected.empty() ? "" : ", ") + std::string(k);
      throw UsageError(
          fmt::format("unknown NCCL {} '{}' (expected {} or all)", what, item, expected));
    }
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.emplace_back(*it);
  }
  return out;
}

}  // namespace

std::vector<NcclVariantSpec> ncclVariantPlan(const std::string& algos, const std::string& protos) {
  auto algoList = expand(algos, kAlgos, "algorithm");
  auto protoList = expand(protos, kProtos, "protocol");
  if (algoList.empty() && protoList.empty()) return {};
  if (algoList.empty()) algoList.emplace_back();    // NCCL picks the algorithm
  if (protoList.empty()) protoList.emplace_back();  // NCCL picks the protocol
  std::vector<NcclVariantSpec> plan;
  for (const auto& algo : algoList) {
    for (const auto& proto : protoList) {
      NcclVariantSpec spec;
      spec.algo = algo;
      spec.proto = proto;
      spec.name =
          fmt::format("nccl:{}/{}", algo.empty() ? "auto" : algo, proto.empty() ? "auto" : proto);
      if (!algo.empty()) spec.env.emplace_back("NCCL_ALGO", algo);
      if (!proto.empty()) spec.env.emplace_back("NCCL_PROTO", proto);
      plan.push_back(std::move(spec));
    }
  }
  return plan;
}

}  // namespace cb
