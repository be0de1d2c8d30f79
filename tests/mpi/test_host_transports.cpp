// The host transports selectable by name (mpi, shm, ucx) under mpirun: copies and reducing
// receives of awkward sizes (0, 1, 4 KiB, 3 MiB across slot boundaries), many messages to one
// peer in one exchange, all-to-all and ring patterns, the ring collectives through the host
// executor checked bit for bit, mismatched sizes, deadlines and interrupts, the selection
// functions, and that the shm transport leaves nothing in /dev/shm.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "MpiTest.h"
#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "collectives/transport/ShmTransport.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Reduce.h"
#include "core/SharedMemory.h"

namespace cb::test {
namespace {

// Byte pattern distinct per (source rank, message salt, position).
std::vector<std::byte> pattern(int src, size_t bytes, int salt) {
  std::vector<std::byte> out(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    out[i] = static_cast<std::byte>((src * 131 + salt * 31 + i * 7 + i / 251) & 0xff);
  }
  return out;
}

const size_t kSizes[] = {0, 1, 4096, size_t{3} << 20};

class HostTransportTest : public MpiTest, public ::testing::WithParamInterface<std::string> {
 protected:
  int right() { return (rank() + 1) % size(); }
  int left() { return (rank() - 1 + size()) % size(); }
  std::unique_ptr<Transport> make() { return makeTransport(GetParam(), comm(), team().hosts()); }
};

TEST_P(HostTransportTest, Identity) {
  auto t = make();
  EXPECT_EQ(t->name(), GetParam());
  EXPECT_EQ(t->rank(), rank());
  EXPECT_EQ(t->size(), size());
}

TEST_P(HostTransportTest, RingCopyBothWays) {
  auto t = make();
  for (size_t bytes : kSizes) {
    SCOPED_TRACE(bytes);
    auto toRight = pattern(rank(), bytes, 1), toLeft = pattern(rank(), bytes, 2);
    std::vector<std::byte> fromLeft(bytes), fromRight(bytes);
    SendOp sends[] = {{right(), toRight.data(), bytes}, {left(), toLeft.data(), bytes}};
    RecvOp recvs[] = {{left(), fromLeft.data(), bytes}, {right(), fromRight.data(), bytes}};
    t->exchange(sends, recvs, soon());
    // With 2 ranks left == right: messages of one pair match in posting order.
    EXPECT_TRUE(fromLeft == pattern(left(), bytes, 1));
    EXPECT_TRUE(fromRight == pattern(right(), bytes, 2));
  }
}

TEST_P(HostTransportTest, ReducingReceives) {
  auto t = make();
  for (size_t bytes : kSizes) {
    for (DataType dt : {DataType::kFloat, DataType::kInt32, DataType::kHalf, DataType::kInt8,
                        DataType::kDouble}) {
      const size_t count = bytes / dataTypeSize(dt);
      const size_t b = count * dataTypeSize(dt);
      SCOPED_TRACE(fmt::format("{} x {}", count, dataTypeName(dt)));
      auto mine = values(dt, rank(), count, 0);
      auto acc = values(dt, rank(), count, 5);  // accumulated in place (local == dst)
      auto accBefore = acc;
      std::vector<std::byte> sum(b);
      SendOp sends[] = {{right(), mine.data(), b}, {left(), mine.data(), b}};
      RecvOp recvs[] = {{left(), sum.data(), b, true, mine.data(), dt, RedOp::kSum},
                        {right(), acc.data(), b, true, acc.data(), dt, RedOp::kMax}};
      t->exchange(sends, recvs, soon());
      std::vector<std::byte> wantSum(b), wantMax(b);
      auto fromLeft = values(dt, left(), count, 0), fromRight = values(dt, right(), count, 0);
      reduce(dt, RedOp::kSum, wantSum.data(), mine.data(), fromLeft.data(), count);
      reduce(dt, RedOp::kMax, wantMax.data(), accBefore.data(), fromRight.data(), count);
      EXPECT_TRUE(sum == wantSum);
      EXPECT_TRUE(acc == wantMax);
    }
  }
}

// More messages to one peer than a ring has slots, mixed sizes and reductions, all in one
// exchange: only interleaved progress of every op completes it.
TEST_P(HostTransportTest, ManyMessagesToOnePeerKeepTheirOrder) {
  auto t = make();
  constexpr int kMessages = 64;
  auto sizeOf = [](int m) { return m % 8 == 7 ? size_t{300000} : size_t(m * 4); };
  std::vector<std::vector<std::byte>> out(kMessages), in(kMessages);
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int m = 0; m < kMessages; ++m) {
    out[m] = values(DataType::kInt32, rank(), sizeOf(m) / 4, m);
    in[m] = values(DataType::kInt32, rank(), sizeOf(m) / 4, 1000 + m);
  }
  for (int m = 0; m < kMessages; ++m) {
    sends.push_back({right(), out[m].data(), out[m].size()});
    if (m % 3 == 0) {
      recvs.push_back(
          {left(), in[m].data(), in[m].size(), true, in[m].data(), DataType::kInt32, RedOp::kSum});
    } else {
      recvs.push_back({left(), in[m].data(), in[m].size()});
    }
  }
  t->exchange(sends, recvs, soon());
  for (int m = 0; m < kMessages; ++m) {
    auto want = values(DataType::kInt32, left(), sizeOf(m) / 4, m);
    if (m % 3 == 0) {
      auto before = values(DataType::kInt32, rank(), sizeOf(m) / 4, 1000 + m);
      reduce(DataType::kInt32, RedOp::kSum, want.data(), before.data(), want.data(), sizeOf(m) / 4);
    }
    EXPECT_TRUE(in[m] == want) << "message " << m;
  }
}

TEST_P(HostTransportTest, AllToAllIncludingSelf) {
  auto t = make();
  for (size_t bytes : kSizes) {
    SCOPED_TRACE(bytes);
    std::vector<std::vector<std::byte>> out(size()), in(size());
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    for (int p = 0; p < size(); ++p) {
      out[p] = pattern(rank(), bytes, 10 + p);
      in[p].assign(bytes, std::byte{0});
    }
    for (int p = 0; p < size(); ++p) {
      recvs.push_back({p, in[p].data(), bytes});
      sends.push_back({(rank() + p) % size(), out[(rank() + p) % size()].data(), bytes});
    }
    t->exchange(sends, recvs, soon());
    for (int p = 0; p < size(); ++p) {
      EXPECT_TRUE(in[p] == pattern(p, bytes, 10 + rank())) << "from rank " << p;
    }
  }
}

// Thousands of small exchanges in a row: slot reuse and sequence numbers stay in step.
TEST_P(HostTransportTest, ManyExchangesInARow) {
  auto t = make();
  for (int i = 0; i < 3000; ++i) {
    uint64_t out = static_cast<uint64_t>(rank()) << 32 | static_cast<uint64_t>(i), in = 0;
    SendOp sends[] = {{right(), &out, sizeof out}};
    RecvOp recvs[] = {{left(), &in, sizeof in}};
    t->exchange(sends, recvs, soon());
    ASSERT_EQ(in, static_cast<uint64_t>(left()) << 32 | static_cast<uint64_t>(i)) << i;
  }
}

// Runs `algo` through the host executor (twice, with fresh inputs) and checks every element.
// The send and receive buffers are shareable memory (as the engine's are) when `shared`, so the
// shm transport sends large messages zero-copy; otherwise private vectors, which it streams.
void checkCollective(Transport& t, const AlgorithmInfo& algo, CollArgs args, bool inPlace, int rank,
                     int n, bool shared = false) {
  const size_t es = dataTypeSize(args.dtype);
  const size_t sc = sendCount(args, n), rc = recvCount(args, n);
  HostExecutor exec(t, algo.build(rank, n, args, {}), args);
  for (uint64_t seed : {11, 12}) {
    std::vector<std::byte> input(sc * es), privateSend(sc * es), privateRecv(rc * es);
    SharedHostBuffer sharedSend(shared ? sc * es : 0), sharedRecv(shared ? rc * es : 0);
    auto* send = static_cast<std::byte*>(shared ? sharedSend.data() : privateSend.data());
    auto* recv = static_cast<std::byte*>(shared ? sharedRecv.data() : privateRecv.data());
    // count 0: the buffers may be null, which memset and memcpy must not be given (UBSan).
    auto copy = [](std::byte* dst, const std::byte* src, size_t bytes) {
      if (bytes) std::memcpy(dst, src, bytes);
    };
    if (rc * es != 0) std::memset(recv, 0x5a, rc * es);
    fillInput(args, rank, n, seed, input.data());
    const std::byte* got = recv;
    if (!inPlace) {
      copy(send, input.data(), sc * es);
      exec.run(send, recv, soon());
    } else if (args.coll == Collective::kReduceScatter) {
      copy(send, input.data(), sc * es);
      exec.run(send, send + inPlaceRecvOffset(args, rank) * es, soon());
      got = send + inPlaceRecvOffset(args, rank) * es;
    } else {
      copy(recv + inPlaceSendOffset(args, rank) * es, input.data(), sc * es);
      exec.run(recv + inPlaceSendOffset(args, rank) * es, recv, soon());
    }
    std::vector<std::byte> expected(rc * es);
    ASSERT_TRUE(expectedOutput(args, rank, n, seed, expected.data()));
    EXPECT_EQ(countWrong(args.dtype, got, expected.data(), rc), 0)
        << collectiveName(args.coll) << "/" << algo.name << " count " << args.count << " "
        << dataTypeName(args.dtype) << " " << redOpName(args.op) << " seed " << seed
        << (inPlace ? " in-place" : "") << (shared ? " shared buffers" : "");
  }
}

TEST_P(HostTransportTest, RingCollectivesThroughTheHostExecutor) {
  auto t = make();
  const size_t counts[] = {0, 1, 1009, (size_t{3} << 20) / 4 + 3};
  for (const auto& algo : algorithms()) {
    if (std::string_view(algo.name) != "ring") continue;
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        for (bool shared : {false, true}) {
          CollArgs args{algo.coll, DataType::kFloat, RedOp::kSum, 0, count};
          checkCollective(*t, algo, args, inPlace, rank(), size(), shared);
        }
      }
    }
    if (hasReduction(algo.coll)) {
      checkCollective(*t, algo, {algo.coll, DataType::kInt64, RedOp::kMax, 0, 4099}, false, rank(),
                      size());
      checkCollective(*t, algo, {algo.coll, DataType::kHalf, RedOp::kAvg, 0, 5003}, false, rank(),
                      size());
    }
  }
  // Between processes the shm transport reads large messages in shareable memory in place.
  if (GetParam() == "shm" && size() > 1) {
    EXPECT_GT(t->zeroCopySends(), 0u);
  }
  if (GetParam() != "shm") {
    EXPECT_EQ(t->zeroCopySends(), 0u);
  }
}

