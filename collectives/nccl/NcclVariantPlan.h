// NCCL algorithm x protocol variants (--nccl-algo, --nccl-proto): a pure expansion of the user's
// lists into one variant per pair, each with the NCCL_ALGO / NCCL_PROTO settings its communicator
// is created with and its column name, e.g. "nccl:Ring/LL". "all" expands to every algorithm
// NCCL 2.28 knows (Ring, Tree, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT) or every protocol
// (LL, LL128, Simple); an empty list leaves that choice to NCCL ("auto" in the name).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collectives/nccl/NcclComm.h"
#include "core/Collective.h"

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

// Why the column of `spec` would not be a run of its own for this call, or nullopt. Such columns
// are refused (reported unsupported with this reason) rather than measured as a copy of "nccl":
//   - alltoall and sendrecv are grouped ncclSend/ncclRecv: NCCL 2.28 ignores NCCL_ALGO and
//     NCCL_PROTO for point-to-point operations;
//   - with -R 2 (symmetric windows), calls NCCL 2.28 has symmetric kernels for (allgather;
//     allreduce and reduce_scatter with sum on float, half, bfloat16) run those, chosen by
//     NCCL_SYM_KERNEL and not by NCCL_ALGO/NCCL_PROTO;
//   - pairs NCCL 2.28 does not have (src/graph/tuning.cc): broadcast and reduce run Ring only;
//     allgather and reduce_scatter have no Tree, CollNetChain or NVLSTree; allreduce has no PAT;
//     NVLS, NVLSTree and PAT run the Simple protocol only;
//   - on one host: NVLSTree (NVLS inside a node, Tree between nodes), PAT (one GPU per node) and
//     CollNetDirect/CollNetChain (in-network reduction) are multi-node algorithms.
std::optional<std::string> ncclPlanRefusal(const NcclVariantSpec& spec, Collective c, DataType t,
                                           RedOp op, int bufferRegistration, bool oneHost);

// Refusals NCCL made at run time, remembered per column (its settings), collective, type, op and
// -R mode: NCCL decides "no algorithm/protocol available" per collective and type, not per size,
// and a refusal marks the column's communicator failed, so without this every later point of the
// column would build a new communicator (0.1-1 s and GPU memory) only to be refused again.
// Process-wide: the ranks of a local world are threads; an MPI rank that remembers alone makes
// the point unsupported everywhere (the engine agrees on one reason).
class NcclRefusals {
 public:
  static NcclRefusals& process();
  void remember(const NcclEnv& env, const CollArgs& args, int bufferRegistration,
                std::string reason);
  std::optional<std::string> find(const NcclEnv& env, const CollArgs& args,
                                  int bufferRegistration) const;
  void clear();

 private:
  static std::string key(const NcclEnv& env, const CollArgs& args, int bufferRegistration);
  mutable std::mutex mutex_;
  std::map<std::string, std::string> reasons_;
};

// Why a plan column can't run this call (ncclPlanRefusal, then a refusal remembered above).
std::optional<std::string> ncclPlanColumnUnsupported(const NcclVariantSpec& spec,
                                                     const CollArgs& args, int bufferRegistration,
                                                     bool oneHost);

}  // namespace cb
