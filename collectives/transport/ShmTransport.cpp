// Shared-memory transport (see ShmTransport.h).
//
// Segment layout (all offsets fixed by nranks, slots and slotBytes, checked by every rank):
//   header | one doorbell per rank | control of each channel (src, dst) | data of each channel
// A channel's control is `slots` slot headers (one cache line each, written by the sender only)
// followed by the consumed counter (its own padded line, written by the receiver only). Fill k
// (k = 1, 2, ...) of a channel goes to slot (k-1) % slots; the sender may write it once the
// receiver has consumed fill k - slots, and publishes it by storing seq = k in the slot header.
// Messages stream as fills of up to slotBytes; one of at most kInlineBytes rides inside the
// header line, so a small message costs the receiver a single cache-line transfer.
// Zero copy: a message of at least zeroCopyBytes that lies in shareable memory (SharedMemory.h;
// the engine's buffers and the executor's scratch) travels as one fill holding a descriptor of
// where it is; the receiver maps the sender's memory once and copies or reduces straight from it,
// and the send completes when the receiver has consumed the descriptor. That halves the memory
// traffic of large messages (no copy through the ring). Set-up checks that every rank can map
// every other's memory; otherwise every message streams through the rings.
//
// exchange() is one non-blocking progress loop over all its ops, so a phase that sends to A and
// receives from B never deadlocks when rings fill. Idle waiting spins, then yields, then sleeps on
// the rank's doorbell (a process-shared futex) that a peer rings after publishing or consuming a
// fill when the rank said it sleeps. Every wait checks the Deadline and interruptStopsWaits().
#include "collectives/transport/ShmTransport.h"

#include "collectives/transport/WaitPolicy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"
#include "core/HostMap.h"
#include "core/Interrupt.h"
#include "core/RankBoard.h"
#include "core/Reduce.h"
#include "core/SharedMemory.h"

namespace cb {
namespace {

constexpr uint64_t kMagic = 0x31686d7362632d63;  // "c-cbshm1"
constexpr size_t kLine = 64;
constexpr size_t kPad = 128;  // the adjacent-line prefetcher moves lines in pairs
constexpr size_t kPage = 4096;
constexpr size_t kInlineBytes = 40;
// Idle passes spent spinning, then yielding, before a rank sleeps on its doorbell. When the ranks
// outnumber the CPUs they may run on, a spinning rank only delays the peer it waits for (which
// needs its CPU), so ranks yield at once instead, as OpenMPI does with mpi_yield_when_idle.
// Yields are timed and stop while they give the CPU to another process (WaitPolicy.h).
constexpr int kSpinPasses = 2000;
constexpr int kYieldPasses = 200;
constexpr int kOversubscribedYieldPasses = 20000;
constexpr double kSleepSliceSeconds = 0.05;  // a sleeper re-checks deadline and signals this often

struct SlotHeader {
  uint64_t seq;                        // k once the slot holds fill k of the channel
  uint64_t messageBytes;               // size of the message the fill belongs to
  uint32_t fillBytes;                  // payload bytes in this fill
  uint32_t kind;                       // kData, or kDescriptor: inlineData holds a SharedRegionRef
  std::byte inlineData[kInlineBytes];  // the payload of messages of at most kInlineBytes
};
static_assert(sizeof(SlotHeader) == kLine);
static_assert(sizeof(SharedRegionRef) <= kInlineBytes);
constexpr uint32_t kData = 0;
constexpr uint32_t kDescriptor = 1;

struct SegmentHeader {
  uint64_t magic;
  uint64_t nranks;
  uint64_t slots;
  uint64_t slotBytes;
  uint64_t totalBytes;
};

struct Doorbell {
  uint32_t seq;       // bumped by a peer that wakes this rank (the futex word)
  uint32_t sleeping;  // set by this rank before it sleeps
};

template <class T>
std::atomic_ref<T> atomic(T& x) {
  return std::atomic_ref<T>(x);
}

size_t roundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

// This process's CPU affinity as one '0'/'1' character per CPU id.
std::string affinityMask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::string mask(CPU_SETSIZE, '0');
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) mask[c] = '1';
  }
  return mask;
}

