// The MPI Communicator: point-to-point, barrier, allgathers, split, tag and size checks, and
// the deadline on a receive whose sender never sends.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "MpiTest.h"
#include "collectives/mpi/MpiTransport.h"
#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"

namespace cb::test {
namespace {

class MpiCommunicatorTest : public MpiTest {};

std::vector<uint8_t> pattern(int rank, size_t bytes, int salt) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(rank * 31 + i * 7 + salt);
  return v;
}

TEST_F(MpiCommunicatorTest, RankSizeAndKind) {
  int mpiSize = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &mpiSize);
  EXPECT_EQ(size(), mpiSize);
  EXPECT_EQ(comm().worldKind(), WorldKind::kMpi);
  auto ranks = comm().allgather<int>(rank(), soon());
  ASSERT_EQ(static_cast<int>(ranks.size()), size());
  for (int r = 0; r < size(); ++r) EXPECT_EQ(ranks[r], r);
  EXPECT_NE(mpiCommOf(comm()), MPI_COMM_WORLD);  // a duplicate, not the world itself
}

TEST_F(MpiCommunicatorTest, SendRecvRing) {
  // Alone, the blocking send to oneself can't complete before its receive is posted.
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  int right = (rank() + 1) % size();
  int left = (rank() - 1 + size()) % size();
  // 0 bytes, eager-sized and rendezvous-sized messages. Even ranks send first so the blocking
  // calls can't all wait on each other.
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{1000}, size_t{4} << 20}) {
    SCOPED_TRACE(bytes);
    auto out = pattern(rank(), bytes, 1);
    std::vector<uint8_t> in(bytes, 0);
    if (rank() % 2 == 0) {
      comm().send(right, out.data(), bytes, 3, soon());
      comm().recv(left, in.data(), bytes, 3, soon());
    } else {
      comm().recv(left, in.data(), bytes, 3, soon());
      comm().send(right, out.data(), bytes, 3, soon());
    }
    EXPECT_EQ(in, pattern(left, bytes, 1));
  }
}

TEST_F(MpiCommunicatorTest, TagsKeepMessagesApart) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() == 0) {
    auto a = pattern(0, 64, 10);
    auto b = pattern(0, 64, 20);
    comm().send(1, a.data(), a.size(), 10, soon());
    comm().send(1, b.data(), b.size(), 20, soon());
  } else if (rank() == 1) {
    std::vector<uint8_t> a(64), b(64);
    comm().recv(0, a.data(), a.size(), 10, soon());
    comm().recv(0, b.data(), b.size(), 20, soon());
    EXPECT_EQ(a, pattern(0, 64, 10));
    EXPECT_EQ(b, pattern(0, 64, 20));
  }
}

TEST_F(MpiCommunicatorTest, SizeMismatchIsAnError) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() == 0) {
    uint64_t v = 42;
    comm().send(1, &v, sizeof v, 5, soon());
  } else if (rank() == 1) {
    uint64_t v[2] = {};
    EXPECT_THROW(comm().recv(0, v, sizeof v, 5, soon()), UsageError);
  }
}

TEST_F(MpiCommunicatorTest, RejectsBadPeersAndReservedTags) {
  char c = 0;
  EXPECT_THROW(comm().send(size(), &c, 1, 0, soon()), UsageError);
  EXPECT_THROW(comm().recv(-1, &c, 1, 0, soon()), UsageError);
  EXPECT_THROW(comm().send(0, &c, 1, kMpiScheduleTag, soon()), UsageError);
  EXPECT_THROW(comm().recv(0, &c, 1, kMpiReservedTagBase, soon()), UsageError);
  EXPECT_THROW(comm().send(0, &c, 1, -1, soon()), UsageError);
}

TEST_F(MpiCommunicatorTest, BarrierWaitsForTheLastRank) {
  // Causality, not speed: no rank leaves the barrier before rank 0 has entered it. All ranks
  // share one host and its monotonic clock under CTest.
  double entered = 0;
  if (rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    entered = nowSeconds();
  }
  comm().barrier(soon());
  double left = nowSeconds();
  auto enteredAt = comm().allgather<double>(entered, soon());
  EXPECT_GE(left, enteredAt[0]);
}

TEST_F(MpiCommunicatorTest, IdleBarrierMatchesBarrierAndSleeps) {
  // Rank 0 enters a plain barrier 15 ms late; the others wait in idleBarrier. They leave after
  // it entered, and spend the wait asleep (a few % of it on the CPU): a plain barrier polls for
  // its first 20 ms and would take the CPU time a measuring pair needs on an oversubscribed host
  // (diag links' bystanders).
  double entered = 0, cpu = 0, wall = 0;
  if (rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    entered = nowSeconds();
    comm().barrier(soon());
  } else {
    timespec c0{}, c1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    const double w0 = nowSeconds();
    comm().idleBarrier(soon());
    wall = nowSeconds() - w0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    cpu = static_cast<double>(c1.tv_sec - c0.tv_sec) +
          1e-9 * static_cast<double>(c1.tv_nsec - c0.tv_nsec);
  }
  const double left = nowSeconds();
  auto enteredAt = comm().allgather<double>(entered, soon());
  EXPECT_GE(left, enteredAt[0]);
  if (rank() != 0 && wall > 0.01) EXPECT_LT(cpu, 0.3 * wall) << "cpu " << cpu << " s of " << wall;
}

