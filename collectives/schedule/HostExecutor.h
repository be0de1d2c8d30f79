// Runs a schedule on host memory over a Transport. The scratch buffer is allocated once, when the
// executor is built for a schedule, and faulted in, so repeated runs (timed iterations) allocate
// nothing.
#pragma once

#include "collectives/schedule/Schedule.h"
#include "core/Buffer.h"
#include "core/Clock.h"
#include "core/Transport.h"

namespace cb {

class HostExecutor {
 public:
  HostExecutor(Transport& transport, Schedule schedule, const CollArgs& args);
  // send/recv as the collective's buffers (aliased as the in-place layout says, or not).
  void run(const void* send, void* recv, Deadline d);
  const Schedule& schedule() const { return schedule_; }

 private:
  Transport& transport_;
  Schedule schedule_;
  CollArgs args_;
  SharedHostBuffer scratch_;  // shareable, so zero-copy transports can send from it
};

}  // namespace cb