void futexWait(uint32_t* word, uint32_t expected, double seconds) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  // Shared (not FUTEX_PRIVATE): the word lives in memory mapped by several processes.
  syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futexWakeAll(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

struct Layout {
  size_t doorbells, control, data, total;
  size_t controlStride, dataStride;

  Layout(size_t n, size_t slots, size_t slotBytes) {
    doorbells = kPad;
    controlStride = roundUp(slots * kLine, kPad) + kPad;
    control = doorbells + n * kPad;
    dataStride = slots * slotBytes;
    data = roundUp(control + n * n * controlStride, kPage);
    total = data + n * n * dataStride;
  }
};

std::string errnoText() { return std::strerror(errno); }

// A mapped shared-memory segment. The creator unlinks the name once every rank has mapped it
// (unlink()), or on destruction if set-up failed before that.
class Segment {
 public:
  Segment() = default;
  ~Segment() {
    if (base_) munmap(base_, bytes_);
    unlink();
  }
  Segment(Segment&& o) noexcept { *this = std::move(o); }
  Segment& operator=(Segment&& o) noexcept {
    if (this != &o) {
      if (base_) munmap(base_, bytes_);
      unlink();
      name_ = std::move(o.name_);
      base_ = std::exchange(o.base_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      owner_ = std::exchange(o.owner_, false);
    }
    return *this;
  }

  static Segment create(size_t bytes) {
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
      uint64_t salt = (static_cast<uint64_t>(rd()) << 32) ^ rd();
      std::string name =
          fmt::format("/collbench-{}-{}-{}-{:016x}", getuid(), getpid(), attempt, salt);
      int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
      if (fd < 0 && errno == EEXIST && attempt < 8) continue;
      if (fd < 0) throw EnvironmentError(fmt::format("shm_open({}): {}", name, errnoText()));
      Segment s;
      s.name_ = std::move(name);
      s.owner_ = true;  // from here on the destructor unlinks
      s.map(fd, bytes, true);
      return s;
    }
  }

  static Segment open(const std::string& name, size_t bytes) {
    int fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0) throw EnvironmentError(fmt::format("shm_open({}): {}", name, errnoText()));
    Segment s;
    s.name_ = name;
    s.map(fd, bytes, false);
    return s;
  }

  void unlink() {
    if (owner_) {
      shm_unlink(name_.c_str());
      owner_ = false;
    }
  }
  std::byte* base() const { return base_; }
  const std::string& name() const { return name_; }

 private:
  void map(int fd, size_t bytes, bool resize) {
    struct FdCloser {
      int fd;
      ~FdCloser() { close(fd); }
    } closer{fd};
    if (resize && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      throw EnvironmentError(fmt::format("ftruncate({}, {} bytes): {} (is /dev/shm big enough?)",
                                         name_, bytes, errnoText()));
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
      throw EnvironmentError(fmt::format("shared segment {} has {} bytes, expected {}", name_,
                                         static_cast<long long>(st.st_size), bytes));
    }
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      throw EnvironmentError(fmt::format("mmap({}, {} bytes): {}", name_, bytes, errnoText()));
    }
    base_ = static_cast<std::byte*>(p);
    bytes_ = bytes;
  }

  std::string name_;
  std::byte* base_ = nullptr;
  size_t bytes_ = 0;
  bool owner_ = false;
};

struct OpState {
  size_t offset = 0;
  uint64_t ackSeq = 0;  // a zero-copy send: done once the receiver has consumed this fill
  bool done = false;
  bool started = false;  // the receiver has checked the first fill's message size
};

class ShmTransport final : public Transport {
 public:
  ShmTransport(Communicator& comm, const ShmOptions& o);

