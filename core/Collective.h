// The collectives collbench measures and their size conventions, as in nccl-tests.
//
// CollArgs::count is nccl-tests' "count" column: elements per rank buffer for allreduce,
// broadcast, reduce and sendrecv; elements each rank contributes (allgather), keeps
// (reduce_scatter) or sends to each peer (alltoall) for the others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/DataType.h"

namespace cb {

enum class Collective : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
};

std::string_view collectiveName(Collective c);  // "allreduce", "allgather", "reduce_scatter", ...
std::span<const Collective> allCollectives();
Collective parseCollective(std::string_view s);  // also accepts all_reduce, all_reduce_perf...
std::vector<Collective> parseCollectiveList(std::string_view s);  // comma list or "all"
bool hasReduction(Collective c);  // allreduce, reduce_scatter, reduce
bool hasRoot(Collective c);       // broadcast, reduce

struct CollArgs {
  Collective coll = Collective::kAllReduce;
  DataType dtype = DataType::kFloat;
  RedOp op = RedOp::kSum;
  int root = 0;
  size_t count = 0;
};

size_t sendCount(const CollArgs& a, int nranks);  // elements in the send buffer
size_t recvCount(const CollArgs& a, int nranks);  // elements in the receive buffer
// S of the brief's table: the bytes algbw is computed from.
uint64_t algBytes(const CollArgs& a, int nranks);
// busbw = algbw * busBwFactor (nccl-tests): 2(n-1)/n allreduce; (n-1)/n allgather,
// reduce_scatter, alltoall; 1 broadcast, reduce, sendrecv.
double busBwFactor(Collective c, int nranks);
// The count for a requested size in bytes (floor), so that algBytes(count) <= bytes.
size_t countForBytes(Collective c, DataType t, uint64_t bytes, int nranks);

// In-place layout, as nccl-tests defines it: the offset of the send buffer inside the receive
// buffer (allgather: rank * count) or of the receive buffer inside the send buffer
// (reduce_scatter: rank * count); 0 for the others. Alltoall and sendrecv have no in-place form
// here (MPI_IN_PLACE alltoall exists but NCCL has none): hasInPlace() is false.
bool hasInPlace(Collective c);
size_t inPlaceSendOffset(const CollArgs& a, int rank);  // elements, into the recv buffer
size_t inPlaceRecvOffset(const CollArgs& a, int rank);  // elements, into the send buffer

}  // namespace cb
