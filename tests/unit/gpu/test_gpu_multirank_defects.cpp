// Host tests of what an 8-GPU node and a multi-rank run would hit (issue 45), with the NCCL calls
// counted behind the interfaces the code uses, so they fail without the fix on a machine with no
// driver:
//   -R 1 registers each buffer once per run (not at every point), and withdraws a registration
//        before the engine frees the buffer;
//   -R 2 holds one communicator's windows at a time across a run's --nccl-algo columns.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <vector>

#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/NcclWindows.h"

namespace cb {
namespace {

struct RegisterCounts {
  int registrations = 0, deregistrations = 0;
  std::vector<size_t> bytes;
};

RegisterOps countedRegisterOps(RegisterCounts* c) {
  RegisterOps ops;
  ops.enroll = [c](void* p, size_t bytes) -> void* {
    ++c->registrations;
    c->bytes.push_back(bytes);
    return p;
  };
  ops.withdraw = [c](void*) { ++c->deregistrations; };
  return ops;
}

TEST(GpuMultiRank, BuffersAreRegisteredOncePerRunNotAtEveryPoint) {
  static char send[1 << 12], recv[1 << 12];
  RegisterCounts c;
  {
    BufferRegistrations regs(countedRegisterOps(&c));
    // nccl-tests mode: the pool's buffers hold the run's largest side; each point's prepared
    // collective registers the range its calls reach (before: and deregistered it at its end).
    for (int point = 0; point < 24; ++point) {
      regs.ensure(send, sizeof send);
      regs.ensure(recv, sizeof recv);
    }
    EXPECT_EQ(regs.registrations(), 2u);
    // A larger range of the same buffer registers again, once.
    static char grown[1 << 13];
    regs.ensure(grown, 4096);
    regs.ensure(grown, 8192);
    regs.ensure(grown, 1024);
    EXPECT_EQ(c.registrations, 4);
    EXPECT_EQ(c.deregistrations, 1);
    // The engine frees a buffer: its registration is withdrawn before the memory goes.
    deviceMemoryReleased(grown, sizeof grown);
    EXPECT_EQ(c.deregistrations, 2);
    EXPECT_EQ(regs.held(), 2u);
  }
  EXPECT_EQ(c.deregistrations, 4);  // the communicator went: the rest withdrawn
}

TEST(GpuMultiRank, AFailedCommunicatorsRegistrationsAreNotWithdrawn) {
  static char buf[64];
  RegisterCounts c;
  {
    BufferRegistrations regs(countedRegisterOps(&c));
    regs.ensure(buf, sizeof buf);
    regs.abandon();  // NCCL calls on an aborted communicator are not made
  }
  EXPECT_EQ(c.registrations, 1);
  EXPECT_EQ(c.deregistrations, 0);
}

TEST(GpuMultiRank, OneCommunicatorHoldsWindowsAtATime) {
  // Two --nccl-algo columns on one rank thread: before, each kept two windows of the run's
  // largest size (at -e 8G, 16 GiB per column).
  NcclComm ring(NcclComm::Placeholder{}, 0, 2, 0, {{"NCCL_ALGO", "Ring"}});
  NcclComm tree(NcclComm::Placeholder{}, 0, 2, 0, {{"NCCL_ALGO", "Tree"}});
  ring.windows(Deadline::never());
  EXPECT_TRUE(ring.holdsWindows());
  tree.windows(Deadline::never());
  EXPECT_TRUE(tree.holdsWindows());
  EXPECT_FALSE(ring.holdsWindows());
  ring.windows(Deadline::never());
  EXPECT_FALSE(tree.holdsWindows());
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
