// Device memory as cb::DataBuffer: cudaMalloc, or ncclMemAlloc (what the engine's device buffers
// use: registration and symmetric windows need it). The bench engine fills and checks them only
// through upload/download, so core never sees CUDA. Each buffer remembers its device and makes it
// current for every runtime call, because the current device is per-thread state.
#pragma once

#include <cstddef>
#include <memory>

#include "core/Buffer.h"
#include "core/Communicator.h"

namespace cb {

// How a device-side buffer was allocated.
enum class DeviceAlloc : uint8_t { kCudaMalloc, kNcclMemAlloc };

class DeviceBuffer final : public DataBuffer {
 public:
  DeviceBuffer(int device, size_t bytes, DeviceAlloc how = DeviceAlloc::kCudaMalloc);
  ~DeviceBuffer() override;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() override { return data_; }
  size_t bytes() const override { return bytes_; }
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void upload(size_t offset, const void* host, size_t n) override;
  void download(size_t offset, void* host, size_t n) const override;
  // cudaMemset of the whole buffer, synchronized: the pages are mapped before timing.
  void faultIn() override;
  int device() const { return device_; }

 private:
  int device_;
  size_t bytes_;
  DeviceAlloc how_;
  void* data_ = nullptr;
};

// Allocates device buffers on one device (kind kDevice; kHost gives pageable host memory).
class GpuAllocator final : public BufferAllocator {
 public:
  GpuAllocator(int device, MemoryKind kind, DeviceAlloc how = DeviceAlloc::kCudaMalloc);
  std::unique_ptr<DataBuffer> allocate(size_t bytes) override;

 private:
  int device_;
  MemoryKind kind_;
  DeviceAlloc how_;
};

// The allocator for this rank's GPU (deviceForRank); throws EnvironmentError without one.
// kind kHost gives pageable host memory (HostAllocator); kDevice allocates with ncclMemAlloc.
std::unique_ptr<BufferAllocator> makeGpuAllocator(const Communicator& comm, MemoryKind kind);

}  // namespace cb
