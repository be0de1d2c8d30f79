// The topology model against recorded machines (hwloc exports in tests/data/topologies: a DGX-2,
// a server with a ConnectX HCA in v1/v2/v3 layouts, a four-node server), a fake sysfs tree and
// recorded NVML answers: devices found, the nvidia-smi matrix cells, placements and link
// classes, the preflight on healthy and degraded machines, JSON, the stored topology and the
// fingerprint explanation.
#include <gtest/gtest.h>
#include <sched.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "core/Error.h"
#include "results/Compare.h"
#include "results/FingerprintDiff.h"
#include "results/Store.h"
#include "results/TopologyHtml.h"
#include "topology/Environment.h"
#include "topology/Nvml.h"
#include "topology/Paths.h"
#include "topology/Placement.h"
#include "topology/Preflight.h"
#include "topology/Render.h"
#include "topology/Sysfs.h"
#include "topology/Topology.h"

namespace cb {
namespace {

std::string dataFile(const std::string& name) {
  return std::string(CB_SOURCE_DIR) + "/tests/data/" + name;
}

MachineTopology load(const std::string& name) {
  return loadTopologyXml(dataFile("topologies/" + name));
}

const MachineTopology& dgx2() {
  static const MachineTopology t = load("nvidiaDGX2.xml");
  return t;
}

int gpuByBus(const MachineTopology& t, const std::string& bus) { return t.gpuIndex(bus); }

TEST(TopologyXml, Dgx2DevicesAndLinks) {
  const auto& t = dgx2();
  ASSERT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(t.nvswitches.size(), 12u);
  EXPECT_EQ(t.product, "NVIDIA DGX-2H");
  EXPECT_EQ(t.gpus[0].name, "GPU0");
  EXPECT_EQ(t.gpus[0].busId, "0000:34:00.0");
  EXPECT_EQ(t.gpus[0].model, "Tesla V100-SXM3-32GB-H");
  EXPECT_EQ(t.gpus[0].uuid, "GPU-d3977428-7a30-086b-2e20-5c1eeed647c6");
  EXPECT_EQ(t.gpus[15].busId, "0000:e7:00.0");
  // Each V100 has one NVLink into each of the 6 NVSwitches of its board (hwloc: 25000 MB/s).
  for (const auto& g : t.gpus) EXPECT_EQ(activeNvlinks(t, g.busId), 6) << g.busId;
  EXPECT_NEAR(t.pci[t.gpus[0].pci].link.gbps, 15.75, 0.01);  // PCIe gen3 x16
  EXPECT_EQ(t.pci[t.gpus[0].pci].numaNode, 0);
  EXPECT_EQ(t.pci[t.gpus[8].pci].numaNode, 1);
}

TEST(TopologyXml, Dgx2MatrixLikeNvidiaSmi) {
  const auto& t = dgx2();
  // nvidia-smi topo -m on a DGX-2 prints NV6 between every pair of its 16 GPUs.
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) EXPECT_EQ(matrixCell(t, i, j), i == j ? "X" : "NV6");
  }
  // The PCIe side: two GPUs per PLX switch, two such switches under one more, under a root port.
  int g0 = t.gpus[0].pci;
  EXPECT_STREQ(pciPathName(pciPathBetween(t, g0, t.gpus[1].pci)), "PIX");
  EXPECT_STREQ(pciPathName(pciPathBetween(t, g0, t.gpus[2].pci)), "PXB");
  EXPECT_STREQ(pciPathName(pciPathBetween(t, g0, t.gpus[4].pci)), "NODE");
  EXPECT_STREQ(pciPathName(pciPathBetween(t, g0, t.gpus[8].pci)), "SYS");
  EXPECT_EQ(topSwitchOf(t, g0), "0000:2c:00.0");
  std::string m = renderMatrix(t);
  EXPECT_NE(m.find("GPU0   X     NV6"), std::string::npos) << m;
  EXPECT_NE(m.find("CPU Affinity  NUMA Affinity"), std::string::npos) << m;
  std::string tree = renderTree(t);
  EXPECT_NE(
      tree.find("GPU0 0000:34:00.0 Tesla V100-SXM3-32GB-H, 15.8 GB/s, NVLink x6 to NVSwitches"),
      std::string::npos)
      << tree;
  EXPECT_NE(tree.find("NVSwitch 0000:61:00.0 [10de:1ac2]"), std::string::npos) << tree;
  EXPECT_NE(tree.find("SwitchPort 0000:33:00.0 [10b5:9781]"), std::string::npos) << tree;
}

