// Timed device calls: events, CUDA graphs, polling and blocking waits (see DeviceCall.h).
#include "collectives/nccl/DeviceCall.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

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
      // -z 1: the host sleeps in cudaEventSynchronize instead of spinning.
      stop_(device, options.blockingWait == 1 ? cudaEventBlockingSync : cudaEventDefault) {
  if (options_.blockingWait == 1 && comm_) {
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

const CudaGraph& DeviceCallRunner::graphFor(const DeviceCall& call) {
  auto found = std::find_if(graphs_.begin(), graphs_.end(),
                            [&](const auto& g) { return g.first == call.key; });
  if (found != graphs_.end()) return found->second;
  constexpr size_t kMaxGraphs = 2;  // out-of-place and in-place of the current size
  if (graphs_.size() >= kMaxGraphs) graphs_.erase(graphs_.begin());

  cudaStream_t s = stream_.get();
  // Thread-local capture: local-world ranks capture concurrently, and NCCL may allocate (which
  // global capture mode forbids) while connecting peers during the first captured call.
  checkCuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    for (int i = 0; i < options_.graphLaunches; ++i) call.body(s);
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
  graphs_.emplace_back(call.key, CudaGraph(graph, exec));
  return graphs_.back().second;
}

double DeviceCallRunner::run(const DeviceCall& call, Deadline d) {
  ScopedDevice on(device_);
  cudaStream_t s = stream_.get();
  if (comm_) comm_->checkAsync("before the call");
  if (call.pre) call.pre(s);
  const CudaGraph* graph = options_.graphLaunches > 0 ? &graphFor(call) : nullptr;
  checkCuda(cudaEventRecord(start_.get(), s), "cudaEventRecord (start)");
  if (graph) {
    checkCuda(cudaGraphLaunch(graph->exec(), s), "cudaGraphLaunch");
  } else {
    call.body(s);
  }
  checkCuda(cudaEventRecord(stop_.get(), s), "cudaEventRecord (stop)");
  if (call.post) call.post(s);
  wait(d);
  float ms = 0;
  checkCuda(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");
  return perCallSeconds(ms, callsPerRun(options_));
}

void DeviceCallRunner::runOnce(const Enqueue& work, Deadline d) {
  ScopedDevice on(device_);
  if (comm_) comm_->checkAsync("before the call");
  work(stream_.get());
  checkCuda(cudaEventRecord(stop_.get(), stream_.get()), "cudaEventRecord (stop)");
  wait(d);
}

void DeviceCallRunner::wait(Deadline d) {
  cudaStream_t s = stream_.get();
  if (options_.blockingWait == 1) {
    if (watchdog_) watchdog_->arm(d);
    // The stop event was made with cudaEventBlockingSync: the host sleeps until the timed part
    // ends; the untimed copies after it are short.
    cudaError_t e = cudaEventSynchronize(stop_.get());
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    bool fired = watchdog_ && watchdog_->disarm();
    if (fired) {
      throw TimeoutError(fmt::format(
          "the device call did not complete within {:g} s (-T); NCCL communicator aborted",
          d.seconds()));
    }
    checkCuda(e, "cudaStreamSynchronize");
    if (comm_) comm_->checkAsync("the device call");
    return;
  }
  // -z 0: poll, as nccl-tests' testStreamSynchronize does.
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
