// Timed device calls: events, CUDA graphs, polling and blocking waits (see DeviceCall.h).
#include "collectives/nccl/DeviceCall.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/GpuDevice.h"
#include "core/Error.h"

namespace cb {

CudaStream::CudaStream(int device) : device_(device) {
  ScopedDevice on(device_);
  checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

CudaStream::~CudaStream() {
  if (stream_) cudaStreamDestroy(stream_);
}

CudaEvent::CudaEvent(int device, unsigned flags) {
  ScopedDevice on(device);
  checkCuda(cudaEventCreateWithFlags(&event_, flags), "cudaEventCreate");
}

CudaEvent::~CudaEvent() {
  if (event_) cudaEventDestroy(event_);
}

CudaGraph::~CudaGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

CudaGraph& CudaGraph::operator=(CudaGraph&& o) noexcept {
  if (this != &o) {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    graph_ = std::exchange(o.graph_, nullptr);
    exec_ = std::exchange(o.exec_, nullptr);
  }
  return *this;
}

DeviceCallRunner::DeviceCallRunner(int device, const GpuOptions& options,
                                   std::shared_ptr<NcclComm> comm)
    : device_(device),
      options_(options),
      comm_(std::move(comm)),
      stream_(device),
      start_(device, cudaEventDefault),
      stop_(device, cudaEventDefault) {
  if (comm_) {
    std::weak_ptr<NcclComm> weak = comm_;
    watchdog_ = std::make_unique<Watchdog>([weak] {
      if (auto c = weak.lock()) c->abort();
    });
  }
}

DeviceCallRunner::~DeviceCallRunner() {
  // Nothing may still run on the stream when the buffers go away.
  if (!comm_ || comm_->usable()) cudaStreamSynchronize(stream_.get());
}

const CudaGraph& DeviceCallRunner::graphFor(const DeviceCall& call, int bodies, BatchShift shift) {
  GraphKey key{call.key, bodies, shift};
  auto found =
      std::find_if(graphs_.begin(), graphs_.end(), [&](const auto& g) { return g.first == key; });
  if (found != graphs_.end()) return found->second;
  // Out-of-place and in-place of the current size, per loop (per-call and batch of warm-ups and
  // of timed calls).
  constexpr size_t kMaxGraphs = 4;
  if (graphs_.size() >= kMaxGraphs) graphs_.erase(graphs_.begin());

  cudaStream_t s = stream_.get();
  // Thread-local capture: local-world ranks capture concurrently, and NCCL may allocate (which
  // global capture mode forbids) while connecting peers during the first captured call.
  checkCuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    for (int i = 0; i < bodies; ++i) call.body(s, shift.at(i));
  } catch (...) {
    cudaStreamEndCapture(s, &graph);  // leave the stream usable
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  checkCuda(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
  if (e != cudaSuccess) {
    cudaGraphDestroy(graph);
    checkCuda(e, "cudaGraphInstantiate");
  }
  graphs_.emplace_back(key, CudaGraph(graph, exec));
  return graphs_.back().second;
}

namespace {

// Arms the runner's watchdog for one call: an enqueue that blocks past the deadline (peers that
// never connect) is ended by aborting the communicator.
class Armed {
 public:
  Armed(Watchdog* w, Deadline d) : w_(w) {
    if (w_) w_->arm(d);
  }
  ~Armed() { disarm(); }
  bool disarm() { return w_ && std::exchange(w_, nullptr)->disarm(); }

 private:
  Watchdog* w_;
};

}  // namespace

double DeviceCallRunner::run(const DeviceCall& call, Deadline d) {
  ScopedDevice on(device_);
  cudaStream_t s = stream_.get();
  if (comm_) comm_->checkAsync("before the call");
  Armed armed(watchdog_.get(), d);
  if (call.pre) call.pre(s);
  const CudaGraph* graph =
      options_.graphLaunches > 0 ? &graphFor(call, options_.graphLaunches, {}) : nullptr;
  checkCuda(cudaEventRecord(start_.get(), s), "cudaEventRecord (start)");
  if (graph) {
    launch(*graph, d);
  } else {
    call.body(s, 0);
  }
  checkCuda(cudaEventRecord(stop_.get(), s), "cudaEventRecord (stop)");
  if (call.post) call.post(s);
  wait(d);
  if (armed.disarm()) throwAborted(d);
  float ms = 0;
  checkCuda(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");
  return perCallSeconds(ms, callsPerRun(options_));
}

void DeviceCallRunner::prepareBatch(const DeviceCall& call, int calls, BatchShift shift) {
  if (options_.graphLaunches <= 0 || calls < 1) return;
  ScopedDevice on(device_);
  graphFor(call, calls, shift);
}

double DeviceCallRunner::runBatch(const DeviceCall& call, int calls, BatchShift shift, Deadline d) {
  if (calls < 1) throw InternalError(fmt::format("runBatch: {} calls", calls));
  ScopedDevice on(device_);
  cudaStream_t s = stream_.get();
  if (comm_) comm_->checkAsync("before the calls");
  Armed armed(watchdog_.get(), d);
  if (call.pre) {
    call.pre(s);
    wait(d);
  }
  // nccl-tests captures the whole loop once and launches it -G times. The timing loop captured
  // it before its barrier (prepareBatch); warm-up batches capture here, untimed.
  const CudaGraph* graph = options_.graphLaunches > 0 ? &graphFor(call, calls, shift) : nullptr;
  const int launches = graph ? options_.graphLaunches : 1;
  double t0 = nowSeconds();
  if (graph) {
    for (int l = 0; l < launches; ++l) launch(*graph, d);
  } else {
    for (int i = 0; i < calls; ++i) {
      // A long batch may still be enqueueing at the deadline (the launch queue is full, so each
      // enqueue waits for a call to finish): stop before touching an aborted communicator.
      if (comm_ && (comm_->aborted() || d.expired())) {
        comm_->abort();
        throwAborted(d);
      }
      call.body(s, shift.at(i));
    }
  }
  wait(d);
  double seconds = nowSeconds() - t0;
  if (call.post) {
    call.post(s);
    wait(d);
  }
  if (armed.disarm()) throwAborted(d);
  return seconds / (static_cast<double>(calls) * launches);
}

void DeviceCallRunner::runOnce(const Enqueue& work, Deadline d) {
  ScopedDevice on(device_);
  if (comm_) comm_->checkAsync("before the call");
  Armed armed(watchdog_.get(), d);
  work(stream_.get());
  checkCuda(cudaEventRecord(stop_.get(), stream_.get()), "cudaEventRecord (stop)");
  wait(d);
  if (armed.disarm()) throwAborted(d);
}

void DeviceCallRunner::launch(const CudaGraph& graph, Deadline d) {
  // The graph holds the communicator's kernels: never launched once an abort freed it.
  auto go = [&] { checkCuda(cudaGraphLaunch(graph.exec(), stream_.get()), "cudaGraphLaunch"); };
  if (!comm_) {
    go();
  } else if (!comm_->whileAlive(go)) {
    throwAborted(d);
  }
}

void DeviceCallRunner::throwAborted(Deadline d) {
  throw TimeoutError(
      fmt::format("the device call did not complete within {:g} s (-T); NCCL communicator aborted",
                  d.seconds()));
}

void DeviceCallRunner::wait(Deadline d) {
  cudaStream_t s = stream_.get();
  // Poll, as nccl-tests' testStreamSynchronize does.
  while (true) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) checkCuda(e, "cudaStreamQuery");
    if (comm_) comm_->checkAsync("the device call");
    if (d.expired()) {
      if (comm_) comm_->abort();
      throw TimeoutError(fmt::format("the device call did not complete within {:g} s (-T){}",
                                     d.seconds(), comm_ ? "; NCCL communicator aborted" : ""));
    }
    std::this_thread::yield();
  }
  if (comm_) comm_->checkAsync("the device call");
}

}  // namespace cb