TEST(TopologyXml, ConnectXServerInEveryXmlLayout) {
  // The same machine exported as hwloc 3 (recorded), hwloc 2 and hwloc 1 XML (lstopo 2.9).
  auto v3 = load("32em64t-2n8c2t-pci-normalio.xml");
  auto v2 = load("32em64t-2n8c2t-pci-normalio-v2.xml");
  auto v1 = load("32em64t-2n8c2t-pci-normalio-v1.xml");
  for (const auto* t : {&v3, &v2, &v1}) {
    ASSERT_EQ(t->nics.size(), 3u);
    EXPECT_EQ(t->nics[0].name, "mlx5_0");
    EXPECT_EQ(t->nics[0].kind, "rdma");
    EXPECT_EQ(t->nics[0].busId, "0000:04:00.0");
    ASSERT_EQ(t->nics[0].netdevs.size(), 1u);
    EXPECT_EQ(t->nics[0].netdevs[0], "ib0");
    ASSERT_EQ(t->nics[0].ports.size(), 1u);
    EXPECT_EQ(t->nics[0].ports[0].state, "ACTIVE");
    EXPECT_EQ(t->nics[1].name, "eth0");
    EXPECT_EQ(t->gpus.size(), 4u);
    EXPECT_EQ(t->host, "conan");
    EXPECT_EQ(t->summary(), v3.summary());
  }
  // The K40m and the HCA sit under one root port: PIX; the M2075 on the other socket: SYS.
  int k40 = gpuByBus(v3, "0000:84:00.0");
  int ng = static_cast<int>(v3.gpus.size());
  EXPECT_EQ(matrixCell(v3, k40, ng + 0), "PIX");
  EXPECT_EQ(matrixCell(v3, gpuByBus(v3, "0000:03:00.0"), ng + 0), "SYS");
  EXPECT_NE(renderMatrix(v3).find("NIC0: mlx5_0"), std::string::npos);
}

TEST(TopologyXml, FourNodeServer) {
  auto t = load("96em64t-4n4d3ca2co-pci.xml");
  EXPECT_EQ(t.numa.size(), 4u);
  EXPECT_EQ(t.cores, 96);
  EXPECT_TRUE(t.gpus.empty());
  ASSERT_EQ(t.nics.size(), 8u);
  EXPECT_EQ(matrixCell(t, 0, 1), "PIX");  // two ports of one BCM5709
  EXPECT_EQ(matrixCell(t, 0, 2), "SYS");
  EXPECT_EQ(t.numaNodeOfCpus({0, 1}), 0);
  EXPECT_EQ(t.numaNodeOfCpus({0, 30}), -1);
  EXPECT_TRUE(checkMachine(t).empty());
}

