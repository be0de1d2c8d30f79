// Host description from recorded hwloc XML topologies (tests/data/topologies; expected values
// read off the files themselves), the environment filter and the fingerprint hash.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/Error.h"
#include "topology/Environment.h"

namespace {

std::string topologyFile(const std::string& name) {
  return std::string(CB_SOURCE_DIR) + "/tests/data/topologies/" + name;
}

// What an export says of the machine's size: cores, PUs, NUMA nodes and GPUs.
void expectCounts(const cb::HostInfo& h, int cores, int pus, int numa, int gpus) {
  EXPECT_EQ(h.cores, cores) << "cores";
  EXPECT_EQ(h.pus, pus) << "PUs";
  EXPECT_EQ(h.numaNodes, numa) << "NUMA nodes";
  EXPECT_EQ(h.gpuCount, gpus) << "GPUs";
}

TEST(HostInfoXml, NvidiaDgx2) {
  auto h = cb::readHostInfoFromXml(topologyFile("nvidiaDGX2.xml"));
  EXPECT_EQ(h.cpuModel, "Intel(R) Xeon(R) Platinum 8174 CPU @ 3.10GHz");
  // The export is restricted to 2 cores per package; 16 NVML OS devices, one per V100.
  expectCounts(h, 4, 4, 2, 16);
  EXPECT_EQ(h.gpuModels, "Tesla V100-SXM3-32GB-H");
  EXPECT_EQ(h.hostname, "");  // the file records none
}

TEST(HostInfoXml, TwoSocketServerWithHyperThreadsAndTwoGpus) {
  auto h = cb::readHostInfoFromXml(topologyFile("32em64t-2n8c2t-pci-normalio.xml"));
  EXPECT_EQ(h.cpuModel, "Intel(R) Xeon(R) CPU E5-2650 0 @ 2.00GHz");
  // Two NVIDIA 3D controllers without an OS device (Tesla M2075), a CUDA device (cuda0) and an
  // OpenCL device (opencl0d1) on two functions of one PCI device; in bus order.
  expectCounts(h, 16, 32, 2, 4);
  EXPECT_EQ(h.gpuModels,
            "Tesla M2075 Dual-Slot Computing Processor Module, Tesla K40m, AMD Radeon R9 200 / HD "
            "7900 Series");
  // Machine-wide attributes stored after the root object (hwloc 3 layout).
  EXPECT_EQ(h.hostname, "conan");
  EXPECT_EQ(h.kernel, "3.2.0-4-amd64");
}

TEST(HostInfoXml, FileWithoutCpuModel) {
  auto h = cb::readHostInfoFromXml(topologyFile("96em64t-4n4d3ca2co-pci.xml"));
  EXPECT_EQ(h.cpuModel, "");
  expectCounts(h, 96, 96, 4, 0);
  EXPECT_EQ(h.hostname, "bertha");
  expectCounts(cb::readHostInfoFromXml(topologyFile("16intel64-manyVFs.xml")), 16, 16, 2, 0);
}

TEST(HostInfoXml, MissingOrBadFileThrows) {
  EXPECT_THROW(cb::readHostInfoFromXml(topologyFile("no-such-file.xml")), cb::EnvironmentError);
  std::string bad = testing::TempDir() + "cb_bad_topology.xml";
  std::ofstream(bad) << "<?xml version=\"1.0\"?>\n<notatopology>\n";
  EXPECT_THROW(cb::readHostInfoFromXml(bad), cb::EnvironmentError);
  std::ofstream(bad, std::ios::trunc) << "this is not xml at all";
  EXPECT_THROW(cb::readHostInfoFromXml(bad), cb::EnvironmentError);
}

TEST(HostInfo, ThisHost) {
  auto h = cb::readHostInfo();
  EXPECT_GE(h.cores, 1);
  EXPECT_GE(h.pus, h.cores);
  EXPECT_GE(h.numaNodes, 1);
  EXPECT_FALSE(h.kernel.empty());
  EXPECT_FALSE(h.hostname.empty());
}

TEST(Environment, WhichVariablesCount) {
  for (const char* yes :
       {"NCCL_ALGO", "NCCL_PROTO", "NCCL_IB_HCA", "UCX_TLS", "UCX_NET_DEVICES", "OMPI_MCA_btl",
        "OMPI_MCA_pml", "OMPI_MCA_btl_vader_single_copy_mechanism",
        "OMPI_MCA_rmaps_base_oversubscribe", "CUDA_VISIBLE_DEVICES"}) {
    EXPECT_TRUE(cb::isRelevantEnvironmentVariable(yes)) << yes;
  }
  // Per-rank or per-launch values set by mpirun (seen under Open MPI 4.1 here).
  for (const char* no : {"OMPI_COMM_WORLD_RANK",
                         "OMPI_COMM_WORLD_LOCAL_RANK",
                         "OMPI_COMM_WORLD_SIZE",
                         "OMPI_MCA_orte_hnp_uri",
                         "OMPI_MCA_orte_precondition_transports",
                         "OMPI_MCA_ess_base_vpid",
                         "OMPI_MCA_ess_base_jobid",
                         "OMPI_MCA_pmix",
                         "OMPI_FILE_LOCATION",
                         "OMPI_ARGV",
                         "OMPI_COMMAND",
                         "OMPI_MCA_initial_wdir",
                         "OMPI_UNIVERSE_SIZE",
                         "NCCL_COMM_ID",
                         "NCCL_HOSTID",  // the host's identity, per rank under gpu-mpirun.sh
                         "PATH",
                         "HOME",
                         "PMIX_RANK",
                         "CUDA_HOME",
                         "NCCL",
                         "UCX"}) {
    EXPECT_FALSE(cb::isRelevantEnvironmentVariable(no)) << no;
  }
}

TEST(Environment, ReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("NCCL_CB_UNIT_TEST", "42", 1), 0);
  ASSERT_EQ(setenv("OMPI_COMM_WORLD_RANK", "3", 1), 0);
  auto env = cb::relevantEnvironmentVariables();
  EXPECT_EQ(env["NCCL_CB_UNIT_TEST"], "42");
  EXPECT_EQ(env.count("OMPI_COMM_WORLD_RANK"), 0u);
  EXPECT_EQ(env.count("PATH"), 0u);
  unsetenv("NCCL_CB_UNIT_TEST");
  unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(cb::relevantEnvironmentVariables().count("NCCL_CB_UNIT_TEST"), 0u);
}

