// The rank board (core/RankBoard.h): the line of a wait that ran out names the members that never
// arrived (busy, stopped by a signal, dead) with their host, pid and what they were last in, and
// the members that waited; a blocking call past its deadline is ended by the board's watchdog.
// The slots of "other ranks" are written here by hand, as their processes would write them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/RankBoard.h"

namespace cb {
namespace {

// A slot as another rank's process leaves it.
void fillSlot(RankSlot& s, int pid, bool waiting, const char* activity, int iteration,
              int iterations, const char* call) {
  s.pid = pid;
  s.waiting = waiting ? 1 : 0;
  s.iteration = iteration;
  s.iterations = iterations;
  s.version = 0;
  std::strncpy(s.activity, activity, sizeof s.activity - 1);
  s.callIndex = 0;
  std::strncpy(s.calls[0], call, sizeof s.calls[0] - 1);
}

struct Board {
  explicit Board(int n) : slots(static_cast<size_t>(n)) {
    std::vector<std::string> hosts;
    for (int r = 0; r < n; ++r) hosts.push_back("h" + std::to_string(r));
    attachRankBoard(slots.data(), n, 0, std::vector<bool>(static_cast<size_t>(n), true), hosts);
  }
  ~Board() { detachRankBoard(); }
  std::vector<RankSlot> slots;
};

TEST(RankBoard, NamesTheRankThatNeverArrivedAndWhoWaited) {
  Board b(3);
  fillSlot(b.slots[1], getpid(), false, "allreduce 32 MiB ring/shm", 7, 20, "barrier");
  fillSlot(b.slots[2], getpid(), true, "allreduce 32 MiB ring/shm", 8, 20, "barrier");
  publishActivity("allreduce 32 MiB ring/shm", 20);
  publishIteration(8);
  const std::vector<int> members{0, 1, 2};
  BoardWait wait("barrier", members, Deadline::after(10));
  const std::string line = boardHangReport(members);
  EXPECT_NE(line.find(fmt::format("rank 1 (h1, pid {}) never arrived, busy in allreduce 32 MiB "
                                  "ring/shm, iteration 7 of 20",
                                  getpid())),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("ranks 0 and 2 waited"), std::string::npos) << line;
  EXPECT_NE(line.find("in barrier"), std::string::npos) << line;
}

TEST(RankBoard, NamesStoppedAndDeadRanks) {
  pid_t stopped = fork();
  if (stopped == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(stopped, 0);
  kill(stopped, SIGSTOP);
  int status = 0;
  waitpid(stopped, &status, WUNTRACED);
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, &status, 0);

  Board b(3);
  fillSlot(b.slots[1], stopped, false, "proxy step", 3, 12, "");
  fillSlot(b.slots[2], dead, false, "allgather 1 KiB mpi", 0, 0, "");
  const std::vector<int> members{0, 1, 2};
  BoardWait wait("MPI exchange", members, Deadline::after(10));
  const std::string line = boardHangReport(members);
  kill(stopped, SIGKILL);
  waitpid(stopped, &status, 0);
  EXPECT_NE(line.find(fmt::format("rank 1 (h1, pid {}) is stopped in proxy step, iteration 3 of 12",
                                  stopped)),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(fmt::format("rank 2 (h2, pid {}) died in allgather 1 KiB mpi", dead)),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("rank 0 waited"), std::string::npos) << line;
}

TEST(RankBoard, RanksOnAnotherHostAreNamedAsNotVisible) {
  std::vector<RankSlot> slots(2);
  attachRankBoard(slots.data(), 2, 0, {true, false}, {"here", "there"});
  const std::vector<int> members{0, 1};
  std::string line;
  {
    BoardWait wait("barrier", members, Deadline::after(10));
    line = boardHangReport(members);
  }
  detachRankBoard();
  EXPECT_NE(line.find("rank 1 (there) is on another host, not visible from here"),
            std::string::npos)
      << line;
}

TEST(RankBoard, TheSlotNamesTheCallAfterManyCalls) {
  // A call and a barrier alternate (the OSU loop), then more distinct calls than the slot keeps:
  // the slot names each wait's own call, read the way a peer reads it.
  Board b(2);
  const std::vector<int> members{0, 1};
  auto named = [&] {
    const RankSlot& s = b.slots[0];
    return std::string(s.calls[s.callIndex.load()]);
  };
  for (int i = 0; i < 3; ++i) {
    {
      BoardWait wait("MPI_Allreduce", members, Deadline::after(10));
      EXPECT_EQ(named(), "MPI_Allreduce");
    }
    BoardWait wait("MPI_Barrier", members, Deadline::after(10));
    EXPECT_EQ(named(), "MPI_Barrier");
  }
  const uint32_t version = b.slots[0].version.load();
  { BoardWait wait("MPI_Allreduce", members, Deadline::after(10)); }
  EXPECT_EQ(b.slots[0].version.load(), version) << "a known call's name was written again";
  for (const char* call : {"a", "b", "c", "d", "e", "MPI_Allreduce", "c"}) {
    BoardWait wait(call, members, Deadline::after(10));
    EXPECT_EQ(named(), call);
    EXPECT_EQ(b.slots[0].version.load() % 2, 0u);
  }
}

TEST(RankBoard, WithoutABoardNothingIsReported) {
  const std::vector<int> members{0, 1};
  BoardWait wait("barrier", members, Deadline::after(1));
  publishActivity("x", 1);
  EXPECT_EQ(boardHangReport(members), "");
}

// A rank blocked in an MPI call past its deadline while rank 1 never came (the watchdog ends it).
void blockPastTheDeadline() {
  Board b(2);
  fillSlot(b.slots[1], getpid(), false, "allreduce 8 B mpi", 2, 5, "");
  const std::vector<int> members{0, 1};
  BoardWait wait("MPI_Allreduce", members, Deadline::after(0.2), /*blocking=*/true);
  std::this_thread::sleep_for(std::chrono::seconds(20));  // the blocking call
}

TEST(RankBoardDeathTest, TheWatchdogEndsABlockingCallPastItsDeadline) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      blockPastTheDeadline(), ::testing::ExitedWithCode(2),
      "rank 0: MPI_Allreduce did not complete within 0.2 s \\(-T\\): rank 1 \\(h1, pid "
      "[0-9]+\\) never arrived, busy in allreduce 8 B mpi, iteration 2 of 5; rank 0 waited");
}

}  // namespace
}  // namespace cb
