// Host memory that other processes of the same user on this host can map, for zero-copy
// transports (the shm transport reads a peer's send buffer in place instead of streaming it
// through its rings, as XPMEM or CMA let MPI libraries do).
//
// A SharedHostBuffer is a memfd mapped MAP_SHARED: it has no name, so nothing can be left in
// /dev/shm, and it disappears with the last process holding it. A peer maps it through
// /proc/<pid>/fd/<fd> (same user; no ptrace attach needed). Every SharedHostBuffer is entered
// in a process-wide table so a transport, which sees only raw pointers, can tell that a message
// lies in shareable memory and how a peer reaches it: the one piece of process-wide state, kept
// for the same reason UCX and MPI keep registration caches. Where memfd_create is not available
// the buffer is plain private memory and simply not shareable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace cb {

class SharedHostBuffer {
 public:
  SharedHostBuffer() = default;
  explicit SharedHostBuffer(size_t bytes);
  ~SharedHostBuffer();
  SharedHostBuffer(SharedHostBuffer&& o) noexcept;
  SharedHostBuffer& operator=(SharedHostBuffer&& o) noexcept;
  SharedHostBuffer(const SharedHostBuffer&) = delete;
  SharedHostBuffer& operator=(const SharedHostBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool shareable() const { return fd_ >= 0; }
  void faultIn();

 private:
  void release();
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t mapped_ = 0;  // bytes rounded up to pages
  int fd_ = -1;        // the memfd; -1 for private memory
};

// Where a peer finds [p, p + bytes) of this process: the region's owner, its memfd, a number
// unique in the owner's lifetime (fd numbers are reused; ids never are) and the offset into it.
struct SharedRegionRef {
  int32_t pid;
  int32_t fd;
  uint64_t id;
  uint64_t offset;
  uint64_t regionBytes;
};
static_assert(sizeof(SharedRegionRef) == 32);

// The shareable region holding all of [p, p + bytes), if any.
std::optional<SharedRegionRef> findSharedRegion(const void* p, size_t bytes);

// A peer's region mapped into this process (read and write), populated up front so first
// touches are not paid inside timed calls.
class PeerMapping {
 public:
  PeerMapping() = default;
  // Throws EnvironmentError when the region can't be opened or mapped.
  explicit PeerMapping(const SharedRegionRef& ref);
  ~PeerMapping();
  PeerMapping(PeerMapping&& o) noexcept;
  PeerMapping& operator=(PeerMapping&& o) noexcept;
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;

  std::byte* base() const { return base_; }
  size_t bytes() const { return bytes_; }

 private:
  std::byte* base_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace cb