TEST(TopologyXml, BadFilesThrowOneLine) {
  EXPECT_THROW(load("no-such-file.xml"), EnvironmentError);
  try {
    loadTopologyXmlText("<?xml version=\"1.0\"?>\n<notatopology/>\n", "x.xml");
    FAIL();
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("x.xml"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(TopologyJson, RoundTripAndRejects) {
  const auto& t = dgx2();
  auto back = topologyFromJson(topologyToJson(t));
  EXPECT_EQ(topologyToJson(back), topologyToJson(t));
  EXPECT_EQ(renderMatrix(back), renderMatrix(t));
  EXPECT_THROW(topologyFromJson("{}"), EnvironmentError);
  EXPECT_THROW(topologyFromJson("not json"), EnvironmentError);
  EXPECT_THROW(topologyFromJson(R"({"format":"collbench-topology-1"})"), EnvironmentError);
}

// The one style of the documents (format + integer version); topologies stored by earlier builds
// say "collbench-topology-1" and read the same.
TEST(TopologyModel, JsonOfTheOneStyleAndItsEarlierFormatRead) {
  const std::string doc = topologyToJson(dgx2());
  auto j = nlohmann::json::parse(doc);
  EXPECT_EQ(j["format"], "collbench-topology");
  EXPECT_EQ(j["version"], 1);
  j.erase("version");
  j["format"] = "collbench-topology-1";
  EXPECT_EQ(topologyToJson(topologyFromJson(j.dump())), doc);
  j["format"] = "collbench-topology";
  j["version"] = 2;
  EXPECT_THROW(topologyFromJson(j.dump()), EnvironmentError);
}

TEST(TopologySummary, HashesWhatDecidesPerformance) {
  auto healthy = dgx2();
  auto renamed = healthy;
  renamed.host = "another-dgx2";
  renamed.gpus[0].uuid = "GPU-other";
  EXPECT_EQ(renamed.summaryHash(), healthy.summaryHash());
  EXPECT_NE(load("nvidiaDGX2-gpu3-missing.xml").summaryHash(), healthy.summaryHash());
  EXPECT_NE(load("nvidiaDGX2-link-x8.xml").summaryHash(), healthy.summaryHash());
}

TEST(Preflight, HealthyDgx2HasNoFinding) {
  auto f = checkMachine(dgx2());
  for (const auto& x : f) ADD_FAILURE() << x.line();
  EXPECT_TRUE(checkHosts({dgx2(), dgx2()}).empty());
}

TEST(Preflight, LoweredLinkSpeedNamesTheGpu) {
  auto f = checkMachine(load("nvidiaDGX2-link-x8.xml"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].device, "GPU2 0000:39:00.0 (Tesla V100-SXM3-32GB-H)");
  EXPECT_EQ(f[0].what, "PCIe link");
  EXPECT_EQ(f[0].seen, "7.9 GB/s");
  EXPECT_EQ(f[0].expected, "15.8 GB/s like its 15 peers");
}

TEST(Preflight, MissingGpuNamesItsSwitchAndTheHost) {
  auto missing = load("nvidiaDGX2-gpu3-missing.xml");
  missing.host = "dgx2-b";
  auto f = checkMachine(missing);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].device, "PCIe switch 0000:37:00.0");  // GPU2 and GPU3's switch
  EXPECT_EQ(f[0].line(),
            "dgx2-b: PCIe switch 0000:37:00.0: GPUs below it: expected 2 like its peers, seen 1");
  auto a = dgx2();
  a.host = "dgx2-a";
  auto hosts = checkHosts({a, missing});
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].line(), "dgx2-b: host: GPU count: expected 16, seen 15");
  auto other = checkHosts({a, load("32em64t-2n8c2t-pci-normalio.xml")});
  EXPECT_EQ(other.size(), 2u);  // count and model
}