TEST_F(MpiCommunicatorTest, AllgatherBytes) {
  auto mine = pattern(rank(), 5, 2);
  auto all = comm().allgatherBytes(mine.data(), mine.size(), soon());
  ASSERT_EQ(all.size(), 5u * size());
  for (int r = 0; r < size(); ++r) {
    auto want = pattern(r, 5, 2);
    EXPECT_EQ(0, std::memcmp(all.data() + 5 * r, want.data(), 5)) << "block of rank " << r;
  }
  EXPECT_TRUE(comm().allgatherBytes(nullptr, 0, soon()).empty());
}

TEST_F(MpiCommunicatorTest, AllgatherStringsAndHelpers) {
  // Different lengths, one empty.
  std::string mine =
      rank() == 1 ? "" : std::string(static_cast<size_t>(rank() * 5 + 3), 'a' + rank());
  auto all = comm().allgatherStrings(mine, soon());
  ASSERT_EQ(static_cast<int>(all.size()), size());
  for (int r = 0; r < size(); ++r) {
    std::string want = r == 1 ? "" : std::string(static_cast<size_t>(r * 5 + 3), 'a' + r);
    EXPECT_EQ(all[r], want);
  }
  EXPECT_EQ(comm().broadcastValue<int>(rank() * 10 + 1, size() - 1, soon()), (size() - 1) * 10 + 1);
  EXPECT_TRUE(comm().anyTrue(rank() == size() - 1, soon()));
  EXPECT_FALSE(comm().anyTrue(false, soon()));
}

TEST_F(MpiCommunicatorTest, Split) {
  // Two colors; the key reverses the order inside each.
  int color = rank() % 2;
  auto sub = comm().split(color, -rank(), soon());
  ASSERT_NE(sub, nullptr);
  std::vector<int> members;
  for (int r = size() - 1; r >= 0; --r) {
    if (r % 2 == color) members.push_back(r);
  }
  EXPECT_EQ(sub->size(), static_cast<int>(members.size()));
  EXPECT_EQ(sub->worldKind(), WorldKind::kMpi);
  auto worldRanks = sub->allgather<int>(rank(), soon());
  EXPECT_EQ(worldRanks, members);
  EXPECT_EQ(members[sub->rank()], rank());
  sub->barrier(soon());
  // Point-to-point inside the split, in its own numbering.
  if (sub->size() >= 2) {
    int v = rank();
    if (sub->rank() == 0) sub->send(1, &v, sizeof v, 1, soon());
    if (sub->rank() == 1) {
      int got = -1;
      sub->recv(0, &got, sizeof got, 1, soon());
      EXPECT_EQ(got, members[0]);
    }
  }
  EXPECT_THROW(comm().split(-1, 0, soon()), UsageError);
}

TEST_F(MpiCommunicatorTest, RecvTimesOutWhenThePeerNeverSends) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  int payload = 1234;
  if (rank() == 0) {
    int v = 0;
    try {
      comm().recv(1, &v, sizeof v, 7, Deadline::after(0.2));
      ADD_FAILURE() << "recv returned without a sender";
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("recv from rank 1 (tag 7) did not complete within"),
                std::string::npos)
          << e.what();
    }
  }
  comm().barrier(soon());
  // The cancelled receive must not swallow the next message with the same tag.
  if (rank() == 1) comm().send(0, &payload, sizeof payload, 7, soon());
  if (rank() == 0) {
    int v = 0;
    comm().recv(1, &v, sizeof v, 7, soon());
    EXPECT_EQ(v, payload);
  }
}

TEST_F(MpiCommunicatorTest, MpiCommOfRefusesOtherWorlds) {
  FakeLocalCommunicator local;
  EXPECT_THROW(mpiCommOf(local), UsageError);
  EXPECT_THROW(makeMpiTransport(local), UsageError);
}

TEST(MpiWorldFunctions, LauncherAndLibrary) {
  EXPECT_TRUE(launchedByMpiLauncher());  // we run under mpirun
  auto v = mpiLibraryVersion();
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(v.find('\n'), std::string::npos);
  EXPECT_NE(v.find("MPI"), std::string::npos) << v;
  EXPECT_THROW(checkMpi(MPI_ERR_COMM, "MPI_Something"), MpiError);
  try {
    checkMpi(MPI_ERR_TAG, "MPI_Isend");
  } catch (const MpiError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("MPI_Isend: ", 0), 0u) << e.what();
  }
  EXPECT_NO_THROW(checkMpi(MPI_SUCCESS, "fine"));
}

TEST(MpiWorldFunctions, SecondWorldIsRefused) {
  EXPECT_THROW({ MpiWorld again; }, MpiError);
}

}  // namespace
}  // namespace cb::test
