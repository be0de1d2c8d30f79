// The shm and ucx transports between the thread ranks of a local world (they only need a
// Communicator to set up): a ring of copies and reductions across shm slot boundaries on rank
// counts the mpirun tests don't cover (1, 4, 5), time-outs, zero copy. (Every algorithm over every
// transport: test_algorithms_threads.cpp.)
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collectives/Team.h"
#include "collectives/transport/LocalWorld.h"
#include "collectives/transport/ShmTransport.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/Reduce.h"
#include "core/SharedMemory.h"

namespace cb {
namespace {

Deadline soon() { return Deadline::after(60); }

std::vector<int32_t> ints(int rank, size_t count, int salt) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<int32_t>(rank * 1000 + i * 7 + salt);
  return v;
}

class LocalProcessTransportTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LocalProcessTransportTest, RingOfCopiesAndReductions) {
  for (int n : {1, 4, 5}) {
    LocalWorld::run(n, [&](Communicator& comm) {
      Team team(comm);
      Transport* t = &team.transport(GetParam());
      EXPECT_EQ(t->name(), GetParam());
      const int r = comm.rank(), right = (r + 1) % n, left = (r - 1 + n) % n;
      for (size_t count : {size_t{0}, size_t{1}, size_t{1000}, size_t{700000}}) {
        auto out = ints(r, count, 1), acc = ints(r, count, 2);
        std::vector<int32_t> in(count);
        SendOp sends[] = {{right, out.data(), count * 4}, {left, out.data(), count * 4}};
        RecvOp recvs[] = {
            {left, in.data(), count * 4},
            {right, acc.data(), count * 4, true, acc.data(), DataType::kInt32, RedOp::kSum}};
        t->exchange(sends, recvs, soon());
        auto want = ints(r, count, 2), fromRight = ints(right, count, 1);
        for (size_t i = 0; i < count; ++i) want[i] += fromRight[i];
        EXPECT_TRUE(in == ints(left, count, 1)) << "n=" << n << " count=" << count;
        EXPECT_TRUE(acc == want) << "n=" << n << " count=" << count;
      }
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, LocalProcessTransportTest, ::testing::Values("shm", "ucx"),
                         [](const auto& info) { return info.param; });

TEST(TransportSelection, LocalWorldDefaultsToLocal) {
  LocalWorld::run(2, [](Communicator& comm) {
    Team team(comm);
    EXPECT_EQ(team.defaultTransport(), "local");
    EXPECT_FALSE(team.transportUnsupported("shm"));
    EXPECT_TRUE(team.transportUnsupported("mpi"));
  });
}

// A receive nobody sends: the deadline ends it, and the transport refuses further use.
TEST(ShmTransport, TimesOutAndThenRefuses) {
  LocalWorld::run(2, [](Communicator& comm) {
    auto t = makeShmTransport(comm);
    if (comm.rank() == 0) {
      int v = 0;
      RecvOp recvs[] = {{1, &v, sizeof v}};
      EXPECT_THROW(t->exchange({}, recvs, Deadline::after(0.2)), TimeoutError);
      EXPECT_THROW(t->exchange({}, recvs, soon()), InternalError);
    }
    comm.barrier(soon());
  });
}

// A rank that arrives late at set-up (stopped, lost) ends the others' set-up at the deadline the
// caller gives (the run's -T), not at a fixed one: rank 1 is 2 s late for a 0.3 s deadline.
TEST(ShmTransport, SetUpWaitsNoLongerThanTheGivenDeadline) {
  TransportOptions o;
  o.setupSeconds = 0.3;
  EXPECT_THROW(LocalWorld::run(2,
                               [&](Communicator& comm) {
                                 Team team(comm, o);
                                 if (comm.rank() == 1) {
                                   std::this_thread::sleep_for(std::chrono::seconds(2));
                                 }
                                 team.transport("shm");
                               }),
               TimeoutError);
}

// Zero copy between thread ranks (the same code path as between processes: the receiver maps the
// sender's memfd through /proc). Messages in shareable buffers at or above the threshold go as
// descriptors, everything else streams: both must deliver the same bytes, in order.
TEST(ShmTransport, ZeroCopyAndStreamedMessagesDeliverTheSameBytes) {
  for (int n : {2, 3}) {
    for (size_t threshold : {size_t{41}, size_t{4096}, SIZE_MAX}) {
      LocalWorld::run(n, [&](Communicator& comm) {
        ShmOptions o;
        o.zeroCopyBytes = threshold;
        o.slotBytes = 4096;  // streamed messages span several fills and wrap the ring
        o.slots = 2;
        auto t = makeShmTransport(comm, o);
        const int r = comm.rank(), right = (r + 1) % n, left = (r - 1 + n) % n;
        uint64_t expectedZeroCopy = 0;
        for (size_t count : {size_t{1}, size_t{11}, size_t{1000}, size_t{70001}}) {
          const size_t bytes = count * 4;
          SharedHostBuffer out(bytes), acc(bytes), in(bytes);
          auto fill = [](SharedHostBuffer& b, const std::vector<int32_t>& v) {
            std::memcpy(b.data(), v.data(), v.size() * 4);
          };
          fill(out, ints(r, count, 1));
          fill(acc, ints(r, count, 2));
          std::vector<int32_t> priv = ints(r, count, 3), privIn(count);  // never zero copy
          SendOp sends[] = {
              {right, out.data(), bytes}, {left, out.data(), bytes}, {right, priv.data(), bytes}};
          RecvOp recvs[] = {
              {left, in.data(), bytes},
              {right, acc.data(), bytes, true, acc.data(), DataType::kInt32, RedOp::kSum},
              {left, privIn.data(), bytes}};
          t->exchange(sends, recvs, soon());
          if (bytes >= threshold && bytes > 40) expectedZeroCopy += 2;
          auto want = ints(r, count, 2), fromRight = ints(right, count, 1);
          for (size_t i = 0; i < count; ++i) want[i] += fromRight[i];
          auto got = [&](SharedHostBuffer& b) {
            std::vector<int32_t> v(count);
            std::memcpy(v.data(), b.data(), bytes);
            return v;
          };
          EXPECT_TRUE(got(in) == ints(left, count, 1)) << n << " ranks, count " << count;
          EXPECT_TRUE(got(acc) == want) << n << " ranks, count " << count;
          EXPECT_TRUE(privIn == ints(left, count, 3)) << n << " ranks, count " << count;
        }
        EXPECT_EQ(t->zeroCopySends(), expectedZeroCopy) << "threshold " << threshold;
      });
    }
  }
}

// Oversubscription is judged on the union of the ranks' affinity masks: bound ranks (one CPU
// each) and unbound ones (every CPU each) on a 2-CPU machine.
TEST(ShmTransport, CountsTheCpusOfAllRanksTogether) {
  EXPECT_EQ(cpusInUnion({"10", "01"}), 2u);              // mpirun -np 2 binding to cores
  EXPECT_EQ(cpusInUnion({"11", "11", "11"}), 2u);        // -np 3 --oversubscribe: 3 ranks > 2
  EXPECT_EQ(cpusInUnion({"1", "0001", ""}), 2u);         // masks of different lengths
  EXPECT_EQ(cpusInUnion({"0110", "0100", "0010"}), 2u);  // overlapping masks count once
  EXPECT_EQ(cpusInUnion({}), 0u);                        // unknown: never oversubscribed
}

}  // namespace
}  // namespace cb