  std::string_view name() const override { return "shm"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override;
  uint64_t zeroCopySends() const override { return zeroCopySends_; }

 private:
  SlotHeader& header(int src, int dst, uint64_t slot) const {
    return reinterpret_cast<SlotHeader*>(
        base_ + layout_.control + (static_cast<size_t>(src) * size_ + dst) * layout_.controlStride +
        slot * kLine)[0];
  }
  uint64_t& consumed(int src, int dst) const {
    return *reinterpret_cast<uint64_t*>(
        base_ + layout_.control + (static_cast<size_t>(src) * size_ + dst) * layout_.controlStride +
        layout_.controlStride - kPad);
  }
  std::byte* slotData(int src, int dst, uint64_t slot) const {
    return base_ + layout_.data + (static_cast<size_t>(src) * size_ + dst) * layout_.dataStride +
           slot * slotBytes_;
  }
  Doorbell& doorbell(int r) const {
    return *reinterpret_cast<Doorbell*>(base_ + layout_.doorbells + static_cast<size_t>(r) * kPad);
  }

  void wake(int peer) const {
    Doorbell& db = doorbell(peer);
    if (atomic(db.sleeping).load(std::memory_order_seq_cst)) {
      atomic(db.seq).fetch_add(1, std::memory_order_seq_cst);
      futexWakeAll(&db.seq);
    }
  }

  bool progressSend(const SendOp& op, OpState& st);
  const std::byte* peerMemory(int peer, const SharedRegionRef& ref, size_t bytes);
  bool probeZeroCopy(Communicator& comm, Deadline d);
  bool progressRecv(const RecvOp& op, OpState& st);
  bool progressAll(std::span<const SendOp> sends, std::span<const RecvOp> recvs, size_t& left);
  std::string pendingSummary(std::span<const SendOp> sends, std::span<const RecvOp> recvs) const;

  int rank_;
  int size_;
  std::vector<int> worldRanks_;  // MPI world rank of each rank, for the rank board; else empty
  size_t slotBytes_;
  uint64_t slots_;
  Layout layout_;
  Segment segment_;
  std::byte* base_ = nullptr;
  // Per peer: fills published to it, its consumed counter as last read, fills consumed from it.
  std::vector<uint64_t> sent_, peerConsumed_, received_;
  // Reused by every exchange so a warmed-up call allocates nothing.
  std::vector<OpState> sendState_, recvState_;
  std::vector<uint64_t> sendBusy_, recvBusy_;  // pass stamp: an earlier op to the peer is pending
  uint64_t pass_ = 0;
  bool broken_ = false;  // an exchange failed midway: the channels' state is no longer shared
  int spinPasses_ = kSpinPasses;
  int yieldPasses_ = kYieldPasses;
  size_t zeroCopyBytes_;  // SIZE_MAX: zero copy off
  uint64_t zeroCopySends_ = 0;
  // Peers' shareable regions mapped here, by (peer, region id). A transport lives as long as
  // the run (the team caches it) while buffers come and go, so a mapping not used for a while is
  // dropped once there are more than kMaxPeerMappings: a mapping keeps the peer's freed memory
  // alive. Never one the current exchange uses.
  struct Mapped {
    PeerMapping mapping;
    uint64_t lastExchange;
  };
  static constexpr size_t kMaxPeerMappings = 32;
  std::map<std::pair<int, uint64_t>, Mapped> peerMaps_;
  uint64_t exchanges_ = 0;
};

ShmTransport::ShmTransport(Communicator& comm, const ShmOptions& o)
    : rank_(comm.rank()),
      size_(comm.size()),
      slotBytes_(o.slotBytes),
      slots_(static_cast<uint64_t>(std::max(o.slots, 1))),
      layout_(static_cast<size_t>(comm.size()), slots_, o.slotBytes),
      zeroCopyBytes_(o.zeroCopyBytes) {
  if (comm.worldKind() == WorldKind::kMpi) worldRanks_ = worldRanksOf(mpiCommOf(comm));
  if (o.slots < 1 || o.slotBytes < kPage || o.slotBytes % kPage != 0 ||
      o.slotBytes > (size_t{1} << 31)) {
    throw UsageError(fmt::format(
        "shm transport: {} slot(s) of {} bytes; need >= 1 slot of a multiple of 4 KiB up to 2 GiB",
        o.slots, o.slotBytes));
  }
  const Deadline d = Deadline::after(o.setupSeconds);
  auto hosts = comm.allgatherStrings(hostName(), d);
  // Oversubscribed when the ranks outnumber the CPUs of all their affinity masks together (one
  // rank per CPU when mpirun binds, all CPUs for each when it doesn't).
  const size_t ncpus = cpusInUnion(comm.allgatherStrings(affinityMask(), d));
  if (ncpus > 0 && static_cast<size_t>(size_) > ncpus) {
    spinPasses_ = 0;
    yieldPasses_ = kOversubscribedYieldPasses;
  }
  for (int r = 1; r < size_; ++r) {
    if (hosts[r] != hosts[0]) {
      throw UsageError(fmt::format(
          "the shm transport needs all ranks on one host (rank 0 runs on {}, rank {} on {})",
          hosts[0], r, hosts[r]));
    }
  }

  // Rank 0 creates and initializes the segment, then tells the others its name (or its error).
  std::string fromRoot;
  if (rank_ == 0) {
    try {
      segment_ = Segment::create(layout_.total);
      auto* h = reinterpret_cast<SegmentHeader*>(segment_.base());
      *h = SegmentHeader{kMagic, static_cast<uint64_t>(size_), slots_, slotBytes_, layout_.total};
      fromRoot = segment_.name();
    } catch (const Error& e) {
      fromRoot = std::string("!") + e.what();
    }
  }
  fromRoot = comm.allgatherStrings(rank_ == 0 ? fromRoot : std::string(), d)[0];
  if (fromRoot.empty() || fromRoot[0] == '!') {
    throw EnvironmentError(fmt::format("shm transport: rank 0 could not create the segment: {}",
                                       fromRoot.empty() ? "?" : fromRoot.substr(1)));
  }
  std::string myError;
  if (rank_ != 0) {
    try {
      segment_ = Segment::open(fromRoot, layout_.total);
      const auto* h = reinterpret_cast<const SegmentHeader*>(segment_.base());
      if (h->magic != kMagic || h->nranks != static_cast<uint64_t>(size_) || h->slots != slots_ ||
          h->slotBytes != slotBytes_ || h->totalBytes != layout_.total) {
        throw EnvironmentError(fmt::format("shared segment {} has a foreign layout", fromRoot));
      }
    } catch (const Error& e) {
      myError = e.what();
    }
  }
  // Doubles as the barrier after mapping: past it every rank holds a mapping (or failed), so the
  // name can go at once and nothing is left behind however the processes end.
  auto errors = comm.allgatherStrings(myError, d);
  segment_.unlink();
  for (int r = 0; r < size_; ++r) {
    if (!errors[r].empty()) {
      throw EnvironmentError(fmt::format("shm transport on rank {}: {}", r, errors[r]));
    }
  }
  // Once the transport exists on any rank, the name is gone from /dev/shm.
  comm.barrier(d);
  base_ = segment_.base();
  if (zeroCopyBytes_ != SIZE_MAX && !probeZeroCopy(comm, d)) zeroCopyBytes_ = SIZE_MAX;
  sent_.assign(size_, 0);
  peerConsumed_.assign(size_, 0);
  received_.assign(size_, 0);
  sendBusy_.assign(size_, 0);
  recvBusy_.assign(size_, 0);
}

// Every rank maps one page of every other rank's shareable memory: zero copy is on only if all
// of them can (the same user, /proc mounted, memfd available).
bool ShmTransport::probeZeroCopy(Communicator& comm, Deadline d) {
  SharedHostBuffer probe(kPage);
  std::string mine;
  if (auto ref = findSharedRegion(probe.data(), kPage)) {
    mine.assign(reinterpret_cast<const char*>(&*ref), sizeof(*ref));
  }
  auto refs = comm.allgatherStrings(mine, d);
  bool ok = true;
  for (int r = 0; r < size_ && ok; ++r) {
    if (refs[r].size() != sizeof(SharedRegionRef)) {
      ok = false;
    } else if (r != rank_) {
      SharedRegionRef ref;
      std::memcpy(&ref, refs[r].data(), sizeof(ref));
      try {
        PeerMapping m(ref);
      } catch (const EnvironmentError&) {
        ok = false;
      }
    }
  }
  // Also the barrier that keeps every probe page alive until all ranks have mapped it.
  return !comm.anyTrue(!ok, d);
}

const std::byte* ShmTransport::peerMemory(int peer, const SharedRegionRef& ref, size_t bytes) {
  if (ref.offset > ref.regionBytes || bytes > ref.regionBytes - ref.offset) {
    throw InternalError(
        fmt::format("shm zero-copy descriptor from rank {} out of its region", peer));
  }
  auto key = std::make_pair(peer, ref.id);
  auto it = peerMaps_.find(key);
  if (it == peerMaps_.end()) {
    if (peerMaps_.size() >= kMaxPeerMappings) {
      auto oldest = std::min_element(peerMaps_.begin(), peerMaps_.end(), [](auto& a, auto& b) {
        return a.second.lastExchange < b.second.lastExchange;
      });
      if (oldest->second.lastExchange < exchanges_) peerMaps_.erase(oldest);
    }
    it = peerMaps_.emplace(key, Mapped{PeerMapping(ref), exchanges_}).first;
  }
  it->second.lastExchange = exchanges_;
  return it->second.mapping.base() + ref.offset;
}

bool ShmTransport::progressSend(const SendOp& op, OpState& st) {
  const int p = op.peer;
  if (st.ackSeq) {
    peerConsumed_[p] = atomic(consumed(rank_, p)).load(std::memory_order_acquire);
    st.done = peerConsumed_[p] >= st.ackSeq;
    return st.done;
  }
  const bool inlined = op.bytes <= kInlineBytes;
  bool progressed = false;
  while (!st.done) {
    const uint64_t k = sent_[p] + 1;
    if (k > peerConsumed_[p] + slots_) {
      peerConsumed_[p] = atomic(consumed(rank_, p)).load(std::memory_order_acquire);
      if (k > peerConsumed_[p] + slots_) break;  // ring full
    }
    const uint64_t slot = (k - 1) % slots_;
    SlotHeader& h = header(rank_, p, slot);
    if (st.offset == 0 && op.bytes >= zeroCopyBytes_ && op.bytes > kInlineBytes) {
      if (auto ref = findSharedRegion(op.data, op.bytes)) {
        std::memcpy(h.inlineData, &*ref, sizeof(*ref));
        h.messageBytes = op.bytes;
        h.fillBytes = 0;
        h.kind = kDescriptor;
        atomic(h.seq).store(k, std::memory_order_seq_cst);
        sent_[p] = k;
        st.offset = op.bytes;
        st.ackSeq = k;
        ++zeroCopySends_;
        wake(p);
        return true;
      }
    }
    const size_t n = std::min(slotBytes_, op.bytes - st.offset);
    const auto* src = static_cast<const std::byte*>(op.data) + st.offset;
    if (n) std::memcpy(inlined ? h.inlineData : slotData(rank_, p, slot), src, n);
    h.messageBytes = op.bytes;
    h.fillBytes = static_cast<uint32_t>(n);
    h.kind = kData;
    atomic(h.seq).store(k, std::memory_order_seq_cst);  // publish; orders the doorbell check
    sent_[p] = k;
    st.offset += n;
    st.done = st.offset == op.bytes;
    progressed = true;
    wake(p);
  }
  return progressed;
}

bool ShmTransport::progressRecv(const RecvOp& op, OpState& st) {
  const int p = op.peer;
  bool progressed = false;
  while (!st.done) {
    const uint64_t k = received_[p] + 1;
    const uint64_t slot = (k - 1) % slots_;
    const SlotHeader& h = header(p, rank_, slot);
    if (atomic(const_cast<uint64_t&>(h.seq)).load(std::memory_order_acquire) != k) break;
    size_t n = h.fillBytes;
    if ((!st.started && h.messageBytes != op.bytes) || n > op.bytes - st.offset) {
      throw InternalError(fmt::format(
          "shm exchange on rank {}: receive from rank {} expected {} bytes, the sender sent {} "
          "(mismatched schedules)",
          rank_, p, op.bytes, h.messageBytes));
    }
    st.started = true;
    const std::byte* src = op.bytes <= kInlineBytes ? h.inlineData : slotData(p, rank_, slot);
    if (h.kind == kDescriptor) {
      if (st.offset != 0)
        throw InternalError("shm zero-copy descriptor in the middle of a message");
      SharedRegionRef ref;
      std::memcpy(&ref, h.inlineData, sizeof(ref));
      src = peerMemory(p, ref, op.bytes);
      n = op.bytes;
    }
    if (op.reduce) {
      const size_t es = dataTypeSize(op.dtype);
      reduce(op.dtype, op.op, static_cast<std::byte*>(op.dst) + st.offset,
             static_cast<const std::byte*>(op.local) + st.offset, src, n / es, op.bytes);
    } else if (n) {
      copyPiece(static_cast<std::byte*>(op.dst) + st.offset, src, n, op.bytes);
    }
    atomic(consumed(p, rank_)).store(k, std::memory_order_seq_cst);  // frees the slot
    received_[p] = k;
    st.offset += n;
    st.done = st.offset == op.bytes;
    progressed = true;
    wake(p);
  }
  return progressed;
}

// One pass over every pending op. Ops to the same peer progress in posting order: once one is
// found unfinished, later ones to that peer wait for the next pass.
bool ShmTransport::progressAll(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                               size_t& left) {
  ++pass_;
  bool progressed = false;
  // The two directions' loops stay written out: one generic pass over both made 8 B-8 KiB
  // allreduce 7-15% slower here (medians of 5 interleaved runs, 2026-11-27).
  for (size_t i = 0; i < sends.size(); ++i) {
    OpState& st = sendState_[i];
    if (st.done || sendBusy_[sends[i].peer] == pass_) continue;
    progressed |= progressSend(sends[i], st);
    if (st.done) {
      --left;
    } else {
      sendBusy_[sends[i].peer] = pass_;
    }
  }
  for (size_t i = 0; i < recvs.size(); ++i) {
    OpState& st = recvState_[i];
    if (st.done || recvBusy_[recvs[i].peer] == pass_) continue;
    progressed |= progressRecv(recvs[i], st);
    if (st.done) {
      --left;
    } else {
      recvBusy_[recvs[i].peer] = pass_;
    }
  }
  return progressed;
}

std::string ShmTransport::pendingSummary(std::span<const SendOp> sends,
                                         std::span<const RecvOp> recvs) const {
  std::string out;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sendState_[i].ackSeq && !sendState_[i].done) {
      out += fmt::format("{}zero-copy send to rank {} ({} bytes, not read yet)",
                         out.empty() ? "" : ", ", sends[i].peer, sends[i].bytes);
    } else if (!sendState_[i].done) {
      out += fmt::format("{}send to rank {} ({}/{} bytes)", out.empty() ? "" : ", ", sends[i].peer,
                         sendState_[i].offset, sends[i].bytes);
    }
  }
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (!recvState_[i].done) {
      out += fmt::format("{}receive from rank {} ({}/{} bytes)", out.empty() ? "" : ", ",
                         recvs[i].peer, recvState_[i].offset, recvs[i].bytes);
    }
  }
  return out;
}

