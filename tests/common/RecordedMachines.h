// Machines of tests/data/topologies set up as the peak-model tests use them.
#pragma once

#include <string>
#include <vector>

#include "topology/Placement.h"
#include "topology/Topology.h"

namespace cb::testing {

inline MachineTopology loadRecorded(const std::string& name) {
  return loadTopologyXml(std::string(CB_SOURCE_DIR) + "/tests/data/topologies/" + name);
}

// Two copies of the ConnectX-4 server (hosts "conan" and "conan2"), two host ranks on each, both
// nearest mlx5_0. The export records no port rate; `edr` sets 100 Gb/s InfiniBand on both.
struct TwoConnectXHosts {
  MachineTopology a, b;
  std::vector<RankPlacement> ranks;
  void edr() {
    for (auto* h : {&a, &b}) {
      h->nics[0].ports[0].rateGbps = 100;
      h->nics[0].ports[0].linkLayer = "InfiniBand";
    }
  }
};

inline TwoConnectXHosts twoConnectXHosts() {
  TwoConnectXHosts t;
  t.a = loadRecorded("32em64t-2n8c2t-pci-normalio.xml");
  t.b = t.a;
  t.b.host = "conan2";
  for (int r = 0; r < 4; ++r) {
    const auto& h = r < 2 ? t.a : t.b;
    RankPlacement p = placeThisRank(h, r, h.host, r % 2, "");
    p.nic = "mlx5_0";
    t.ranks.push_back(p);
  }
  return t;
}

}  // namespace cb::testing