TEST(Sysfs, ParsesValues) {
  EXPECT_EQ(pcieGenOfSpeed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcieGenOfSpeed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcieGenOfSpeed("2.5 GT/s"), 1);
  EXPECT_EQ(pcieGenOfSpeed("Unknown"), 0);
  EXPECT_DOUBLE_EQ(parseIbRate("100 Gb/sec (4X EDR)"), 100);
  EXPECT_DOUBLE_EQ(parseIbRate("400 Gb/sec (4X NDR)"), 400);
  EXPECT_DOUBLE_EQ(parseIbRate("garbage"), 0);
  EXPECT_EQ(parseIbState("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(parseIbState("1: DOWN"), "DOWN");
  EXPECT_EQ(normalizeBusId("00000000:34:00.0"), "0000:34:00.0");
  EXPECT_EQ(normalizeBusId("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(parseCpuList("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(formatCpuList({8, 0, 1, 2, 3, 11, 10}), "0-3,8,10-11");
}

TEST(Sysfs, FakeTreeNicsAndLinks) {
  std::string root = dataFile("sysfs-gpu-server");
  auto nics = readSysfsNics(root);
  ASSERT_EQ(nics.size(), 4u);  // mlx5_0..2, eth0; ib0 belongs to mlx5_0; lo, docker0 virtual
  EXPECT_EQ(nics[0].name, "mlx5_0");
  EXPECT_EQ(nics[0].busId, "0000:35:00.0");
  EXPECT_EQ(nics[0].netdevs, std::vector<std::string>{"ib0"});
  ASSERT_EQ(nics[0].ports.size(), 1u);
  EXPECT_EQ(nics[0].ports[0].state, "ACTIVE");
  EXPECT_DOUBLE_EQ(nics[0].ports[0].rateGbps, 100);
  EXPECT_EQ(nics[0].ports[0].linkLayer, "InfiniBand");
  EXPECT_EQ(nics[3].name, "eth0");
  EXPECT_EQ(nics[3].kind, "ethernet");
  EXPECT_DOUBLE_EQ(nics[3].ports[0].rateGbps, 10);
  auto link = readSysfsPcieLink(root, "0000:39:00.0");
  ASSERT_TRUE(link);
  EXPECT_EQ(link->gen, 3);
  EXPECT_EQ(link->width, 8);
  EXPECT_EQ(link->maxWidth, 16);
  EXPECT_FALSE(readSysfsPcieLink(root, "0000:00:00.0"));

  // The DGX-2 export completed by this tree: a link trained at x8, a port down, a slow port.
  auto t = dgx2();
  addSysfsFacts(t, root);
  std::vector<std::string> lines;
  for (const auto& f : checkMachine(t)) lines.push_back(f.line());
  EXPECT_EQ(lines,
            (std::vector<std::string>{
                "GPU2 0000:39:00.0 (Tesla V100-SXM3-32GB-H): PCIe link: expected gen3 x16, "
                "seen gen3 x8",
                "NIC1 mlx5_1 port 1: port state: expected ACTIVE, seen DOWN",
                "NIC2 mlx5_2 port 1: rate: expected 100 Gb/s like its peers, seen 56 Gb/s"}));
}

// Recorded NVML answers: GPU0 of a DGX-2 with 6 links into NVSwitches, two of them down.
NvmlReturn fakeInit() { return 0; }
NvmlReturn fakeShutdown() { return 0; }
NvmlReturn fakeDriver(char* buf, unsigned n) {
  std::snprintf(buf, n, "%s", "535.129.03");
  return 0;
}
NvmlReturn fakeCount(unsigned* n) {
  *n = 1;
  return 0;
}
NvmlReturn fakeByIndex(unsigned, NvmlDevice* d) {
  *d = reinterpret_cast<NvmlDevice>(1);
  return 0;
}
NvmlReturn fakeName(NvmlDevice, char* buf, unsigned n) {
  std::snprintf(buf, n, "%s", "Tesla V100-SXM3-32GB-H");
  return 0;
}
NvmlReturn fakePci(NvmlDevice, NvmlPciInfo* p) {
  std::snprintf(p->busId, sizeof p->busId, "%s", "00000000:34:00.0");
  return 0;
}
NvmlReturn fakeGen(NvmlDevice, unsigned* v) {
  *v = 3;
  return 0;
}
NvmlReturn fakeWidth(NvmlDevice, unsigned* v) {
  *v = 16;
  return 0;
}
NvmlReturn fakeLinkState(NvmlDevice, unsigned link, int* on) {
  if (link >= 6) return 2;  // NVML_ERROR_INVALID_ARGUMENT past the last link
  *on = link < 4 ? 1 : 0;
  return 0;
}
NvmlReturn fakeLinkVersion(NvmlDevice, unsigned, unsigned* v) {
  *v = 2;
  return 0;
}
NvmlReturn fakeRemotePci(NvmlDevice, unsigned link, NvmlPciInfo* p) {
  static const char* kSwitches[] = {"00000000:61:00.0", "00000000:62:00.0", "00000000:63:00.0",
                                    "00000000:65:00.0", "00000000:66:00.0", "00000000:67:00.0"};
  std::snprintf(p->busId, sizeof p->busId, "%s", kSwitches[link]);
  return 0;
}
NvmlReturn fakeRemoteType(NvmlDevice, unsigned, int* type) {
  *type = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH
  return 0;
}

NvmlApi recordedNvml() {
  NvmlApi api;
  api.init = fakeInit;
  api.shutdown = fakeShutdown;
  api.driverVersion = fakeDriver;
  api.deviceCount = fakeCount;
  api.deviceByIndex = fakeByIndex;
  api.name = fakeName;
  api.pciInfo = fakePci;
  api.currPcieGen = api.maxPcieGen = fakeGen;
  api.currPcieWidth = api.maxPcieWidth = fakeWidth;
  api.nvlinkState = fakeLinkState;
  api.nvlinkVersion = fakeLinkVersion;
  api.nvlinkRemotePci = fakeRemotePci;
  api.nvlinkRemoteType = fakeRemoteType;
  return api;
}

TEST(Nvml, RecordedAnswersBecomeLinks) {
  NvmlApi api = recordedNvml();
  NvmlSnapshot s = readNvml(api);
  ASSERT_TRUE(s.loaded);
  EXPECT_EQ(s.driverVersion, "535.129.03");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].busId, "0000:34:00.0");
  ASSERT_EQ(s.gpus[0].nvlinks.size(), 6u);
  EXPECT_EQ(s.gpus[0].nvlinks[5].remoteBusId, "0000:67:00.0");
  EXPECT_FALSE(s.gpus[0].nvlinks[5].active);

  auto t = dgx2();
  applyNvml(t, s);
  EXPECT_EQ(t.driverVersion, "535.129.03");
  EXPECT_EQ(activeNvlinks(t, "0000:34:00.0"), 4);
  EXPECT_EQ(t.pci[t.gpus[0].pci].link.gen, 3);
  auto f = checkMachine(t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].line(),
            "GPU0 0000:34:00.0 (Tesla V100-SXM3-32GB-H): NVLinks: expected 6 active, seen 4 "
            "active, 2 down");
  // Nothing else about the fabric changed: GPU0 still reaches every GPU through the switches.
  EXPECT_EQ(matrixCell(t, 0, 9), "NV4");
}

// NVML answers nvmlNvlinkVersion_t values (nvml.h), not generations: an H100 says 6
// (NVML_NVLINK_VERSION_4_0), an A100 4 (3_0). Read as generations they gave an H100 node no bound
// ("nvlink6" is not in the peak table) and an A100 node NVLink4's.
TEST(Nvml, LinkVersionIsNvmlsEnumNotTheGeneration) {
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(0), 0);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(2), 2);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(3), 2);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(4), 3);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(5), 3);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(6), 4);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(7), 5);
  EXPECT_EQ(nvlinkGenerationOfNvmlVersion(99), 0);
  // The architecture decides where the peak table knows the model (H100s answering 5_0).
  EXPECT_EQ(nvlinkGenerationFor("NVIDIA H100 80GB HBM3", 5), 4);
  EXPECT_EQ(nvlinkGenerationFor("NVIDIA A100-SXM4-80GB", 3), 3);
  EXPECT_EQ(nvlinkGenerationFor("Some Future GPU", 6), 6);
}

