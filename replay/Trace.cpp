#include "replay/Trace.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "core/Error.h"

namespace cb::replay {

std::optional<Collective> collectiveOf(OpKind k) {
  switch (k) {
    case OpKind::kAllReduce: return Collective::kAllReduce;
    case OpKind::kAllGather: return Collective::kAllGather;
    case OpKind::kReduceScatter: return Collective::kReduceScatter;
    case OpKind::kBroadcast: return Collective::kBroadcast;
    case OpKind::kReduce: return Collective::kReduce;
    case OpKind::kAllToAll: return Collective::kAllToAll;
    default: return std::nullopt;
  }
}

std::string_view opKindName(OpKind k) {
  if (std::optional<Collective> c = collectiveOf(k)) return collectiveName(*c);
  switch (k) {
    case OpKind::kAllToAllV: return "alltoallv";
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
    case OpKind::kBarrier: return "barrier";
    default: return "?";
  }
}

bool parseOpKind(std::string_view name, OpKind& out) {
  // Spellings of record_param_comms, nccl:* annotations, Kineto's "Collective name" and ours.
  static const std::array<std::pair<std::string_view, OpKind>, 22> kNames{{
      {"allreduce", OpKind::kAllReduce},
      {"all_reduce", OpKind::kAllReduce},
      {"allreduce_coalesced", OpKind::kAllReduce},
      {"allgather", OpKind::kAllGather},
      {"all_gather", OpKind::kAllGather},
      {"_all_gather_base", OpKind::kAllGather},
      {"all_gather_into_tensor", OpKind::kAllGather},
      {"allgather_into_tensor_coalesced", OpKind::kAllGather},
      {"reduce_scatter", OpKind::kReduceScatter},
      {"_reduce_scatter_base", OpKind::kReduceScatter},
      {"reduce_scatter_tensor", OpKind::kReduceScatter},
      {"broadcast", OpKind::kBroadcast},
      {"reduce", OpKind::kReduce},
      {"alltoall", OpKind::kAllToAll},
      {"all_to_all", OpKind::kAllToAll},
      {"alltoall_base", OpKind::kAllToAll},
      {"alltoallv", OpKind::kAllToAllV},
      {"all_to_allv", OpKind::kAllToAllV},
      {"send", OpKind::kSend},
      {"recv", OpKind::kRecv},
      {"barrier", OpKind::kBarrier},
      {"sendrecv", OpKind::kSend},
  }};
  for (const auto& [n, k] : kNames) {
    if (n == name) {
      if (n == "sendrecv") return false;  // ambiguous: no single direction to replay
      out = k;
      return true;
    }
  }
  return false;
}

bool isPointToPoint(OpKind k) { return k == OpKind::kSend || k == OpKind::kRecv; }

bool RankTrace::hasDurations() const {
  for (const auto& op : ops) {
    if (op.recordedUs >= 0) return true;
  }
  return false;
}

void traceError(const std::string& file, const std::string& where, const std::string& what) {
  throw UsageError(where.empty() ? fmt::format("trace {}: {}", file, what)
                                 : fmt::format("trace {}, {}: {}", file, where, what));
}

}  // namespace cb::replay