cb::Fingerprint sampleFingerprint() {
  cb::Fingerprint f;
  f.comparable["collbench"] = "0.1.0";
  f.comparable["cpu"] = "Intel(R) Xeon(R) Platinum 8174 CPU @ 3.10GHz";
  f.comparable["world_size"] = "16";
  f.comparable["env:NCCL_ALGO"] = "Ring";
  f.informative["hosts"] = "a,b";
  return f;
}

TEST(Fingerprint, HashIsStable) {
  auto a = sampleFingerprint();
  auto b = sampleFingerprint();
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash().size(), 16u);
  EXPECT_EQ(a.hash().find_first_not_of("0123456789abcdef"), std::string::npos);
  // Informative fields are not hashed.
  b.informative["hosts"] = "c,d";
  b.informative["kernel"] = "6.1";
  EXPECT_EQ(a.hash(), b.hash());
  // Insertion order does not matter (the map is sorted).
  cb::Fingerprint c;
  c.comparable["env:NCCL_ALGO"] = "Ring";
  c.comparable["world_size"] = "16";
  c.comparable["cpu"] = "Intel(R) Xeon(R) Platinum 8174 CPU @ 3.10GHz";
  c.comparable["collbench"] = "0.1.0";
  EXPECT_EQ(a.hash(), c.hash());
}

TEST(Fingerprint, KnownDigest) {
  // FNV-1a 64 of "" is the offset basis; of "1:a1:b" (one entry a=b) computed by hand below.
  cb::Fingerprint empty;
  EXPECT_EQ(empty.hash(), "cbf29ce484222325");
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : std::string("1:a1:b")) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  cb::Fingerprint one;
  one.comparable["a"] = "b";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  EXPECT_EQ(one.hash(), hex);
}

TEST(Fingerprint, AnyChangedValueChangesTheHash) {
  auto a = sampleFingerprint();
  auto b = sampleFingerprint();
  b.comparable["world_size"] = "8";
  EXPECT_NE(a.hash(), b.hash());
  auto c = sampleFingerprint();
  c.comparable["env:NCCL_PROTO"] = "LL";
  EXPECT_NE(a.hash(), c.hash());
  auto d = sampleFingerprint();
  d.comparable.erase("env:NCCL_ALGO");
  EXPECT_NE(a.hash(), d.hash());
  // Moving characters between key and value must not collide.
  cb::Fingerprint e, f;
  e.comparable["ab"] = "c";
  f.comparable["a"] = "bc";
  EXPECT_NE(e.hash(), f.hash());
}

TEST(Fingerprint, JsonCarriesBothPartsAndTheHash) {
  auto a = sampleFingerprint();
  auto j = nlohmann::json::parse(a.toJson());
  EXPECT_EQ(j["hash"], a.hash());
  EXPECT_EQ(j["comparable"]["world_size"], "16");
  EXPECT_EQ(j["comparable"]["env:NCCL_ALGO"], "Ring");
  EXPECT_EQ(j["informative"]["hosts"], "a,b");
  EXPECT_EQ(j["comparable"].size(), a.comparable.size());
}

}  // namespace
