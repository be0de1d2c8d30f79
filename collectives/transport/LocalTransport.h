// The zero-copy transport of a local (threads) communicator: a receiver reads (or reduces from)
// the sender's buffer directly, through the communicator's rendezvous exchange.
#pragma once

#include <memory>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

// Throws UsageError if comm is not a communicator of a LocalWorld.
std::unique_ptr<Transport> makeLocalTransport(Communicator& comm);

}  // namespace cb
