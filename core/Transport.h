// How a schedule's data moves between ranks. An executor hands a Transport one phase at a time:
// every send and receive of the phase is posted at once and exchange() returns when all are done.
// A receive may carry a reduction: the incoming data is combined with a local operand
// (dst = local op incoming) instead of copied, so transports that can read the peer's memory
// directly (threads, shared memory) reduce in one pass with no staging copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/Clock.h"
#include "core/DataType.h"

namespace cb {

struct SendOp {
  int peer;
  const void* data;
  size_t bytes;
};

struct RecvOp {
  int peer;
  void* dst;
  size_t bytes;
  // When reduce is true: dst = local op incoming, elementwise over bytes / size(dtype) elements.
  // local may equal dst (accumulate in place).
  bool reduce = false;
  const void* local = nullptr;
  DataType dtype = DataType::kFloat;
  RedOp op = RedOp::kSum;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string_view name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Post all ops, wait for all. Sends and receives to the same peer match in order.
  // Throws TimeoutError past the deadline.
  virtual void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                        Deadline d) = 0;
  // Messages this rank sent that the receiver read in place from the sending buffer, without a
  // copy by the transport (shm's zero-copy path; always 0 for transports that copy).
  virtual uint64_t zeroCopySends() const { return 0; }
};

}  // namespace cb
