// Where every rank of a communicator runs: its host, its rank among the ranks of that host, and
// how many ranks share the host. Gathered once per communicator (one allgather of host names) and
// kept by the Team that owns the communicator, so no engine asks the hosts again per point.
#pragma once

#include <string>
#include <vector>

#include "core/Clock.h"
#include "core/Communicator.h"
#include "core/LinkClass.h"

namespace cb {

// This machine's host name (gethostname); "localhost" when it can't be read. The one wrapper:
// run records, the shm transport's host check and the store's reaping of dead runs all compare
// names from here, so they must agree on the fallback.
std::string hostName();

// The host a rank counts as in the host map and in the one-GPU-per-rank check: NCCL_HOSTID when
// it is set and not empty, as NCCL's getHostHash (src/misc/utils.cc) takes it, else hostName().
// Processes on one machine with distinct NCCL_HOSTID values are separate hosts to NCCL (it joins
// them through its network transport), so they are to collbench too: several such ranks may
// drive one GPU. Records and the store's reaping of dead runs keep hostName().
std::string hostIdentity();
// The rule, pure: `ncclHostId` is the variable's value (null when unset).
std::string hostIdentityOf(const char* ncclHostId, const std::string& machineName);

struct HostMap {
  std::vector<std::string> hostOfRank;  // per rank
  std::vector<std::string> hosts;       // distinct hosts in order of first appearance
  std::vector<int> hostIndex;           // per rank: index into hosts
  std::vector<int> localRank;           // per rank: its rank among the ranks of its host
  std::vector<int> localSize;           // per rank: the number of ranks on its host
  // n*n row-major by rank: the link class of every rank pair, from the run's topology (the run
  // session fills it, topology/Placement.h); empty when no topology was detected.
  std::vector<LinkClass> links;

  // A map from host names per rank (pure: what gatherHostMap builds after its one allgather).
  static HostMap fromHosts(std::vector<std::string> hostOfRank);
  // The map of a sub-communicator whose rank i was rank parentRanks[i] here.
  HostMap subset(const std::vector<int>& parentRanks) const;

  int size() const { return static_cast<int>(hostOfRank.size()); }
  bool oneHost() const { return hosts.size() <= 1; }
  bool sameHost(int a, int b) const { return hostIndex.at(a) == hostIndex.at(b); }
  // The node size hierarchical algorithms use when none is given: when every host holds the same
  // number of consecutive ranks, that number; otherwise (one host, or a scattered placement the
  // hierarchical schedules can't express) the whole communicator is one node.
  int ranksPerHost() const;
  // The class of the link between ranks a and b: `links` when the topology was detected, else
  // what the host map alone tells (self, cross-numa on one host: placement unknown, network).
  LinkClass linkClass(int a, int b) const;
  // "h1,h2" (distinct hosts in order).
  std::string hostList() const;
};

// Collective over comm: one allgather of host identities (hostIdentity()).
HostMap gatherHostMap(Communicator& comm, Deadline d);

}  // namespace cb
