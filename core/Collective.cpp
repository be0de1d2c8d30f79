#include "core/Collective.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <array>

#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Text.h"

namespace cb {
namespace {

constexpr std::array<Collective, 7> kAll{Collective::kAllReduce,     Collective::kAllGather,
                                         Collective::kReduceScatter, Collective::kBroadcast,
                                         Collective::kReduce,        Collective::kAllToAll,
                                         Collective::kSendRecv};
constexpr std::string_view kNames[] = {"allreduce", "allgather", "reduce_scatter", "broadcast",
                                       "reduce",    "alltoall",  "sendrecv"};

}  // namespace

std::string_view collectiveName(Collective c) { return kNames[static_cast<size_t>(c)]; }
std::span<const Collective> allCollectives() { return kAll; }

Collective parseCollective(std::string_view s) {
  std::string v = toLower(trim(s));
  if (v.size() > 5 && v.ends_with("_perf")) v.resize(v.size() - 5);  // all_reduce_perf
  std::string squashed;
  for (char c : v) {
    if (c != '_' && c != '-') squashed += c;
  }
  if (squashed == "bcast") squashed = "broadcast";
  if (squashed == "reducescatter") squashed = "reduce_scatter";
  for (auto c : kAll) {
    if (squashed == collectiveName(c)) return c;
  }
  throw UsageError(
      fmt::format("unknown collective '{}' (expected {} or all)", s, fmt::join(kNames, ", ")));
}

std::vector<Collective> parseCollectiveList(std::string_view s) {
  return parseEnumList<Collective>(s, kAll, parseCollective, "empty collective list");
}

bool hasReduction(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}
bool hasRoot(Collective c) { return c == Collective::kBroadcast || c == Collective::kReduce; }

size_t sendCount(const CollArgs& a, int n) {
  switch (a.coll) {
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return a.count * static_cast<size_t>(n);
    default: return a.count;
  }
}

size_t recvCount(const CollArgs& a, int n) {
  switch (a.coll) {
    case Collective::kAllGather:
    case Collective::kAllToAll: return a.count * static_cast<size_t>(n);
    default: return a.count;
  }
}

uint64_t algBytes(const CollArgs& a, int n) {
  uint64_t es = dataTypeSize(a.dtype);
  switch (a.coll) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return a.count * es * static_cast<uint64_t>(n);
    default: return a.count * es;
  }
}

double busBwFactor(Collective c, int n) {
  double dn = n;
  switch (c) {
    case Collective::kAllReduce: return 2.0 * (dn - 1) / dn;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (dn - 1) / dn;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1.0;
  }
  return 1.0;
}

size_t countForBytes(Collective c, DataType t, uint64_t bytes, int n) {
  uint64_t es = dataTypeSize(t);
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return bytes / (es * static_cast<uint64_t>(n));
    default: return bytes / es;
  }
}

bool hasInPlace(Collective c) { return c != Collective::kAllToAll && c != Collective::kSendRecv; }

size_t inPlaceSendOffset(const CollArgs& a, int rank) {
  return a.coll == Collective::kAllGather ? a.count * static_cast<size_t>(rank) : 0;
}

size_t inPlaceRecvOffset(const CollArgs& a, int rank) {
  return a.coll == Collective::kReduceScatter ? a.count * static_cast<size_t>(rank) : 0;
}

}  // namespace cb
