// Host buffers with RAII. Page-aligned so transports and kernels get aligned data; fault_in()
// touches every page so first-touch page faults (10x slower than memcpy here) stay out of timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/SharedMemory.h"

namespace cb {

enum class MemoryKind : uint8_t { kHost, kPinnedHost, kDevice, kManaged };

// A buffer a collective reads or writes, wherever it lives. The bench engine fills and checks
// buffers only through upload/download, so device memory plugs in without core knowing CUDA.
class DataBuffer {
 public:
  virtual ~DataBuffer() = default;
  virtual void* data() = 0;
  virtual size_t bytes() const = 0;
  virtual MemoryKind kind() const = 0;
  // Copy `n` bytes between host memory and this buffer at byte `offset`.
  virtual void upload(size_t offset, const void* host, size_t n) = 0;
  virtual void download(size_t offset, void* host, size_t n) const = 0;
  // Touch every page (or the device equivalent) so first-touch costs stay out of timing.
  virtual void faultIn() = 0;
};

// Allocates DataBuffers of one memory kind.
class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  virtual std::unique_ptr<DataBuffer> allocate(size_t bytes) = 0;
};

class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(size_t bytes);
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <class T>
  T* as() {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }
  void faultIn();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Pageable host memory as a DataBuffer. Shareable with the other processes of the host (a memfd,
// core/SharedMemory.h) so zero-copy transports can read it in place; every variant measures on
// the same kind of memory, so MPI's figures are taken on it too.
class HostDataBuffer final : public DataBuffer {
 public:
  explicit HostDataBuffer(size_t bytes) : buf_(bytes) {}
  void* data() override { return buf_.data(); }
  size_t bytes() const override { return buf_.bytes(); }
  MemoryKind kind() const override { return MemoryKind::kHost; }
  void upload(size_t offset, const void* host, size_t n) override;
  void download(size_t offset, void* host, size_t n) const override;
  void faultIn() override { buf_.faultIn(); }

 private:
  SharedHostBuffer buf_;
};

class HostAllocator final : public BufferAllocator {
 public:
  std::unique_ptr<DataBuffer> allocate(size_t bytes) override {
    return std::make_unique<HostDataBuffer>(bytes);
  }
};

}  // namespace cb
