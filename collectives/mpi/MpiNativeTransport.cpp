#include "collectives/mpi/MpiNativeTransport.h"

#include <fmt/format.h>

#include <climits>
#include <vector>

#include "collectives/mpi/MpiPoll.h"
#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"

namespace cb {
namespace {

// Tag of every mpi-native message, on a communicator of its own: nothing else can match it.
constexpr int kNativeTag = 7;

class MpiNativeTransport final : public Transport {
 public:
  explicit MpiNativeTransport(Communicator& comm) {
    checkMpi(MPI_Comm_dup(mpiCommOf(comm), &comm_), "MPI_Comm_dup (mpi-native)");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiNativeTransport() override {
    if (comm_ != MPI_COMM_NULL && !mpi_detail::mpiFinalized()) MPI_Comm_free(&comm_);
  }
  MpiNativeTransport(const MpiNativeTransport&) = delete;
  MpiNativeTransport& operator=(const MpiNativeTransport&) = delete;

  std::string_view name() const override { return "mpi-native"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override {
    reqs_.resize(sends.size() + recvs.size());
    size_t i = 0;
    for (const RecvOp& r : recvs) {
      if (r.reduce) throw UsageError("the mpi-native transport does not reduce");
      checkMpi(
          MPI_Irecv(r.dst, messageCount(r.bytes), MPI_BYTE, r.peer, kNativeTag, comm_, &reqs_[i++]),
          "MPI_Irecv (mpi-native)");
    }
    for (const SendOp& s : sends) {
      checkMpi(MPI_Isend(const_cast<void*>(s.data), messageCount(s.bytes), MPI_BYTE, s.peer,
                         kNativeTag, comm_, &reqs_[i++]),
               "MPI_Isend (mpi-native)");
    }
    auto result = mpi_detail::waitAll(reqs_, {}, d, "mpi-native wait");
    if (result == mpi_detail::WaitResult::kDone) return;
    mpi_detail::abandonPointToPoint(reqs_);
    if (result == mpi_detail::WaitResult::kInterrupted) {
      throw InterruptedError("interrupted while waiting for mpi-native messages");
    }
    throw TimeoutError(fmt::format("mpi-native exchange on rank {} did not complete within {} s",
                                   rank_, d.seconds()));
  }

 private:
  static int messageCount(size_t bytes) {
    if (bytes > static_cast<size_t>(INT_MAX)) {
      throw UsageError(fmt::format("mpi-native sends at most {} bytes per message", INT_MAX));
    }
    return static_cast<int>(bytes);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 0;
  std::vector<MPI_Request> reqs_;
};

}  // namespace

std::unique_ptr<Transport> makeMpiNativeTransport(Communicator& comm) {
  return std::make_unique<MpiNativeTransport>(comm);
}

}  // namespace cb