// Every algorithm over shm with shareable buffers and zero copy from the smallest message up:
// descriptors and streamed fills mixed in one schedule, in and out of place.
TEST_F(MpiTest, EveryAlgorithmOverShmZeroCopy) {
  ShmOptions o;
  o.zeroCopyBytes = 41;
  auto t = makeShmTransport(comm(), o);
  for (const auto& algo : algorithms()) {
    for (size_t count : {size_t{7}, size_t{1009}, size_t{65537}}) {
      CollArgs args{algo.coll, DataType::kInt32, RedOp::kSum, 0, count};
      if (algo.unsupported && algo.unsupported(size(), args, {})) continue;
      for (bool inPlace : {false, true}) {
        checkCollective(*t, algo, args, inPlace, rank(), size(), true);
      }
    }
  }
  if (size() > 1) {
    EXPECT_GT(t->zeroCopySends(), 0u);
  }
}

TEST_P(HostTransportTest, MismatchedSizesAreAnError) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  auto t = make();
  std::vector<std::byte> buf(64, std::byte{1});
  if (rank() == 0) {
    SendOp sends[] = {{1, buf.data(), 8}};
    t->exchange(sends, {}, soon());
  } else if (rank() == 1) {
    RecvOp recvs[] = {{0, buf.data(), 16}};
    EXPECT_THROW(t->exchange({}, recvs, soon()), InternalError);
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, HostTransportTest, ::testing::Values("mpi", "shm", "ucx"),
                         [](const auto& info) { return info.param; });

