// The MPI world: initialization, the Communicator over an MPI_Comm and the point-to-point
// Transport that runs schedules over MPI.
//
// Every wait is a non-blocking call plus a test loop (MpiPoll.h) so it honours its Deadline.
// Messages larger than kMaxChunk bytes travel as several messages with the same tag (MPI counts
// are int); both sides split the same way and MPI keeps them in order.
#include "collectives/mpi/MpiWorld.h"

#include <fmt/format.h>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "collectives/mpi/MpiPoll.h"
#include "core/Buffer.h"
#include "core/Error.h"
#include "core/HostMap.h"
#include "core/Interrupt.h"
#include "core/RankBoard.h"
#include "core/Reduce.h"
#include "core/Text.h"

namespace cb {
namespace {

using mpi_detail::WaitResult;

using mpi_detail::chunkBytes;
using mpi_detail::chunkCount;
using mpi_detail::kMaxChunk;

bool envSet(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

class MpiCommunicator final : public Communicator {
 public:
  // Takes ownership of `comm` (frees it on destruction).
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    try {
      checkMpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
      checkMpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
      checkMpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
      worldRanks_ = worldRanksOf(comm_);
    } catch (...) {
      MPI_Comm_free(&comm_);
      throw;
    }
  }
  ~MpiCommunicator() override {
    if (comm_ != MPI_COMM_NULL && !mpi_detail::mpiFinalized()) MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  WorldKind worldKind() const override { return WorldKind::kMpi; }

  void send(int peer, const void* data, size_t bytes, int tag, Deadline d) override {
    checkPeerAndTag(peer, tag, "send");
    std::vector<MPI_Request> reqs(chunkCount(bytes), MPI_REQUEST_NULL);
    const auto* p = static_cast<const char*>(data);
    for (size_t c = 0; c < reqs.size(); ++c) {
      checkMpi(
          MPI_Isend(p + c * kMaxChunk, chunkBytes(bytes, c), MPI_BYTE, peer, tag, comm_, &reqs[c]),
          "MPI_Isend");
    }
    wait("send", reqs, {}, d, [&] { return fmt::format("send to rank {} (tag {})", peer, tag); });
  }

  void recv(int peer, void* data, size_t bytes, int tag, Deadline d) override {
    checkPeerAndTag(peer, tag, "recv");
    size_t n = chunkCount(bytes);
    std::vector<MPI_Request> reqs(n, MPI_REQUEST_NULL);
    std::vector<MPI_Status> statuses(n);
    auto* p = static_cast<char*>(data);
    for (size_t c = 0; c < n; ++c) {
      checkMpi(
          MPI_Irecv(p + c * kMaxChunk, chunkBytes(bytes, c), MPI_BYTE, peer, tag, comm_, &reqs[c]),
          "MPI_Irecv");
    }
    auto what = [&] { return fmt::format("recv from rank {} (tag {})", peer, tag); };
    wait("recv", reqs, statuses, d, what);
    for (size_t c = 0; c < n; ++c) {
      int got = 0;
      MPI_Get_count(&statuses[c], MPI_BYTE, &got);
      if (got != chunkBytes(bytes, c)) {
        throw UsageError(fmt::format("{}: expected {} bytes, the sender sent {}", what(),
                                     chunkBytes(bytes, c), got));
      }
    }
  }

  void barrier(Deadline d) override {
    MPI_Request req = MPI_REQUEST_NULL;
    checkMpi(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
    waitCollective(req, d, "barrier");
  }
  void idleBarrier(Deadline d) override {
    MPI_Request req = MPI_REQUEST_NULL;
    checkMpi(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
    waitCollective(req, d, "barrier", true);
  }

  std::vector<std::byte> allgatherBytes(const void* data, size_t bytes, Deadline d) override {
    if (bytes > static_cast<size_t>(INT_MAX)) {
      throw UsageError(fmt::format("allgatherBytes of {} bytes exceeds MPI's int count", bytes));
    }
    // Private copies: if the deadline passes, MPI still owns both buffers (a non-blocking
    // collective can't be cancelled), so they must outlive the caller's.
    std::vector<std::byte> in(bytes);
    if (bytes) std::memcpy(in.data(), data, bytes);
    std::vector<std::byte> out(bytes * static_cast<size_t>(size_));
    MPI_Request req = MPI_REQUEST_NULL;
    checkMpi(MPI_Iallgather(in.data(), static_cast<int>(bytes), MPI_BYTE, out.data(),
                            static_cast<int>(bytes), MPI_BYTE, comm_, &req),
             "MPI_Iallgather");
    try {
      waitCollective(req, d, "allgather");
    } catch (const Error&) {
      abandoned_.push_back(std::move(in));
      abandoned_.push_back(std::move(out));
      throw;
    }
    return out;
  }

  std::unique_ptr<Communicator> split(int color, int key, Deadline d) override {
    if (color < 0) throw UsageError(fmt::format("split color must be >= 0 (got {})", color));
    // MPI_Comm_split blocks without a deadline; a barrier first makes sure every rank is there,
    // so a missing rank surfaces as a TimeoutError rather than a hang.
    barrier(d);
    MPI_Comm out = MPI_COMM_NULL;
    checkMpi(MPI_Comm_split(comm_, color, key, &out), "MPI_Comm_split");
    return std::make_unique<MpiCommunicator>(out);
  }

 private:
  void checkPeerAndTag(int peer, int tag, const char* what) const {
    if (peer < 0 || peer >= size_) {
      throw UsageError(fmt::format("{} to/from rank {}: the communicator has ranks 0..{}", what,
                                   peer, size_ - 1));
    }
    if (tag < 0 || tag >= kMpiReservedTagBase) {
      throw UsageError(fmt::format("{} tag {} outside [0, {}) (higher tags are reserved)", what,
                                   tag, kMpiReservedTagBase));
    }
  }

  template <class What>
  void wait(const char* call, std::span<MPI_Request> reqs, std::span<MPI_Status> statuses,
            Deadline d, What what) {
    BoardWait mark(call, worldRanks_, d);
    auto r = mpi_detail::waitAll(reqs, statuses, d, "MPI_Testall");
    if (r == WaitResult::kDone) return;
    mpi_detail::abandonPointToPoint(reqs);
    if (r == WaitResult::kInterrupted) mpi_detail::throwInterrupted(what());
    mpi_detail::throwTimeout(what(), d, worldRanks_);
  }

  void waitCollective(MPI_Request& req, Deadline d, const char* what, bool idle = false) {
    BoardWait mark(what, worldRanks_, d);
    auto r = mpi_detail::waitAll({&req, 1}, {}, d, what, idle);
    if (r == WaitResult::kDone) return;
    // The request can be neither cancelled nor freed (MPI forbids both for collectives); it
    // stays pending and dies with the communicator; after an interrupt the process then leaves
    // without MPI_Finalize (session/WorldFailure).
    if (r == WaitResult::kInterrupted) {
      mpi_detail::throwInterrupted(fmt::format("{} on rank {} of {}", what, rank_, size_));
    }
    mpi_detail::throwTimeout(fmt::format("{} on rank {} of {}", what, rank_, size_), d,
                             worldRanks_);
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
  std::vector<int> worldRanks_;  // of each rank of comm_, for the rank board
  // Buffers of timed-out non-blocking collectives that MPI may still write.
  std::vector<std::vector<std::byte>> abandoned_;
};

}  // namespace

bool launchedByMpiLauncher() {
  if (envSet("OMPI_COMM_WORLD_SIZE") || envSet("PMI_SIZE") || envSet("PMIX_RANK")) return true;
  return envSet("SLURM_PROCID") && (envSet("PMI_RANK") || envSet("PMI_FD") || envSet("PMI_SIZE"));
}

std::string mpiLibraryVersion() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(buf, &len) != MPI_SUCCESS) return "unknown MPI library";
  // Open MPI counts the terminating NUL in len: stop at the first NUL or newline.
  std::string_view v(buf, strnlen(buf, static_cast<size_t>(std::max(len, 0))));
  v = v.substr(0, v.find('\n'));
  return std::string(trim(v));
}

void checkMpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char buf[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS) {
    throw MpiError(fmt::format("{}: MPI error code {}", what, rc));
  }
  throw MpiError(fmt::format("{}: {}", what, std::string_view(buf, static_cast<size_t>(len))));
}

MpiWorld::MpiWorld() {
  int flag = 0;
  MPI_Finalized(&flag);
  if (flag) throw MpiError("MPI was already finalized in this process; it cannot start again");
  MPI_Initialized(&flag);
  if (flag) throw MpiError("MPI is already initialized in this process (one MpiWorld only)");
  // MPI_THREAD_SINGLE, as OSU, IMB and nccl-tests (MPI_Init) ask: only the main thread calls
  // MPI. Open MPI turns its internal locking on for any other level (ompi_mpi_init.c:
  // opal_set_using_threads(true) unless SINGLE), which cost ~0.2 us per MPI_Allreduce at 8 B here
  // (docs/MEASUREMENT.md). collbench's other threads (verification, watchdogs) never call MPI.
  int provided = 0;
  checkMpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
  try {
    // Errors come back as return codes (turned into MpiError) instead of aborting the job.
    checkMpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    world_ = makeMpiCommunicator(MPI_COMM_WORLD);
    deferInterruptsToAgreedPoints();
    setUpRankBoard();
  } catch (...) {
    detachRankBoard();
    world_.reset();
    MPI_Finalize();
    throw;
  }
}

MpiWorld::~MpiWorld() { finalize(); }

void MpiWorld::finalize() {
  detachRankBoard();
  world_.reset();
  if (!mpi_detail::mpiFinalized()) MPI_Finalize();
}

// The host's lowest rank makes the board's memory; the others of the host map it through /proc.
// A rank that can't map it keeps a board of its own (its watchdog still bounds blocking calls); the
// hang line then sees no peer.
void MpiWorld::setUpRankBoard() {
  Communicator& w = *world_;
  const Deadline d = Deadline::after(kBoardSetUpSeconds);
  auto hosts = w.allgatherStrings(hostName(), d);
  int leader = w.rank();
  for (int r = 0; r < w.size(); ++r) {
    if (hosts[static_cast<size_t>(r)] == hosts[static_cast<size_t>(w.rank())]) {
      leader = r;
      break;
    }
  }
  std::optional<SharedRegionRef> mine;
  if (leader == w.rank()) {
    board_ = SharedHostBuffer(sizeof(RankSlot) * static_cast<size_t>(w.size()));
    mine = findSharedRegion(board_.data(), board_.bytes());
  }
  SharedRegionRef none{};
  auto refs = w.allgather(mine.value_or(none), d);
  const SharedRegionRef& ref = refs[static_cast<size_t>(leader)];
  RankSlot* slots = nullptr;
  if (leader == w.rank()) {
    slots = mine ? static_cast<RankSlot*>(board_.data()) : nullptr;
  } else if (ref.pid > 0) {
    try {
      boardMapping_ = PeerMapping(ref);
      slots = reinterpret_cast<RankSlot*>(boardMapping_.base());
    } catch (const EnvironmentError&) {
      slots = nullptr;
    }
  }
  // Every rank maps the leader's memory before it could end.
  w.barrier(d);
  std::vector<bool> visible(static_cast<size_t>(w.size()));
  for (int r = 0; r < w.size(); ++r) {
    visible[static_cast<size_t>(r)] =
        slots ? hosts[static_cast<size_t>(r)] == hosts[static_cast<size_t>(w.rank())]
              : r == w.rank();
  }
  if (!slots) {
    board_ = SharedHostBuffer(sizeof(RankSlot) * static_cast<size_t>(w.size()));
    slots = static_cast<RankSlot*>(board_.data());
  }
  attachRankBoard(slots, w.size(), w.rank(), std::move(visible), std::move(hosts));
}

std::vector<int> worldRanksOf(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  checkMpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
  checkMpi(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  int n = 0;
  MPI_Group_size(group, &n);
  std::vector<int> in(static_cast<size_t>(n));
  std::vector<int> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<size_t>(i)] = i;
  const int rc = MPI_Group_translate_ranks(group, n, in.data(), world, out.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  checkMpi(rc, "MPI_Group_translate_ranks");
  return out;
}

MPI_Comm mpiCommOf(const Communicator& comm) {
  const auto* m = dynamic_cast<const MpiCommunicator*>(&comm);
  if (!m) {
    throw UsageError(fmt::format("MPI needed, but this is a {} world (run under mpirun)",
                                 worldKindName(comm.worldKind())));
  }
  return m->comm();
}

std::unique_ptr<Communicator> makeMpiCommunicator(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  checkMpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  return std::make_unique<MpiCommunicator>(dup);
}

}  // namespace cb
