// Shared pieces of the multi-process tests: the world communicator of this process, a fixture
// that makes every rank agree on each test's outcome, and a stand-in for a non-MPI communicator.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "collectives/Team.h"
#include "core/Communicator.h"
#include "core/Error.h"
#include "core/Reduce.h"
#include "core/Transport.h"

namespace cb::test {

// Small integers, exact in every element type, distinct per (rank, salt): inputs whose sums,
// products, minima and maxima compare bit for bit whatever the reduction order.
inline std::vector<std::byte> values(DataType t, int rank, size_t count, int salt) {
  std::vector<std::byte> out(count * dataTypeSize(t));
  dispatchDataType(t, [&]<class T>() {
    auto* p = reinterpret_cast<T*>(out.data());
    for (size_t i = 0; i < count; ++i) {
      int v = static_cast<int>((rank * 13 + i * 3 + salt) % 23) - 11;
      if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(v);
      } else {
        p[i] = Arith<T>::store(static_cast<typename Arith<T>::Type>(v));
      }
    }
  });
  return out;
}

// On rank 0: a receive from rank 1, which sends nothing, must end in a TimeoutError after
// `seconds` whose line names `who` (the peer waited for).
inline void expectUnansweredRecvTimesOut(Transport& t, double seconds, const std::string& who) {
  int v = 0;
  RecvOp recvs[] = {{1, &v, sizeof v}};
  try {
    t.exchange({}, recvs, Deadline::after(seconds));
    ADD_FAILURE() << "exchange returned without a sender";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find(who), std::string::npos) << e.what();
  }
}

// The MpiWorld's communicator (set up by the test main before any test runs).
Communicator& world();
// A Team over it (host map gathered once), whose transports are set up once for all tests.
Team& worldTeam();

// Every MPI test derives from this. TearDown gathers each rank's HasFailure() so a failure on
// any rank fails the test on every rank (and rank 0, the only one printing, reports it); it also
// keeps the ranks in step between tests.
class MpiTest : public ::testing::Test {
 protected:
  Communicator& comm() { return world(); }
  Team& team() { return worldTeam(); }
  int rank() { return world().rank(); }
  int size() { return world().size(); }
  void TearDown() override;
};

// A communicator of the local kind, to check that MPI-only code refuses it.
class FakeLocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  WorldKind worldKind() const override { return WorldKind::kLocal; }
  void send(int, const void*, size_t, int, Deadline) override { fail(); }
  void recv(int, void*, size_t, int, Deadline) override { fail(); }
  void barrier(Deadline) override { fail(); }
  std::vector<std::byte> allgatherBytes(const void*, size_t, Deadline) override { fail(); }
  std::unique_ptr<Communicator> split(int, int, Deadline) override { fail(); }

 private:
  [[noreturn]] static void fail() { throw InternalError("FakeLocalCommunicator can't talk"); }
};

// Deadline for operations that should complete at once: generous, a hang still ends.
inline Deadline soon() { return Deadline::after(60); }

}  // namespace cb::test
