// Runs one timed device call for a prepared GPU collective: the work is enqueued on the rank's
// stream between two CUDA events, optionally captured once into a CUDA graph of N calls (-G), and
// waited for by polling the stream (as nccl-tests' testStreamSynchronize), NCCL's asynchronous
// error and the deadline. The event time is the call's device time, which the engine prefers to
// its host clock (PreparedCollective::lastDeviceSeconds). runBatch is nccl-tests' loop: N calls
// back to back (or -G launches of a graph of the N calls) timed by the host clock.
// A watchdog armed with the deadline around every call aborts the NCCL communicator if the
// enqueue itself blocks (a blocking communicator connects peers in its first calls).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/Registry.h"
#include "collectives/nccl/GpuOptions.h"
#include "collectives/nccl/NcclComm.h"
#include "collectives/nccl/Watchdog.h"
#include "core/Clock.h"

namespace cb {

class CudaStream {
 public:
  explicit CudaStream(int device);  // non-blocking stream on `device`
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent(int device, unsigned flags);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// An instantiated graph and the graph it came from.
class CudaGraph {
 public:
  CudaGraph() = default;
  CudaGraph(cudaGraph_t graph, cudaGraphExec_t exec) : graph_(graph), exec_(exec) {}
  ~CudaGraph();
  CudaGraph(CudaGraph&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)) {}
  CudaGraph& operator=(CudaGraph&& o) noexcept;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Enqueues work on the stream; no synchronization inside.
using Enqueue = std::function<void(cudaStream_t)>;
// The timed body, on its buffers moved by `shiftBytes` (nccl-tests' per-call offset; 0 in run()).
using ShiftedEnqueue = std::function<void(cudaStream_t, size_t shiftBytes)>;

// One call's work: `pre` and `post` (may be empty) run untimed around the timed `body`, which is
// what a graph captures. `key` identifies the buffers the body is bound to: a captured graph is
// reused only for the same key (and number of bodies and shift).
struct DeviceCall {
  Enqueue pre;
  ShiftedEnqueue body;
  Enqueue post;
  std::pair<const void*, const void*> key{nullptr, nullptr};
};

class DeviceCallRunner {
 public:
  // `comm` is checked for asynchronous errors while waiting and aborted at the deadline.
  DeviceCallRunner(int device, const GpuOptions& options, std::shared_ptr<NcclComm> comm);
  ~DeviceCallRunner();

  cudaStream_t stream() const { return stream_.get(); }
  // Runs the call, waits for it, returns the device seconds per call (event time / calls).
  double run(const DeviceCall& call, Deadline d);
  // Runs `work` once, outside any graph and untimed, and waits for it (set-up probes).
  void runOnce(const Enqueue& work, Deadline d);
  // Before the barrier of nccl-tests' loop: with -G, captures and instantiates the graph of the
  // `calls` bodies that runBatch will launch (nccl-tests captures before its barrier too);
  // without -G nothing.
  void prepareBatch(const DeviceCall& call, int calls, BatchShift shift);
  // nccl-tests' batch: `pre` (untimed), then `calls` bodies back to back (body i moved by
  // shift.at(i)), or with -G N that many launches of one graph of the `calls` bodies, waited for
  // once; returns host seconds per body.
  double runBatch(const DeviceCall& call, int calls, BatchShift shift, Deadline d);

 private:
  const CudaGraph& graphFor(const DeviceCall& call, int bodies, BatchShift shift);
  void wait(Deadline d);
  [[noreturn]] static void throwAborted(Deadline d);
  void launch(const CudaGraph& graph, Deadline d);

  int device_;
  GpuOptions options_;
  std::shared_ptr<NcclComm> comm_;
  CudaStream stream_;
  CudaEvent start_;
  CudaEvent stop_;
  // The graphs captured so far, most recent last: per buffer pair and number of bodies.
  struct GraphKey {
    std::pair<const void*, const void*> buffers;
    int bodies;
    BatchShift shift;
    bool operator==(const GraphKey&) const = default;
  };
  std::vector<std::pair<GraphKey, CudaGraph>> graphs_;
  std::unique_ptr<Watchdog> watchdog_;  // with an NCCL communicator; destroyed first (last)
};

}  // namespace cb