unsigned gFakeNvmlVersion = 6;
const char* gFakeGpuName = "NVIDIA H100 80GB HBM3";
NvmlReturn fakeLinkVersionOf(NvmlDevice, unsigned, unsigned* v) {
  *v = gFakeNvmlVersion;
  return 0;
}
NvmlReturn fakeNameOf(NvmlDevice, char* buf, unsigned n) {
  std::snprintf(buf, n, "%s", gFakeGpuName);
  return 0;
}

TEST(Nvml, RecordedNvmlVersionGivesTheGenerationsBound) {
  NvmlApi api = recordedNvml();
  api.name = fakeNameOf;
  api.nvlinkVersion = fakeLinkVersionOf;
  struct Case {
    const char* name;
    unsigned nvml;
    int generation;
  };
  for (Case c : {Case{"NVIDIA H100 80GB HBM3", 6, 4}, Case{"NVIDIA H100 80GB HBM3", 7, 4},
                 Case{"NVIDIA A100-SXM4-80GB", 4, 3}, Case{"Tesla V100-SXM3-32GB-H", 2, 2}}) {
    gFakeGpuName = c.name;
    gFakeNvmlVersion = c.nvml;
    NvmlSnapshot s = readNvml(api);
    ASSERT_EQ(s.gpus.size(), 1u);
    auto t = dgx2();
    applyNvml(t, s);
    int seen = 0;
    for (const auto& e : t.nvlinks) {
      if (e.from == "0000:34:00.0" && e.links > 0) seen = std::max(seen, e.version);
    }
    EXPECT_EQ(seen, c.generation) << c.name << " NVML " << c.nvml;
  }
}

