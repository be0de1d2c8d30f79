#include "core/Buffer.h"

#include <fmt/format.h>
#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "core/Error.h"
#include "core/Interrupt.h"

namespace cb {

HostBuffer::HostBuffer(size_t bytes) : bytes_(bytes) {
  constexpr size_t kAlign = 4096;
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  data_ = std::aligned_alloc(kAlign, rounded);
  if (!data_) throw EnvironmentError(fmt::format("out of memory allocating {} bytes", bytes));
}

HostBuffer::~HostBuffer() { std::free(data_); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void HostBuffer::faultIn() { zeroFillInterruptibly(data_, bytes_); }

void HostDataBuffer::upload(size_t offset, const void* host, size_t n) {
  if (n) std::memcpy(static_cast<char*>(buf_.data()) + offset, host, n);
}

void HostDataBuffer::download(size_t offset, void* host, size_t n) const {
  if (n) std::memcpy(host, static_cast<const char*>(buf_.data()) + offset, n);
}

}  // namespace cb
