// NCCL algorithm x protocol variants (--nccl-algo, --nccl-proto): a pure expansion of the user's
// lists into one variant per pair, each with the NCCL_ALGO / NCCL_PROTO settings its communicator
// is created with and its column name, e.g. "nccl:Ring/LL". "all" expands to every algorithm
// NCCL 2.28 knows (Ring, Tree, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT) or every protocol
// (LL, LL128, Simple); an empty list leaves that choice to NCCL ("auto" in the name).
#pragma once

#include <string>
#include <vector>

#include "collectives/nccl/NcclComm.h"

namespace cb {

struct NcclVariantSpec {
  std::string algo;   // canonical NCCL spelling ("CollNetDirect"), "" = NCCL's choice
  std::string proto;  // "LL", "LL128", "Simple", "" = NCCL's choice
  std::string name;   // "nccl:Ring/LL", "nccl:Tree/auto"
  NcclEnv env;        // {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}}, unforced ones omitted
};

// Comma lists, case-insensitive ("collnet_direct" and "CollNetDirect" alike), duplicates dropped,
// algorithm-major order. Throws UsageError for an unknown name. Both lists empty: no variants.
std::vector<NcclVariantSpec> ncclVariantPlan(const std::string& algos, const std::string& protos);

}  // namespace cb