// --bind auto for GPU ranks: each rank near its GPU (the PCI device's local CPUs), not core r.
// On the recorded DGX-2 the GPUs hang from both packages, so core r would put some ranks on the
// package far from their GPU.
TEST(Placement, GpuRanksBindToTheirGpusLocalCpus) {
  const auto& t = dgx2();
  std::vector<int> all;
  for (int c = 0; c < 64; ++c) all.push_back(c);
  std::set<std::vector<int>> distinct;
  for (const auto& g : t.gpus) {
    auto near = cpusNearGpu(t, g.busId, all);
    ASSERT_FALSE(near.empty()) << g.busId;
    EXPECT_EQ(near, parseCpuList(t.pci[g.pci].cpus)) << g.busId;
    distinct.insert(near);
    // The runtime's bus ids come in upper case (cudaDeviceGetPCIBusId).
    std::string upper = g.busId;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    EXPECT_EQ(cpusNearGpu(t, upper, all), near);
    // Only the CPUs the thread may use.
    EXPECT_TRUE(cpusNearGpu(t, g.busId, {}).empty());
  }
  EXPECT_EQ(distinct.size(), 2u);                            // two packages, GPUs under each
  EXPECT_TRUE(cpusNearGpu(t, "0000:ff:00.0", all).empty());  // a GPU the topology lacks
}

TEST(Nvml, AbsentLibraryIsANoteNotAnError) {
  NvmlSnapshot s = readNvml();
  if (!s.loaded) {
    EXPECT_EQ(s.note.rfind("NVML not available", 0), 0u) << s.note;
    EXPECT_NE(s.note.find("libnvidia-ml.so.1"), std::string::npos) << s.note;
    EXPECT_EQ(s.note.find('\n'), std::string::npos);
  }
  NvmlApi none;
  EXPECT_FALSE(readNvml(none).loaded);
}

TEST(Placement, GpuRanksOnADgx2) {
  const auto& t = dgx2();
  auto p0 = placeThisRank(t, 0, "dgx2", 0, "0000:34:00.0");
  auto p1 = placeThisRank(t, 1, "dgx2", 1, "0000:36:00.0");
  auto p8 = placeThisRank(t, 8, "dgx2", 8, "00000000:B7:00.0");
  EXPECT_EQ(p0.gpuModel, "Tesla V100-SXM3-32GB-H");
  EXPECT_EQ(p0.gpuNumaNode, 0);
  EXPECT_EQ(p8.gpuNumaNode, 1);
  EXPECT_EQ(p8.gpuBusId, "0000:b7:00.0");
  EXPECT_EQ(p0.pcieSwitch, "0000:2c:00.0");
  EXPECT_FALSE(p0.nvlinkFabric.empty());
  EXPECT_EQ(classifyPair(p0, p8), LinkClass::kNvlink);
  // Without NVLinks the same GPUs would be judged by the PCIe tree.
  p0.nvlinkFabric = p1.nvlinkFabric = p8.nvlinkFabric = "";
  EXPECT_EQ(classifyPair(p0, p1), LinkClass::kPcieSwitch);
  EXPECT_EQ(classifyPair(p0, p8), LinkClass::kCrossNuma);
  auto back = placementFromJson(placementToJson(p8));
  EXPECT_EQ(placementToJson(back), placementToJson(p8));
}

TEST(Placement, BoundAcrossNumaFromItsGpu) {
  RankPlacement p;
  p.rank = 3;
  p.host = "dgx2";
  p.numaNode = 1;
  p.gpuBusId = "0000:34:00.0";
  p.gpuNumaNode = 0;
  auto f = checkPlacements({p});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].line(),
            "dgx2: rank 3 (GPU 0000:34:00.0): NUMA binding: expected node 0 (the GPU's), seen "
            "node 1");
  auto d = checkFingerprints({"a", "a", "b"}, {"x", "x", "y"});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line(), "b: rank 2: fingerprint: expected x (rank 0's), seen y");
}

