// The plain model every trace reader produces: per rank, the communication ops in trace order.
// Readers (replay/Readers.h) turn Chakra .et, PyTorch ET JSON and Kineto JSON into it; the
// replay engine (replay/Replay.h) and the dry run only ever see this.
//
// `count` is the elements of `dtype` this rank hands to the op, as the trace records it:
//   allreduce, broadcast, reduce: the buffer;
//   allgather: this rank's part (it receives group size x count);
//   reduce_scatter: the whole input (it keeps count / group size);
//   alltoall: the whole send buffer (count / group size to each peer);
//   alltoallv: the send buffer; inSplits/outSplits give the elements to/from each peer;
//   send/recv: the message; peer = the other rank (global).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/Collective.h"
#include "core/DataType.h"

namespace cb::replay {

enum class OpKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kAllToAllV,
  kSend,
  kRecv,
  kBarrier,
};

// The collective of core/Collective.h an op kind is (the first six kinds); alltoallv, send, recv
// and barrier are none.
std::optional<Collective> collectiveOf(OpKind k);
std::string_view opKindName(OpKind k);  // "allreduce", ..., "alltoallv", "send", "recv", ...
// Accepts the spellings of the traces (all_reduce, allreduce, all_to_allv, _all_gather_base,
// reduce_scatter_tensor, ...); false when the name is not a communication op we replay.
bool parseOpKind(std::string_view name, OpKind& out);
bool isPointToPoint(OpKind k);

struct CommOp {
  OpKind kind = OpKind::kAllReduce;
  DataType dtype = DataType::kFloat;
  uint64_t count = 0;
  std::vector<uint64_t> inSplits, outSplits;  // alltoallv, elements per peer (group order)
  int root = -1;                              // broadcast/reduce: rank in the group
  int peer = -1;                              // send/recv: global rank
  std::string group;                          // process group name; "" = all ranks
  int64_t seq = -1;                           // the trace's sequence number, when it has one
  double recordedUs = -1;                     // recorded duration (Kineto kernel, Chakra node)
  double gapUs = 0;  // recorded compute between the previous op and this one
  // Posted together with the previous op (consecutive sends/receives: one group, as
  // ncclGroupStart/End or batch_isend_irecv would, so a ring of blocking sends cannot deadlock).
  bool withPrevious = false;
  std::string node;  // where it came from, for messages ("node 727")

  // The size the trace records for the op (what the dry run totals).
  uint64_t bytes() const { return count * dataTypeSize(dtype); }
};

struct ProcessGroup {
  std::string name, desc;
  std::vector<int> ranks;  // global ranks; empty = all ranks
  int size = 0;            // recorded group size (0: unknown)
};

struct RankTrace {
  std::string file;
  std::string format;         // "chakra", "pytorch-et 1.0.1", "kineto", ...
  int recordedRank = -1;      // from the file's contents, when it says (Kineto)
  int recordedWorldSize = 0;  // from the file's contents, when it says (Kineto, PG init)
  std::map<std::string, ProcessGroup> groups;
  std::vector<CommOp> ops;
  bool hasDurations() const;
};

// A bad trace: one line naming the file and the node. Exit 2 (a usage error).
[[noreturn]] void traceError(const std::string& file, const std::string& where,
                             const std::string& what);

}  // namespace cb::replay
