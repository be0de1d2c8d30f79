// The NCCL backend as registry variants: "nccl" for allreduce, allgather, reduce_scatter,
// broadcast, reduce, alltoall (grouped ncclSend/ncclRecv, as nccl-tests does) and sendrecv (ring
// shift: send to rank+1, receive from rank-1), on device memory, every NCCL type and sum, prod,
// max, min, avg. registerNcclVariants (declared in collectives/Registry.h) adds them to the
// builtin registry; registerNcclPlanVariants adds "nccl:<algo>/<proto>" variants on request.
#pragma once

#include <nccl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/Registry.h"
#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/NcclVariantPlan.h"
#include "core/Collective.h"
#include "core/Communicator.h"

namespace cb {

std::optional<ncclDataType_t> toNcclDataType(DataType t);
// nullopt for band/bor/bxor: NCCL has no bitwise reductions.
std::optional<ncclRedOp_t> toNcclRedOp(RedOp op);

// Why an NCCL variant can't run here (no GPU, bitwise op, root out of range, no device for this
// rank, an option this NCCL lacks), or nullopt.
std::optional<std::string> ncclUnsupportedReason(const Communicator& comm, const CollArgs& args,
                                                 const VariantOptions& options);

// Collective over comm. `env` non-empty makes this an algorithm/protocol variant: its own
// communicator, created with those settings, and a one-element probe call of the collective
// during prepare; when NCCL refuses the settings (at init, in the probe, or later in run) the
// call throws EnvironmentError("unsupported: NCCL refused ..."), which the engine should report
// as an unsupported point. Throws EnvironmentError when ncclUnsupportedReason is set.
std::unique_ptr<PreparedCollective> prepareNccl(Communicator& comm, const CollArgs& args,
                                                const VariantOptions& options,
                                                const NcclEnv& env = {});

// When `e` is NCCL refusing the forced settings `env` (isNcclRefusal), the "unsupported: NCCL
// refused ..." line, remembered for the column (NcclRefusals) so later points of it are
// unsupported without a new communicator; nullopt for an unforced call or any other error.
std::optional<std::string> ncclRefusalReason(const NcclEnv& env, const CollArgs& args,
                                             int bufferRegistration, const NcclCallError& e);

// Adds one variant per (collective, spec): name spec.name, backend "nccl". For the CLI:
//   Registry r = Registry::builtin();
//   registerNcclPlanVariants(r, ncclVariantPlan(algoFlag, protoFlag));
void registerNcclPlanVariants(Registry& r, const std::vector<NcclVariantSpec>& plan);

}  // namespace cb