TEST(Placement, BindThisThreadFollowsThePolicy) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  auto cpus = bindThisThread(BindPolicy::kCore, 0);
  ASSERT_FALSE(cpus.empty());
  const auto& live = liveTopology();
  EXPECT_GE(live.coreGroupOfCpus(cpus), 0);
  auto numa = bindThisThread(BindPolicy::kNuma, 0);
  EXPECT_GE(numa.size(), cpus.size());
  EXPECT_GE(live.numaNodeOfCpus(numa), 0);
  EXPECT_EQ(parseBindPolicy("numa"), BindPolicy::kNuma);
  EXPECT_FALSE(parseBindPolicy("socket"));
  sched_setaffinity(0, sizeof before, &before);  // the tests after this one run unbound
}

TEST(Placement, AutoBindsToCoresWhenTheRanksFit) {
  // As mpirun: bound to cores when every rank gets its own, unbound when oversubscribed.
  EXPECT_EQ(parseBindPolicy("auto"), BindPolicy::kAuto);
  const int cores = liveTopology().cores;
  ASSERT_GE(cores, 1);
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  const int usable = std::min(cores, CPU_COUNT(&mask));
  // A mask narrower than the machine (taskset, a launcher) is the user's placement: unbound.
  const BindPolicy whole =
      CPU_COUNT(&mask) < liveTopology().pus ? BindPolicy::kNone : BindPolicy::kCore;
  EXPECT_EQ(resolveBindPolicy(BindPolicy::kAuto, 1), whole);
  EXPECT_EQ(resolveBindPolicy(BindPolicy::kAuto, usable), whole);
  EXPECT_EQ(resolveBindPolicy(BindPolicy::kAuto, usable + 1), BindPolicy::kNone);
  if (liveTopology().pus > 1) {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &mask)) {
        CPU_SET(c, &one);
        break;
      }
    }
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_EQ(resolveBindPolicy(BindPolicy::kAuto, 1), BindPolicy::kNone);
    ASSERT_EQ(sched_setaffinity(0, sizeof mask, &mask), 0);
  }
  EXPECT_EQ(resolveBindPolicy(BindPolicy::kNone, 1), BindPolicy::kNone);
  EXPECT_EQ(resolveBindPolicy(BindPolicy::kNuma, 64), BindPolicy::kNuma);
  EXPECT_THROW(bindThisThread(BindPolicy::kAuto, 0), InternalError);
}

TEST(LiveTopology, ThisMachinePrints) {
  const auto& t = liveTopology();
  EXPECT_GE(t.pus, 1);
  EXPECT_GE(t.numa.size(), 1u);
  EXPECT_FALSE(t.host.empty());
  EXPECT_NE(renderTree(t).find("Machine"), std::string::npos);
  EXPECT_FALSE(renderMatrix(t).empty());
  EXPECT_EQ(topologyToJson(topologyFromJson(topologyToJson(t))), topologyToJson(t));
}

TEST(FingerprintDiff, NamesTheParts) {
  std::string a = R"({"hash":"1","comparable":{"gpu_model":"Tesla V100","ranks_per_host":"8",
                     "nccl":"2.28.9","cpu":"x"},"informative":{}})";
  std::string b = R"({"hash":"2","comparable":{"gpu_model":"NVIDIA A100","ranks_per_host":"4",
                     "nccl":"2.28.9","cpu":"x","extra":"1"},"informative":{}})";
  EXPECT_EQ(fingerprintDifference(a, b),
            "extra: - vs 1; gpu_model: Tesla V100 vs NVIDIA A100; ranks_per_host: 8 vs 4");
  EXPECT_EQ(fingerprintDifference(a, a), "");
  EXPECT_EQ(fingerprintDifference(a, "{}"), "");
}

