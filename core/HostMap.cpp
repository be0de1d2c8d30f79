#include "core/HostMap.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace cb {

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

std::string hostIdentityOf(const char* ncclHostId, const std::string& machineName) {
  if (ncclHostId && *ncclHostId) return ncclHostId;
  return machineName;
}

std::string hostIdentity() { return hostIdentityOf(std::getenv("NCCL_HOSTID"), hostName()); }

HostMap HostMap::fromHosts(std::vector<std::string> hostOfRank) {
  HostMap m;
  m.hostOfRank = std::move(hostOfRank);
  const int n = m.size();
  m.hostIndex.resize(n);
  m.localRank.resize(n);
  m.localSize.resize(n);
  std::vector<int> count;
  for (int r = 0; r < n; ++r) {
    auto it = std::find(m.hosts.begin(), m.hosts.end(), m.hostOfRank[r]);
    int h = static_cast<int>(it - m.hosts.begin());
    if (it == m.hosts.end()) {
      m.hosts.push_back(m.hostOfRank[r]);
      count.push_back(0);
    }
    m.hostIndex[r] = h;
    m.localRank[r] = count[h]++;
  }
  for (int r = 0; r < n; ++r) m.localSize[r] = count[m.hostIndex[r]];
  return m;
}

HostMap HostMap::subset(const std::vector<int>& parentRanks) const {
  std::vector<std::string> hosts;
  hosts.reserve(parentRanks.size());
  for (int p : parentRanks) hosts.push_back(hostOfRank.at(p));
  HostMap m = fromHosts(std::move(hosts));
  if (!links.empty()) {
    const size_t n = parentRanks.size(), parentN = hostOfRank.size();
    m.links.resize(n * n);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j)
        m.links[i * n + j] = links.at(parentRanks[i] * parentN + parentRanks[j]);
    }
  }
  return m;
}

LinkClass HostMap::linkClass(int a, int b) const {
  const int n = size();
  if (a == b) return LinkClass::kSelf;
  if (links.size() == static_cast<size_t>(n) * n) return links.at(static_cast<size_t>(a) * n + b);
  return sameHost(a, b) ? LinkClass::kCrossNuma : LinkClass::kNetwork;
}

int HostMap::ranksPerHost() const {
  const int n = size();
  int block = 1;
  while (block < n && hostOfRank[block] == hostOfRank[0]) ++block;
  if (n == 0 || n % block != 0) return n;
  // Every block of `block` consecutive ranks is one host, and every host has exactly `block`
  // ranks (so no host has a second block: {a, b, a, b} is one node of 4, not 4 nodes of 1).
  for (int r = 0; r < n; ++r) {
    if (hostOfRank[r] != hostOfRank[r - r % block] || localSize[r] != block) return n;
  }
  return block;
}

std::string HostMap::hostList() const {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ",") + h;
  return out;
}

HostMap gatherHostMap(Communicator& comm, Deadline d) {
  return HostMap::fromHosts(comm.allgatherStrings(hostIdentity(), d));
}

}  // namespace cb
