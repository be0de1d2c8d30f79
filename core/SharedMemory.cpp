#include "core/SharedMemory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "core/Error.h"
#include "core/Interrupt.h"

namespace cb {
namespace {

constexpr size_t kPage = 4096;

struct Region {
  size_t bytes;
  int fd;
  uint64_t id;
};

// The process's shareable regions by base address.
struct RegionTable {
  std::mutex m;
  std::map<uintptr_t, Region> regions;
  uint64_t nextId = 1;
};

RegionTable& table() {
  static RegionTable t;
  return t;
}

}  // namespace

SharedHostBuffer::SharedHostBuffer(size_t bytes) : bytes_(bytes) {
  mapped_ = (std::max<size_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  int fd = memfd_create("collbench-buffer", MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, static_cast<off_t>(mapped_)) == 0) {
    void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      data_ = p;
      fd_ = fd;
      auto& t = table();
      std::lock_guard lk(t.m);
      t.regions[reinterpret_cast<uintptr_t>(p)] = Region{mapped_, fd, t.nextId++};
      return;
    }
  }
  if (fd >= 0) close(fd);
  // No memfd (old kernel, seccomp) or /dev/shm too small: private memory, not shareable.
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw EnvironmentError(fmt::format("out of memory allocating {} bytes", bytes));
  }
  data_ = p;
}

void SharedHostBuffer::release() {
  if (!data_) return;
  if (fd_ >= 0) {
    auto& t = table();
    std::lock_guard lk(t.m);
    t.regions.erase(reinterpret_cast<uintptr_t>(data_));
  }
  munmap(data_, mapped_);
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  fd_ = -1;
}

SharedHostBuffer::~SharedHostBuffer() { release(); }

SharedHostBuffer::SharedHostBuffer(SharedHostBuffer&& o) noexcept { *this = std::move(o); }

SharedHostBuffer& SharedHostBuffer::operator=(SharedHostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void SharedHostBuffer::faultIn() { zeroFillInterruptibly(data_, bytes_); }

std::optional<SharedRegionRef> findSharedRegion(const void* p, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto& t = table();
  std::lock_guard lk(t.m);
  auto it = t.regions.upper_bound(a);
  if (it == t.regions.begin()) return std::nullopt;
  --it;
  const Region& r = it->second;
  const uintptr_t offset = a - it->first;
  if (offset > r.bytes || bytes > r.bytes - offset) return std::nullopt;
  return SharedRegionRef{static_cast<int32_t>(getpid()), r.fd, r.id, offset, r.bytes};
}

PeerMapping::PeerMapping(const SharedRegionRef& ref) {
  const std::string path = fmt::format("/proc/{}/fd/{}", ref.pid, ref.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    throw EnvironmentError(fmt::format("can't open {}: {}", path, std::strerror(errno)));
  }
  void* p =
      mmap(nullptr, ref.regionBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  const int err = errno;
  close(fd);  // the mapping keeps the memory
  if (p == MAP_FAILED) {
    throw EnvironmentError(
        fmt::format("can't map {} ({} bytes): {}", path, ref.regionBytes, std::strerror(err)));
  }
  base_ = static_cast<std::byte*>(p);
  bytes_ = ref.regionBytes;
}

PeerMapping::~PeerMapping() {
  if (base_) munmap(base_, bytes_);
}

PeerMapping::PeerMapping(PeerMapping&& o) noexcept { *this = std::move(o); }

PeerMapping& PeerMapping::operator=(PeerMapping&& o) noexcept {
  if (this != &o) {
    if (base_) munmap(base_, bytes_);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

}  // namespace cb
