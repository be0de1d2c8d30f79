// The local (embedded) world: N ranks as threads in one process. LocalWorld::run starts the
// threads, gives each a Communicator, joins them, and rethrows the first exception any rank
// threw (after telling the others to abort, so none waits for a dead peer until its deadline).
#pragma once

#include <functional>
#include <memory>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

class LocalWorld {
 public:
  // Runs fn(comm) on `nranks` threads. Rethrows the first rank's exception.
  static void run(int nranks, const std::function<void(Communicator&)>& fn);
};

// The zero-copy transport of a local communicator: a receiver reads (or reduces from) the
// sender's buffer directly. Throws UsageError if comm is not a local communicator.
std::unique_ptr<Transport> makeLocalTransport(Communicator& comm);

}  // namespace cb