std::string environment(const std::string& gpu, const std::string& ranksPerHost,
                        const std::string& nccl) {
  Fingerprint f;
  f.comparable["gpu_model"] = gpu;
  f.comparable["ranks_per_host"] = ranksPerHost;
  f.comparable["nccl"] = nccl;
  f.comparable["cpu"] = "AMD EPYC";
  return f.toJson();
}

TEST(FingerprintDiff, GateRefusesAndNamesTheDifference) {
  auto side = [](int64_t id, const std::string& env) {
    RunSet s;
    RunRecord r;
    r.id = id;
    r.status = RunStatus::kOk;
    r.environmentJson = env;
    r.fingerprint = nlohmann::json::parse(env)["hash"];
    s.runs.push_back(r);
    return s;
  };
  std::string base = environment("Tesla V100-SXM3-32GB-H", "8", "2.28.9");
  struct Case {
    std::string env, named;
  } cases[] = {
      {environment("NVIDIA A100-SXM4-80GB", "8", "2.28.9"),
       "gpu_model: Tesla V100-SXM3-32GB-H vs NVIDIA A100-SXM4-80GB"},
      {environment("Tesla V100-SXM3-32GB-H", "4", "2.28.9"), "ranks_per_host: 8 vs 4"},
      {environment("Tesla V100-SXM3-32GB-H", "8", "2.27.3"), "nccl: 2.28.9 vs 2.27.3"},
  };
  for (const auto& c : cases) {
    Comparison cmp = compareRuns(side(1, base), side(2, c.env), CompareOptions{});
    EXPECT_TRUE(cmp.environmentDiffers);
    EXPECT_NE(cmp.environmentNote.find(c.named), std::string::npos) << cmp.environmentNote;
  }
  Comparison same = compareRuns(side(1, base), side(2, base), CompareOptions{});
  EXPECT_FALSE(same.environmentDiffers);
}

TEST(StoredTopology, RenderedForShowAndHtml) {
  RunTopology rt;
  rt.hosts.push_back(dgx2());
  rt.hosts[0].host = "dgx<2>";
  RankPlacement p = placeThisRank(dgx2(), 0, "dgx<2>", 0, "0000:34:00.0");
  RankPlacement q = placeThisRank(dgx2(), 1, "dgx<2>", 1, "0000:b7:00.0");
  rt.placements = {p, q};
  rt.links = classifyAll(rt.placements);
  rt.findings.push_back({"dgx<2>", "GPU2", "PCIe link", "a", "b"});
  std::string json = rt.toJson();
  std::string text = renderRunTopology(json, "# ");
  EXPECT_NE(text.find("# host dgx<2>: cpu=Intel"), std::string::npos) << text;
  EXPECT_NE(text.find("# GPU0   X     NV6"), std::string::npos) << text;
  EXPECT_NE(text.find("# rank 1 on dgx<2> (local 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0000:b7:00.0 Tesla V100-SXM3-32GB-H"), std::string::npos) << text;
  EXPECT_NE(text.find("# rank pairs by link class: 1 nvlink"), std::string::npos) << text;
  EXPECT_NE(text.find("# preflight: dgx<2>: GPU2: PCIe link: expected a, seen b"),
            std::string::npos)
      << text;
  std::string html = topologyHtml(json);
  EXPECT_NE(html.find("dgx&lt;2&gt;"), std::string::npos);
  EXPECT_EQ(html.find("dgx<2>"), std::string::npos);
  EXPECT_NE(html.find("NV6"), std::string::npos);
  EXPECT_EQ(topologyHtml(""), "");
  EXPECT_EQ(topologyHtml("garbage"), "");
  EXPECT_THROW(renderRunTopology("{}", ""), EnvironmentError);
}

TEST(StoredTopology, KeptWithTheRun) {
  std::string path = testing::TempDir() + "cb_topology_store.db";
  std::filesystem::remove(path);
  auto store = Store::open(path);
  RunRecord r;
  r.label = "t";
  r.topologyJson = R"({"hosts":[]})";
  int64_t id = store.beginRun(r);
  RunRecord plain;
  int64_t id2 = store.beginRun(plain);
  EXPECT_EQ(store.runTopology(id), R"({"hosts":[]})");
  EXPECT_EQ(store.runTopology(id2), "");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cb