void ShmTransport::exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                            Deadline d) {
  if (broken_) {
    throw InternalError("shm transport used again after an exchange failed midway");
  }
  ++exchanges_;
  for (const auto& s : sends) {
    if (s.peer < 0 || s.peer >= size_) {
      throw InternalError(fmt::format("shm send to rank {} outside 0..{}", s.peer, size_ - 1));
    }
  }
  for (const auto& r : recvs) {
    if (r.peer < 0 || r.peer >= size_) {
      throw InternalError(fmt::format("shm receive from rank {} outside 0..{}", r.peer, size_ - 1));
    }
    if (r.reduce && r.bytes % dataTypeSize(r.dtype) != 0) {
      throw InternalError(fmt::format("reducing receive of {} bytes is not a whole number of {}",
                                      r.bytes, dataTypeName(r.dtype)));
    }
  }
  sendState_.assign(sends.size(), OpState{});
  recvState_.assign(recvs.size(), OpState{});
  size_t left = sends.size() + recvs.size();
  Doorbell& mine = doorbell(rank_);
  bool armed = false;  // said we sleep; one more pass without progress, then sleep
  BoardWait mark("shm exchange", worldRanks_, d);
  uint32_t armedSeq = 0;
  int idle = 0;
  auto stopOnSignal = [&] {
    if (interruptStopsWaits()) {
      throw InterruptedError(fmt::format("shm exchange on rank {} interrupted by signal {}", rank_,
                                         interruptSignal()));
    }
  };
  try {
    while (left) {
      if (progressAll(sends, recvs, left)) {
        idle = 0;
        if (armed) {
          atomic(mine.sleeping).store(0, std::memory_order_relaxed);
          armed = false;
        }
        // An exchange of gigabytes progresses for seconds without idling once.
        stopOnSignal();
        continue;
      }
      if (armed) {
        // A peer that published after `armedSeq` was read saw sleeping = 1 and bumped seq, so
        // this returns at once; otherwise it sleeps until rung (or the slice ends).
        double remaining = std::chrono::duration<double>(d.at() - SteadyClock::now()).count();
        futexWait(&mine.seq, armedSeq, std::clamp(remaining, 1e-6, kSleepSliceSeconds));
        atomic(mine.sleeping).store(0, std::memory_order_relaxed);
        armed = false;
      } else if (++idle < spinPasses_) {
        cpuRelax();
        continue;
      }
      stopOnSignal();
      if (d.expired()) {
        const std::string board = boardHangReport(worldRanks_);
        throw TimeoutError(fmt::format(
            "shm exchange on rank {} ({}) did not complete within {:g} s "
            "(-T){}{}",
            rank_, pendingSummary(sends, recvs), d.seconds(), board.empty() ? "" : ": ", board));
      }
      if (idle < spinPasses_ + yieldPasses_ && yieldsAllowed()) {
        timedYield();
      } else {
        atomic(mine.sleeping).store(1, std::memory_order_seq_cst);
        armedSeq = atomic(mine.seq).load(std::memory_order_seq_cst);
        armed = true;
      }
    }
  } catch (...) {
    atomic(mine.sleeping).store(0, std::memory_order_relaxed);
    broken_ = true;
    throw;
  }
}

}  // namespace

size_t cpusInUnion(const std::vector<std::string>& masks) {
  std::string all;
  for (const auto& m : masks) {
    all.resize(std::max(all.size(), m.size()), '0');
    for (size_t c = 0; c < m.size(); ++c) {
      if (m[c] == '1') all[c] = '1';
    }
  }
  return static_cast<size_t>(std::count(all.begin(), all.end(), '1'));
}

std::unique_ptr<Transport> makeShmTransport(Communicator& comm, const ShmOptions& opts) {
  return std::make_unique<ShmTransport>(comm, opts);
}

}  // namespace cb
