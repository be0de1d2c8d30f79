// MpiTransport: copies and reducing receives in one exchange, order between messages to the
// same peer, the reused staging buffer, and the deadline.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "MpiTest.h"
#include "collectives/mpi/MpiTransport.h"
#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"
#include "core/Reduce.h"

namespace cb::test {
namespace {

class MpiTransportTest : public MpiTest {
 protected:
  int right() { return (rank() + 1) % size(); }
  int left() { return (rank() - 1 + size()) % size(); }
};

TEST_F(MpiTransportTest, Identity) {
  auto t = makeMpiTransport(comm());
  EXPECT_EQ(t->name(), "mpi");
  EXPECT_EQ(t->rank(), rank());
  EXPECT_EQ(t->size(), size());
}

TEST_F(MpiTransportTest, CopyBothWays) {
  auto t = makeMpiTransport(comm());
  for (size_t bytes : {size_t{0}, size_t{3}, size_t{4096}, size_t{3} << 20}) {
    SCOPED_TRACE(bytes);
    auto toRight = values(DataType::kUint8, rank(), bytes, 1);
    auto toLeft = values(DataType::kUint8, rank(), bytes, 2);
    std::vector<std::byte> fromLeft(bytes), fromRight(bytes);
    SendOp sends[] = {{right(), toRight.data(), bytes}, {left(), toLeft.data(), bytes}};
    RecvOp recvs[] = {{left(), fromLeft.data(), bytes}, {right(), fromRight.data(), bytes}};
    t->exchange(sends, recvs, soon());
    // With 2 ranks left == right: same-peer messages match in posting order.
    EXPECT_EQ(fromLeft, values(DataType::kUint8, left(), bytes, 1));
    EXPECT_EQ(fromRight, values(DataType::kUint8, right(), bytes, 2));
  }
}

TEST_F(MpiTransportTest, ManyMessagesToOnePeerKeepTheirOrder) {
  auto t = makeMpiTransport(comm());
  constexpr int kMessages = 5;
  std::vector<std::vector<std::byte>> out, in;
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int m = 0; m < kMessages; ++m) {
    out.push_back(values(DataType::kInt32, rank(), 100, m));
    in.emplace_back(out.back().size());
  }
  for (int m = 0; m < kMessages; ++m) {
    sends.push_back({right(), out[m].data(), out[m].size()});
    recvs.push_back({left(), in[m].data(), in[m].size()});
  }
  t->exchange(sends, recvs, soon());
  for (int m = 0; m < kMessages; ++m) {
    EXPECT_EQ(in[m], values(DataType::kInt32, left(), 100, m)) << "message " << m;
  }
}

TEST_F(MpiTransportTest, ReducingReceives) {
  auto t = makeMpiTransport(comm());
  // Large first, then small: the staging buffer is reused, not reallocated smaller.
  for (size_t count : {size_t{100000}, size_t{7}, size_t{1}, size_t{0}, size_t{1000}}) {
    for (DataType dt : {DataType::kFloat, DataType::kInt32, DataType::kHalf, DataType::kBFloat16,
                        DataType::kInt8, DataType::kDouble}) {
      SCOPED_TRACE(fmt::format("{} x {}", count, dataTypeName(dt)));
      size_t bytes = count * dataTypeSize(dt);
      auto mine = values(dt, rank(), count, 0);
      auto acc = values(dt, rank(), count, 5);  // accumulated in place (local == dst)
      auto accBefore = acc;
      std::vector<std::byte> sum(bytes);
      SendOp sends[] = {{right(), mine.data(), bytes}, {left(), mine.data(), bytes}};
      RecvOp recvs[] = {
          {left(), sum.data(), bytes, true, mine.data(), dt, RedOp::kSum},
          {right(), acc.data(), bytes, true, acc.data(), dt, RedOp::kMax},
      };
      t->exchange(sends, recvs, soon());
      std::vector<std::byte> wantSum(bytes), wantMax(bytes);
      auto fromLeft = values(dt, left(), count, 0);
      auto fromRight = values(dt, right(), count, 0);
      reduce(dt, RedOp::kSum, wantSum.data(), mine.data(), fromLeft.data(), count);
      reduce(dt, RedOp::kMax, wantMax.data(), accBefore.data(), fromRight.data(), count);
      EXPECT_EQ(sum, wantSum);
      EXPECT_EQ(acc, wantMax);
    }
  }
}

TEST_F(MpiTransportTest, RecvTimesOutAndLeavesNothingBehind) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  auto t = makeMpiTransport(comm());
  int v = 0;
  if (rank() == 0) expectUnansweredRecvTimesOut(*t, 0.2, "recv from rank 1");
  comm().barrier(soon());
  // The next exchange between the same ranks gets its own message.
  int payload = 77;
  if (rank() == 1) {
    SendOp sends[] = {{0, &payload, sizeof payload}};
    t->exchange(sends, {}, soon());
  }
  if (rank() == 0) {
    RecvOp recvs[] = {{1, &v, sizeof v}};
    t->exchange({}, recvs, soon());
    EXPECT_EQ(v, payload);
  }
}

TEST_F(MpiTransportTest, DoesNotMatchCommunicatorMessages) {
  // The transport's reserved tag keeps a schedule message from matching a user's receive.
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  auto t = makeMpiTransport(comm());
  int viaComm = 5, viaTransport = 6;
  if (rank() == 0) {
    SendOp sends[] = {{1, &viaTransport, sizeof(int)}};
    t->exchange(sends, {}, soon());
    comm().send(1, &viaComm, sizeof(int), 0, soon());
  } else if (rank() == 1) {
    int a = 0, b = 0;
    comm().recv(0, &a, sizeof a, 0, soon());
    RecvOp recvs[] = {{0, &b, sizeof b}};
    t->exchange({}, recvs, soon());
    EXPECT_EQ(a, viaComm);
    EXPECT_EQ(b, viaTransport);
  }
}

TEST_F(MpiTransportTest, RejectsPeersOutsideTheCommunicator) {
  auto t = makeMpiTransport(comm());
  int v = 0;
  SendOp sends[] = {{size(), &v, sizeof v}};
  EXPECT_THROW(t->exchange(sends, {}, soon()), InternalError);
}

}  // namespace
}  // namespace cb::test
