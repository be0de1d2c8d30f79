// Shared pieces of the multi-process tests: the world communicator of this process, a fixture
// that makes every rank agree on each test's outcome, and a stand-in for a non-MPI communicator.
#pragma once

#include <gtest/gtest.h>

#include "core/Communicator.h"
#include "core/Error.h"

namespace cb::test {

// The MpiWorld's communicator (set up by the test main before any test runs).
Communicator& world();

// Every MPI test derives from this. TearDown gathers each rank's HasFailure() so a failure on
// any rank fails the test on every rank (and rank 0, the only one printing, reports it); it also
// keeps the ranks in step between tests.
class MpiTest : public ::testing::Test {
 protected:
  Communicator& comm() { return world(); }
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
