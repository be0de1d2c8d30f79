// The CUDA executor for hand-written schedules (collectives/schedule/Schedule.h), with the host
// executor's semantics: per phase, the local steps in order (copy: cudaMemcpyAsync; reduce and
// scale: kernels with the host's functors), then one round in which all the phase's sends and
// receives are in flight at once. The transport is NCCL point-to-point: each round is one
// ncclGroupStart/ncclGroupEnd of ncclSend/ncclRecv on the rank's stream, so sends and receives to
// one peer match in posting order, as the schedule model requires. A RecvReduce receives into a
// device staging buffer and a kernel then computes dst = src op staged, after the round.
// Everything is enqueued on one stream and timed as one device call (DeviceCall.h).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/Registry.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/Schedule.h"

namespace cb {

// One phase split the way the executor runs it (pure; tested on the host).
struct CudaPhasePlan {
  std::vector<Step> local;  // kCopy, kReduce, kScale, in schedule order
  std::vector<Step> sends;  // kSend, in schedule order
  struct Receive {
    Step step;                 // kRecv or kRecvReduce
    size_t stagingOffset = 0;  // kRecvReduce: where it lands in the staging buffer (elements)
  };
  std::vector<Receive> receives;  // in schedule order
  size_t stagingCount = 0;        // elements of staging this phase needs
};
CudaPhasePlan planCudaPhase(const Phase& phase);
// Staging elements the whole schedule needs (the largest phase).
size_t cudaStagingCount(const Schedule& s);
// Throws InternalError if a step reaches outside the buffer sizes the schedule declares, or the
// schedule's buffers are smaller than the collective's (sendCount/recvCount of args).
void checkScheduleForDevice(const Schedule& s, const CollArgs& args, int nranks);

// Where one rank's spans lie on the device.
struct DeviceSpans {
  const void* send = nullptr;
  void* recv = nullptr;
  void* scratch = nullptr;
  size_t elementBytes = 1;
  char* at(const Span& span) const;
};
// A phase's local steps (copy: cudaMemcpyAsync; reduce, scale: kernels) in schedule order.
void enqueueLocalSteps(const CudaPhasePlan& plan, const DeviceSpans& at, DataType t, RedOp op,
                       int nranks, cudaStream_t s);
// After a phase's round: dst = src op staged for each recv-reduce (staged at its offset).
void enqueueRecvReduces(const CudaPhasePlan& plan, const DeviceSpans& at, char* staging, DataType t,
                        RedOp op, cudaStream_t s);

// The order in which one device plays every rank's schedule (pure; tested on the host by playing
// it on host arrays): NCCL's rendezvous semantics, as the reference executor's. A rank enters its
// next phase (its local steps run) once its previous phase's messages have all completed; the k-th
// send of a to b, over the whole schedule, matches the k-th receive of b from a, whatever phase
// each side posts it in, and is played (a copy into the destination, or into staging for a
// recv-reduce) once both sides have entered those phases; a phase ends with its recv-reduces.
struct OneDeviceAction {
  enum Kind { kEnter, kTransfer, kRecvReduces } kind = kEnter;
  int rank = 0;      // kEnter, kRecvReduces: whose phase; kTransfer: the receiver
  size_t phase = 0;  // that rank's phase
  // kTransfer: plans[from][fromPhase].sends[send] lands in plans[rank][phase].receives[receive].
  int from = -1;
  size_t fromPhase = 0;
  size_t send = 0;
  size_t receive = 0;
};
// plans[r][p] = planCudaPhase(schedules[r].phases[p]). Throws InternalError naming the ranks when
// a receive has no matching send of the same size, a message is never received, or the ranks
// deadlock.
std::vector<OneDeviceAction> orderForOneDevice(
    const std::vector<std::vector<CudaPhasePlan>>& plans);

// Every rank's schedule on this thread's one device, in one stream, in orderForOneDevice's order:
// the executor's kernels, phase plans, spans and staging for several ranks, the messages as
// device copies, where NCCL can't run them (it refuses two ranks on one GPU); a test tool, not a
// timed path. `staging[r]` holds cudaStagingCount(schedules[r]) elements.
void runSchedulesOnOneDevice(const std::vector<Schedule>& schedules,
                             const std::vector<DeviceSpans>& buffers,
                             const std::vector<char*>& staging, const CollArgs& args,
                             cudaStream_t s);

// Runs `schedule` (built for this rank) on device buffers. Collective over comm (creates or
// reuses the rank's NCCL communicator). Throws EnvironmentError when there is no GPU here.
std::unique_ptr<PreparedCollective> prepareCudaSchedule(Communicator& comm, const CollArgs& args,
                                                        Schedule schedule,
                                                        const VariantOptions& options = {});

// A device-memory registry entry named `name` (e.g. "cuda:ring") that builds `algo`'s schedule
// (collectives/algorithms/Algorithms.h) and runs it with the CUDA executor. `algo` is copied.
VariantInfo makeCudaScheduleVariant(const AlgorithmInfo& algo, std::string name);

}  // namespace cb
