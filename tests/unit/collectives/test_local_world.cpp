// The local (threads) world: communicator primitives, deadlines, the zero-copy transport, and the
// ring algorithms through the host executor for n = 1..9 and awkward counts.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "collectives/transport/LocalTransport.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "core/Interrupt.h"

namespace cb {
namespace {

TEST(LocalWorld, SendRecvMatchesInOrder) {
  // Blocking sends are rendezvous here (as MPI allows): receives are posted in sending order.
  LocalWorld::run(2, [](Communicator& c) {
    Deadline d = Deadline::after(10);
    if (c.rank() == 0) {
      for (int i = 0; i < 100; ++i) c.send(1, &i, sizeof i, 5, d);
      double big[1000];
      for (int i = 0; i < 1000; ++i) big[i] = i * 0.5;
      c.send(1, big, sizeof big, 6, d);
    } else {
      for (int i = 0; i < 100; ++i) {
        int got = -1;
        c.recv(0, &got, sizeof got, 5, d);
        EXPECT_EQ(got, i);
      }
      double big[1000] = {};
      c.recv(0, big, sizeof big, 6, d);
      EXPECT_EQ(big[999], 499.5);
    }
  });
}

TEST(LocalWorld, AllgatherBarrierSplit) {
  LocalWorld::run(5, [](Communicator& c) {
    Deadline d = Deadline::after(10);
    for (int round = 0; round < 20; ++round) {
      auto v = c.allgather(c.rank() * 10 + round, d);
      ASSERT_EQ(v.size(), 5u);
      for (int r = 0; r < 5; ++r) EXPECT_EQ(v[r], r * 10 + round);
    }
    auto names = c.allgatherStrings(std::string(c.rank(), 'x'), d);
    for (int r = 0; r < 5; ++r) EXPECT_EQ(names[r], std::string(r, 'x'));
    c.barrier(d);
    // Even and odd ranks, reversed by key.
    auto sub = c.split(c.rank() % 2, -c.rank(), d);
    ASSERT_TRUE(sub);
    EXPECT_EQ(sub->size(), c.rank() % 2 ? 2 : 3);
    auto members = sub->allgather(c.rank(), d);
    EXPECT_TRUE(std::is_sorted(members.rbegin(), members.rend()));
    EXPECT_EQ(members[sub->rank()], c.rank());
    auto none = c.split(c.rank() == 0 ? -1 : 1, 0, d);
    EXPECT_EQ(static_cast<bool>(none), c.rank() != 0);
  });
}

TEST(LocalWorld, RecvPastDeadlineThrowsTimeout) {
  std::atomic<int> timeouts{0};
  LocalWorld::run(2, [&](Communicator& c) {
    if (c.rank() == 1) {
      int x = 0;
      try {
        c.recv(0, &x, sizeof x, 1, Deadline::after(0.2));
      } catch (const TimeoutError& e) {
        ++timeouts;
        EXPECT_NE(std::string(e.what()).find("did not complete within"), std::string::npos);
        // The line names the rank it waited for.
        EXPECT_NE(std::string(e.what()).find("(waiting for rank 0 to send)"), std::string::npos)
            << e.what();
      }
    }
    c.barrier(Deadline::after(10));
  });
  EXPECT_EQ(timeouts, 1);
}

TEST(LocalWorld, BarrierTimeoutNamesTheRanksThatNeverArrived) {
  // Ranks 0 and 1 wait in a barrier that ranks 2 and 3 reach only after the deadline.
  std::vector<std::string> lines(4);
  LocalWorld::run(4, [&](Communicator& c) {
    if (c.rank() >= 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
    } else {
      try {
        c.barrier(Deadline::after(0.2));
      } catch (const TimeoutError& e) {
        lines[c.rank()] = e.what();
      }
    }
  });
  for (int r : {0, 1}) {
    EXPECT_NE(
        lines[r].find(fmt::format("barrier/allgather on rank {} (ranks 2, 3 never arrived)", r)),
        std::string::npos)
        << lines[r];
  }
}

TEST(LocalWorld, ATimeoutLineGathersWhatEveryRankWaitedFor) {
  // Rank 1 never communicates. Rank 0 gives up first; rank 2, aborted while waiting too, adds its
  // own view, so the one line names rank 1 from both sides.
  std::string line;
  try {
    LocalWorld::run(3, [](Communicator& c) {
      int x = 0;
      if (c.rank() == 0) c.recv(1, &x, sizeof x, 0, Deadline::after(0.2));
      if (c.rank() == 2) c.recv(1, &x, sizeof x, 0, Deadline::after(30));
      if (c.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    });
  } catch (const TimeoutError& e) {
    line = e.what();
  }
  EXPECT_EQ(line,
            "point-to-point exchange on rank 0 (waiting for rank 1 to send) did not complete "
            "within 0.2 s (-T); point-to-point exchange on rank 2 (waiting for rank 1 to send)");
}

TEST(LocalWorld, FailureOnOneRankReachesTheCallerWithoutHanging) {
  EXPECT_THROW(LocalWorld::run(3,
                               [](Communicator& c) {
                                 if (c.rank() == 2) throw UsageError("rank 2 failed");
                                 int x = 0;
                                 // Would wait forever for rank 2 without the abort.
                                 c.recv(2, &x, sizeof x, 0, Deadline::after(60));
                               }),
               UsageError);
}

// Runs a local world of n ranks on a detached thread and returns how it ended ("no error",
// "interrupted: WHAT" or WHAT); a world still running after 30 s ends the test binary with one
// line instead of hanging ctest. The promise is shared: a detached thread must not outlive what it
// writes to.
std::string outcomeOrHang(const char* test, int n, std::function<void(Communicator&)> body) {
  auto outcome = std::make_shared<std::promise<std::string>>();
  auto done = outcome->get_future();
  std::thread([outcome, n, body = std::move(body)] {
    try {
      LocalWorld::run(n, body);
      outcome->set_value("no error");
    } catch (const InterruptedError& e) {
      outcome->set_value(std::string("interrupted: ") + e.what());
    } catch (const std::exception& e) {
      outcome->set_value(e.what());
    }
  }).detach();
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    std::fprintf(stderr, "LocalWorld.%s: hung for 30 s\n", test);
    std::_Exit(1);
  }
  return done.get();
}

TEST(LocalWorld, SizeMismatchFailsWithoutHanging) {
  // Rank 1 expects more bytes than rank 0 sends. The receiver throws; the sender, waiting for its
  // post, must be released (it waited forever once).
  EXPECT_EQ(outcomeOrHang("SizeMismatchFailsWithoutHanging", 2,
                          [](Communicator& c) {
                            uint64_t buf[2] = {1, 2};
                            if (c.rank() == 0) c.send(1, buf, 8, 0, Deadline::after(60));
                            if (c.rank() == 1) c.recv(0, buf, 16, 0, Deadline::after(60));
                          }),
            "rank 1 expected 16 bytes from rank 0, got 8");
}

TEST(LocalWorld, SignalStopsRanksBlockedInReceiveAndBarrier) {
  // A SIGINT's flag must end waits that sleep on a condition variable: rank 1 waits for a message
  // nobody sends, rank 2 in a barrier rank 1 never reaches, both with a minute's deadline. Without
  // the sliced waits they slept to the deadline (the proxy and diag steps ignored Ctrl-C).
  const std::string got =
      outcomeOrHang("SignalStopsRanksBlockedInReceiveAndBarrier", 3, [](Communicator& c) {
        if (c.rank() == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          requestInterrupt(SIGINT);
          c.barrier(Deadline::after(60));
        } else if (c.rank() == 1) {
          int x = 0;
          c.recv(0, &x, sizeof x, 0, Deadline::after(60));
        } else {
          c.barrier(Deadline::after(60));
        }
      });
  requestInterrupt(0);
  EXPECT_EQ(got.rfind("interrupted: ", 0), 0u) << got;
  EXPECT_NE(got.find("by signal 2"), std::string::npos) << got;
}

TEST(LocalWorld, RingAlgorithmsThroughHostExecutor) {
  for (int n = 1; n <= 9; ++n) {
    for (size_t count : {size_t{0}, size_t{1}, static_cast<size_t>(n > 1 ? n - 1 : 2),
                         static_cast<size_t>(n + 1), size_t{100003}}) {
      for (const auto& algo : algorithms()) {
        CollArgs args{algo.coll, DataType::kFloat, RedOp::kSum, 0, count};
        std::atomic<int64_t> wrong{0};
        LocalWorld::run(n, [&](Communicator& c) {
          auto transport = makeLocalTransport(c);
          HostExecutor exec(*transport, algo.build(c.rank(), n, args, {}), args);
          const size_t es = dataTypeSize(args.dtype);
          std::vector<std::byte> send(sendCount(args, n) * es), recv(recvCount(args, n) * es);
          std::vector<std::byte> expected(recv.size());
          for (uint64_t seed : {1u, 2u}) {
            fillInput(args, c.rank(), n, seed, send.data());
            exec.run(send.data(), recv.data(), Deadline::after(30));
            expectedOutput(args, c.rank(), n, seed, expected.data());
            wrong += countWrong(args.dtype, recv.data(), expected.data(), recvCount(args, n));
          }
        });
        EXPECT_EQ(wrong, 0) << collectiveName(algo.coll) << "/" << algo.name << " n=" << n
                            << " count=" << count;
      }
    }
  }
}

}  // namespace
}  // namespace cb
