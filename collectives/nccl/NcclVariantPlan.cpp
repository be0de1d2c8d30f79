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

std::optional<std::string> ncclPlanRefusal(const NcclVariantSpec& spec, Collective c, DataType t,
                                           RedOp op, int bufferRegistration, bool oneHost) {
  if (c == Collective::kAllToAll || c == Collective::kSendRecv) {
    return fmt::format(
        "{} is grouped ncclSend/ncclRecv, and NCCL ignores NCCL_ALGO/NCCL_PROTO for "
        "point-to-point operations: this column would repeat 'nccl'",
        collectiveName(c));
  }
  // NCCL 2.28's algorithm x protocol matrix (src/graph/tuning.cc, ncclTopoTuneModel): NCCL
  // itself refuses these at the first call; saying so here needs no GPU.
  const std::string& a = spec.algo;
  if ((c == Collective::kBroadcast || c == Collective::kReduce) && !a.empty() && a != "Ring") {
    return fmt::format("NCCL 2.28 runs {} with Ring only, not {}", collectiveName(c), a);
  }
  if ((c == Collective::kAllGather || c == Collective::kReduceScatter) &&
      (a == "Tree" || a == "CollNetChain" || a == "NVLSTree")) {
    return fmt::format("NCCL 2.28 has no {} for {} (Ring, NVLS, PAT, CollNetDirect only)", a,
                       collectiveName(c));
  }
  if (c == Collective::kAllReduce && a == "PAT") {
    return std::string("NCCL 2.28 runs PAT for allgather and reduce_scatter only");
  }
  if ((a == "NVLS" || a == "NVLSTree" || a == "PAT") && !spec.proto.empty() &&
      spec.proto != "Simple") {
    return fmt::format("NCCL 2.28 runs {} with the Simple protocol only, not {}", a, spec.proto);
  }
  if (bufferRegistration == 2) {
    bool symmetricFloat = t == DataType::kFloat || t == DataType::kHalf || t == DataType::kBFloat16;
    bool symmetric = c == Collective::kAllGather ||
                     ((c == Collective::kAllReduce || c == Collective::kReduceScatter) &&
                      op == RedOp::kSum && symmetricFloat);
    if (symmetric) {
      return fmt::format(
          "with -R 2 NCCL runs {} {} {} as a symmetric kernel chosen by NCCL_SYM_KERNEL, not by "
          "NCCL_ALGO/NCCL_PROTO: this column would repeat 'nccl'",
          collectiveName(c), dataTypeName(t), redOpName(op));
    }
  }
  if (oneHost) {
    if (spec.algo == "NVLSTree" || spec.algo == "PAT" || spec.algo == "CollNetDirect" ||
        spec.algo == "CollNetChain") {
      return fmt::format("{} is a multi-node algorithm (all ranks are on one host)", spec.algo);
    }
  }
  return std::nullopt;
}

NcclRefusals& NcclRefusals::process() {
  static NcclRefusals refusals;
  return refusals;
}

std::string NcclRefusals::key(const NcclEnv& env, const CollArgs& args, int bufferRegistration) {
  return fmt::format("{}|{}|{}|{}|R{}", ncclEnvText(env), collectiveName(args.coll),
                     dataTypeName(args.dtype), redOpName(args.op), bufferRegistration);
}

void NcclRefusals::remember(const NcclEnv& env, const CollArgs& args, int bufferRegistration,
                            std::string reason) {
  std::lock_guard lock(mutex_);
  reasons_.insert_or_assign(key(env, args, bufferRegistration), std::move(reason));
}

std::optional<std::string> NcclRefusals::find(const NcclEnv& env, const CollArgs& args,
                                              int bufferRegistration) const {
  std::lock_guard lock(mutex_);
  auto it = reasons_.find(key(env, args, bufferRegistration));
  if (it == reasons_.end()) return std::nullopt;
  return it->second;
}

void NcclRefusals::clear() {
  std::lock_guard lock(mutex_);
  reasons_.clear();
}

std::optional<std::string> ncclPlanColumnUnsupported(const NcclVariantSpec& spec,
                                                     const CollArgs& args, int bufferRegistration,
                                                     bool oneHost) {
  if (auto why =
          ncclPlanRefusal(spec, args.coll, args.dtype, args.op, bufferRegistration, oneHost)) {
    return why;
  }
  return NcclRefusals::process().find(spec.env, args, bufferRegistration);
}

}  // namespace cb
