// The local (embedded) world: N ranks as threads in one process. LocalWorld::run starts the
// threads, gives each a Communicator, joins them, and rethrows the first exception any rank
// threw (after telling the others to abort, so none waits for a dead peer until its deadline).
#pragma once

#include <functional>
#include <memory>
#include <span>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

class LocalWorld {
 public:
  // Runs fn(comm) on `nranks` threads. Rethrows the first rank's exception.
  static void run(int nranks, const std::function<void(Communicator&)>& fn);
};

// What the local transport (LocalTransport.h) uses of a local communicator: the rendezvous
// exchange of a whole phase under a tag of its own. Every communicator LocalWorld makes has it.
class LocalExchange {
 public:
  virtual ~LocalExchange() = default;
  virtual void exchangeTagged(std::span<const SendOp> sends, std::span<const RecvOp> recvs, int tag,
                              Deadline d) = 0;
};

}  // namespace cb
