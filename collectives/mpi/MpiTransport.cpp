#include "collectives/mpi/MpiTransport.h"

#include <fmt/format.h>

#include <vector>

#include "collectives/mpi/MpiPoll.h"
#include "collectives/mpi/MpiWorld.h"
#include "core/Buffer.h"
#include "core/Error.h"
#include "core/RankBoard.h"
#include "core/Reduce.h"

namespace cb {
namespace {

using mpi_detail::chunkBytes;
using mpi_detail::chunkCount;
using mpi_detail::kMaxChunk;
using mpi_detail::WaitResult;

// Schedules over MPI point-to-point. All receives are posted before all sends so no send waits
// for its receive to be posted; reducing receives land in a staging buffer that is kept and
// only grown, so timed iterations allocate nothing.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(Communicator& comm)
      : comm_(mpiCommOf(comm)), worldRanks_(worldRanksOf(comm_)) {
    rank_ = comm.rank();
    size_ = comm.size();
  }

  std::string_view name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override {
    reqs_.clear();
    posted_.clear();
    stagingOffsets_.clear();

    size_t staging = 0;
    for (const auto& r : recvs) {
      checkPeer(r.peer, "recv");
      stagingOffsets_.push_back(staging);
      if (r.reduce) {
        size_t es = dataTypeSize(r.dtype);
        if (r.bytes % es != 0) {
          throw InternalError(fmt::format("reducing recv of {} bytes is not a whole number of {}",
                                          r.bytes, dataTypeName(r.dtype)));
        }
        staging += (r.bytes + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
      }
    }
    if (staging > staging_.bytes()) staging_ = HostBuffer(staging);

    for (size_t i = 0; i < recvs.size(); ++i) {
      const auto& r = recvs[i];
      char* dst = r.reduce ? static_cast<char*>(staging_.data()) + stagingOffsets_[i]
                           : static_cast<char*>(r.dst);
      post(true, r.peer, dst, r.bytes);
    }
    for (const auto& s : sends) {
      checkPeer(s.peer, "send");
      const char* src = static_cast<const char*>(s.data);
      post(false, s.peer, const_cast<char*>(src), s.bytes);  // only read: MPI_Isend
    }

    statuses_.resize(reqs_.size());
    BoardWait mark("MPI exchange", worldRanks_, d);
    auto result = mpi_detail::waitAll(reqs_, statuses_, d, "MPI exchange");
    if (result != WaitResult::kDone) {
      size_t i = mpi_detail::firstPending(reqs_);
      const auto& p = posted_[std::min(i, posted_.size() - 1)];
      auto what =
          fmt::format("MPI exchange on rank {} ({} sends, {} recvs; waiting on {} rank {})", rank_,
                      sends.size(), recvs.size(), p.recv ? "recv from" : "send to", p.peer);
      mpi_detail::abandonPointToPoint(reqs_);
      if (result == WaitResult::kInterrupted) mpi_detail::throwInterrupted(what);
      mpi_detail::throwTimeout(what, d, worldRanks_);
    }

    size_t req = 0;
    for (size_t i = 0; i < recvs.size(); ++i) {
      const auto& r = recvs[i];
      for (size_t c = 0; c < chunkCount(r.bytes); ++c, ++req) {
        int got = 0;
        MPI_Get_count(&statuses_[req], MPI_BYTE, &got);
        if (got != posted_[req].bytes) {
          throw InternalError(fmt::format(
              "MPI exchange on rank {}: recv from rank {} expected {} bytes, the sender sent {} "
              "(mismatched schedules)",
              rank_, r.peer, posted_[req].bytes, got));
        }
      }
      if (r.reduce) {
        const char* incoming = static_cast<const char*>(staging_.data()) + stagingOffsets_[i];
        reduce(r.dtype, r.op, r.dst, r.local, incoming, r.bytes / dataTypeSize(r.dtype));
      }
    }
  }

 private:
  static constexpr size_t kStagingAlign = 64;

  struct Posted {
    bool recv;
    int peer;
    int bytes;
  };

  // One message as chunks of at most kMaxChunk bytes (an MPI count is an int), each with its
  // request and its record for the wait.
  void post(bool recv, int peer, char* data, size_t bytes) {
    for (size_t c = 0; c < chunkCount(bytes); ++c) {
      reqs_.push_back(MPI_REQUEST_NULL);
      posted_.push_back({recv, peer, chunkBytes(bytes, c)});
      char* at = data + c * kMaxChunk;
      if (recv) {
        checkMpi(MPI_Irecv(at, chunkBytes(bytes, c), MPI_BYTE, peer, kMpiScheduleTag, comm_,
                           &reqs_.back()),
                 "MPI_Irecv");
      } else {
        checkMpi(MPI_Isend(at, chunkBytes(bytes, c), MPI_BYTE, peer, kMpiScheduleTag, comm_,
                           &reqs_.back()),
                 "MPI_Isend");
      }
    }
  }

  void checkPeer(int peer, const char* what) const {
    if (peer < 0 || peer >= size_) {
      throw InternalError(
          fmt::format("schedule {} peer {} outside ranks 0..{}", what, peer, size_ - 1));
    }
  }

  MPI_Comm comm_;
  std::vector<int> worldRanks_;  // for the rank board
  int rank_ = 0;
  int size_ = 0;
  // Reused between calls so a timed exchange does not allocate once warmed up.
  std::vector<MPI_Request> reqs_;
  std::vector<MPI_Status> statuses_;
  std::vector<Posted> posted_;
  std::vector<size_t> stagingOffsets_;
  HostBuffer staging_;
};

}  // namespace

std::unique_ptr<Transport> makeMpiTransport(Communicator& comm) {
  return std::make_unique<MpiTransport>(comm);
}

}  // namespace cb
