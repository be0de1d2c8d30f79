// GPU memory kinds as DataBuffers (see GpuBuffers.h).
#include "collectives/nccl/GpuBuffers.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/NcclWindows.h"
#include "core/Error.h"

namespace cb {
namespace {

// Zero-byte collectives still get a distinct, valid pointer.
size_t allocBytes(size_t bytes) { return std::max<size_t>(bytes, 1); }

void checkRange(size_t offset, size_t n, size_t bytes, const char* what) {
  if (offset > bytes || n > bytes - offset) {
    throw InternalError(fmt::format("{}: bytes [{}, {}) outside a {}-byte buffer", what, offset,
                                    offset + n, bytes));
  }
}

}  // namespace

DeviceBuffer::DeviceBuffer(int device, size_t bytes, DeviceAlloc how)
    : device_(device), bytes_(bytes), how_(how) {
  ScopedDevice on(device_);
  if (how_ == DeviceAlloc::kNcclMemAlloc) {
    checkNccl(ncclMemAlloc(&data_, allocBytes(bytes_)), "ncclMemAlloc");
  } else {
    checkCuda(cudaMalloc(&data_, allocBytes(bytes_)), "cudaMalloc");
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (!data_) return;
  try {
    // The buffer's own device, never device 0 by default (ScopedDevice, GpuDevice.h).
    ScopedDevice on(device_);
    deviceMemoryReleased(data_, bytes_);  // -R 1's registrations of it go first
    if (how_ == DeviceAlloc::kNcclMemAlloc) {
      ncclMemFree(data_);
    } else {
      cudaFree(data_);
    }
  } catch (const Error&) {
    // No device to select: nothing was allocated on it either way that could still be freed.
  }
}

void DeviceBuffer::upload(size_t offset, const void* host, size_t n) {
  checkRange(offset, n, bytes_, "DeviceBuffer::upload");
  if (n == 0) return;
  ScopedDevice on(device_);
  checkCuda(cudaMemcpy(static_cast<char*>(data_) + offset, host, n, cudaMemcpyHostToDevice),
            "cudaMemcpy (upload)");
  // From pageable memory cudaMemcpy may return before the DMA lands, and collectives run on
  // non-blocking streams that do not wait for the legacy stream: wait here.
  checkCuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (after upload)");
}

void DeviceBuffer::download(size_t offset, void* host, size_t n) const {
  checkRange(offset, n, bytes_, "DeviceBuffer::download");
  if (n == 0) return;
  ScopedDevice on(device_);
  checkCuda(cudaMemcpy(host, static_cast<const char*>(data_) + offset, n, cudaMemcpyDeviceToHost),
            "cudaMemcpy (download)");
}

void DeviceBuffer::faultIn() {
  ScopedDevice on(device_);
  checkCuda(cudaMemset(data_, 0, allocBytes(bytes_)), "cudaMemset");
  checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after cudaMemset)");
}

GpuAllocator::GpuAllocator(int device, MemoryKind kind, DeviceAlloc how)
    : device_(device), kind_(kind), how_(how) {}

std::unique_ptr<DataBuffer> GpuAllocator::allocate(size_t bytes) {
  if (kind_ == MemoryKind::kHost) return std::make_unique<HostDataBuffer>(bytes);
  return std::make_unique<DeviceBuffer>(device_, bytes, how_);
}

std::unique_ptr<BufferAllocator> makeGpuAllocator(const Communicator& comm, MemoryKind kind) {
  if (kind == MemoryKind::kHost) return std::make_unique<HostAllocator>();
  if (kind != MemoryKind::kDevice) {
    throw InternalError("no GPU variant uses pinned or managed host memory");
  }
  // Device memory from ncclMemAlloc, as nccl-tests allocates it: NCCL 2.28 registers
  // (ncclCommRegister, -R 1) only cuMem-backed memory unless NCCL_LEGACY_CUDA_REGISTER=1, and the
  // CUDA executor's buffers come from the same pool.
  return std::make_unique<GpuAllocator>(deviceForRank(comm), kind, DeviceAlloc::kNcclMemAlloc);
}

}  // namespace cb
