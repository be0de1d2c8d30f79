#include "session/Fingerprint.h"

#include <string>

namespace cb {

Fingerprint buildFingerprint(const RunRecord& r, const HostMap& hosts, const HostInfo& hi) {
  Fingerprint fp;
  fp.comparable["collbench"] = r.collbenchVersion;
  fp.comparable["compiler"] = compilerDescription();
  fp.comparable["build_type"] = buildType();
  fp.comparable["mpi"] = r.mpiVersion;
  fp.comparable["ucx"] = r.ucxVersion;
  fp.comparable["cuda"] = r.cudaVersion;
  fp.comparable["nccl"] = r.ncclVersion;
  fp.comparable["cpu"] = hi.cpuModel;
  fp.comparable["world_kind"] = r.worldKind;
  fp.comparable["world_size"] = std::to_string(r.worldSize);
  fp.comparable["hosts_count"] = std::to_string(hosts.hosts.size());
  for (const auto& [k, val] : relevantEnvironmentVariables()) fp.comparable["env:" + k] = val;
  fp.informative["hosts"] = hosts.hostList();
  fp.informative["kernel"] = hi.kernel;
  fp.informative["cores"] = std::to_string(hi.cores);
  fp.informative["numa_nodes"] = std::to_string(hi.numaNodes);
  return fp;
}

void addTopology(Fingerprint& fp, const RunTopology& topology) {
  for (const auto& [k, val] : topology.fingerprint) fp.comparable[k] = val;
}

}  // namespace cb