// Failure paths of the transports written for collbench (the MPI one has its own tests).
class OwnTransportTest : public HostTransportTest {};

TEST_P(OwnTransportTest, ReceiveTimesOutThenRefusesFurtherUse) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  auto t = make();
  int v = 0;
  if (rank() == 0) {
    expectUnansweredRecvTimesOut(*t, 0.3, "rank 1");
    RecvOp recvs[] = {{1, &v, sizeof v}};
    EXPECT_THROW(t->exchange({}, recvs, soon()), InternalError);
  }
}

TEST_P(OwnTransportTest, InterruptStopsAWait) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  auto t = make();
  int v = 0;
  if (rank() == 0) {
    requestInterrupt(SIGINT);
    RecvOp recvs[] = {{1, &v, sizeof v}};
    EXPECT_THROW(t->exchange({}, recvs, Deadline::after(30)), InterruptedError);
    requestInterrupt(0);
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, OwnTransportTest, ::testing::Values("shm", "ucx"),
                         [](const auto& info) { return info.param; });

class TransportSelectionTest : public MpiTest {};

TEST_F(TransportSelectionTest, NamesAndDefaults) {
  auto names = transportNames();
  for (const char* n : {"local", "mpi", "shm", "ucx"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  EXPECT_FALSE(team().transportUnsupported("mpi"));
  EXPECT_FALSE(team().transportUnsupported("shm"));  // mpirun here starts every rank locally
  EXPECT_FALSE(team().transportUnsupported("ucx"));
  EXPECT_FALSE(team().transportUnsupported("mpi-native"));
  EXPECT_TRUE(team().transportUnsupported("local"));
  EXPECT_TRUE(team().transportUnsupported("carrier-pigeon"));
  EXPECT_EQ(team().defaultTransport(), "shm");
  EXPECT_THROW(team().transport("carrier-pigeon"), UsageError);
}

TEST_F(TransportSelectionTest, ShmRejectsBadGeometry) {
  ShmOptions o;
  o.slotBytes = 1000;
  EXPECT_THROW(makeShmTransport(comm(), o), UsageError);
}

// Small slots: every 3 MiB message crosses hundreds of slot boundaries and wraps the ring.
TEST_F(TransportSelectionTest, ShmWithTinySlots) {
  ShmOptions o;
  o.slotBytes = 4096;
  o.slots = 2;
  auto t = makeShmTransport(comm(), o);
  for (const auto& algo : algorithms()) {
    if (std::string_view(algo.name) != "ring") continue;
    checkCollective(*t, algo, {algo.coll, DataType::kInt32, RedOp::kSum, 0, (size_t{3} << 20) / 4},
                    false, rank(), size());
  }
}

// The segment's name is gone from /dev/shm as soon as the transport exists.
TEST_F(TransportSelectionTest, ShmLeavesNothingInDevShm) {
  auto pids = comm().allgather<int>(static_cast<int>(getpid()), soon());
  const std::string prefix = fmt::format("collbench-{}-{}-", getuid(), pids[0]);
  auto leftovers = [&] {
    int found = 0;
    for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
      if (e.path().filename().string().starts_with(prefix)) ++found;
    }
    return found;
  };
  {
    auto t = makeShmTransport(comm());
    EXPECT_EQ(leftovers(), 0);
    uint64_t out = 1, in = 0;
    SendOp sends[] = {{(rank() + 1) % size(), &out, sizeof out}};
    RecvOp recvs[] = {{(rank() - 1 + size()) % size(), &in, sizeof in}};
    t->exchange(sends, recvs, soon());
    EXPECT_EQ(in, 1u);
  }
  comm().barrier(soon());
  EXPECT_EQ(leftovers(), 0);
}

}  // namespace
}  // namespace cb::test
