// Several NCCL ranks on one machine (issue 45), on the host: NCCL_HOSTID names the host as NCCL's
// getHostHash takes it, the run header says when ranks share a GPU, and host memory is not
// charged for the buffers that live on the GPUs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/MemoryFit.h"
#include "collectives/Registry.h"
#include "core/Error.h"
#include "core/HostMap.h"
#include "session/RunSession.h"

namespace cb {
namespace {

TEST(MultiRankHost, NcclHostIdIsTheHostsIdentityWhenSet) {
  EXPECT_EQ(hostIdentityOf(nullptr, "node17"), "node17");
  EXPECT_EQ(hostIdentityOf("", "node17"), "node17");
  EXPECT_EQ(hostIdentityOf("fake-host-1", "node17"), "fake-host-1");
  // Four processes on one machine, each with its own NCCL_HOSTID: four hosts of one rank each,
  // so the one-GPU-per-host check lets each drive device 0.
  HostMap m = HostMap::fromHosts({hostIdentityOf("h0", "gpu1"), hostIdentityOf("h1", "gpu1"),
                                  hostIdentityOf("h2", "gpu1"), hostIdentityOf("h3", "gpu1")});
  EXPECT_EQ(m.hosts.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(m.localRank[r], 0);
    EXPECT_EQ(m.localSize[r], 1);
  }
}

TEST(MultiRankHost, TheHeaderSaysWhenRanksShareAGpu) {
  EXPECT_EQ(sharedGpuLine({"n1 0000:19:00.0", "n1 0000:3b:00.0"}), "");
  EXPECT_EQ(sharedGpuLine({"n1 ", "n1 "}), "");  // no GPU: nothing shared
  const std::string line =
      sharedGpuLine({"n1 0000:19:00.0", "n1 0000:19:00.0", "n1 0000:19:00.0", "n1 0000:19:00.0"});
  EXPECT_NE(line.find("# gpus  : ranks 0,1,2,3 share GPU 0000:19:00.0 on n1"), std::string::npos)
      << line;
  EXPECT_NE(line.find("they are not a node's"), std::string::npos) << line;
  // The same bus id on two machines is two GPUs.
  EXPECT_EQ(sharedGpuLine({"n1 0000:19:00.0", "n2 0000:19:00.0"}), "");
}

// A registry with one GPU variant and one host variant of allreduce, as an 8-GPU node has them.
Registry nodeRegistry() {
  Registry reg;
  VariantInfo nccl;
  nccl.coll = Collective::kAllReduce;
  nccl.name = "nccl";
  nccl.backend = "nccl";
  nccl.memory = MemoryKind::kDevice;
  reg.add(nccl);
  VariantInfo ring = nccl;
  ring.name = "ring";
  ring.backend = "hand";
  ring.memory = MemoryKind::kHost;
  reg.add(ring);
  return reg;
}

TEST(MultiRankHost, DeviceBuffersAreCheckedAgainstTheGpuNotTheHost) {
  const Registry reg = nodeRegistry();
  SweepOptions o;
  o.collectives = {Collective::kAllReduce};
  o.registry = &reg;
  o.minBytes = o.maxBytes = 8ull << 30;  // -b 8G -e 8G
  o.variants = {"nccl"};
  MemoryNeed need = sweepMemoryPerRank(o, 8);
  // Out of place a send and a receive buffer of 8 GiB, on the GPU.
  EXPECT_EQ(need.deviceBuffers, 16ull << 30);
  EXPECT_EQ(need.buffers, 0u);  // before: 16 GiB of host memory per rank
  EXPECT_EQ(need.scratch, 0u);
  // The host keeps verification's chunks: 8 threads x (output + expected) x 1 Mi floats.
  EXPECT_EQ(need.verification, 64ull << 20);
  EXPECT_EQ(need.perRank(), 64ull << 20);  // before: 40 GiB x 8 ranks = 320 GiB
  EXPECT_EQ(need.devicePerRank(), 16ull << 30);

  // An 80 GiB GPU holds one rank's 16 GiB, and four ranks sharing it (NCCL_HOSTID), not six.
  const uint64_t h100Free = 79ull << 30;
  EXPECT_NO_THROW(checkDeviceMemoryFit(need, 1, h100Free, "GPU 0000:19:00.0", o.maxBytes));
  EXPECT_NO_THROW(checkDeviceMemoryFit(need, 4, h100Free, "GPU 0000:19:00.0", o.maxBytes));
  try {
    checkDeviceMemoryFit(need, 6, h100Free, "GPU 0000:19:00.0", o.maxBytes);
    FAIL() << "6 ranks x 16 GiB fit in 79 GiB";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("x 6 ranks sharing the GPU = 96 GiB, but GPU "
                                         "0000:19:00.0 has 79 GiB free"),
              std::string::npos)
        << e.what();
  }

  // The host variant's buffers stay on the host.
  o.variants = {"ring"};
  need = sweepMemoryPerRank(o, 8);
  EXPECT_EQ(need.buffers, 16ull << 30);
  EXPECT_EQ(need.devicePerRank(), 0u);
}

}  // namespace
}  // namespace cb
