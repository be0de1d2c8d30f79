// The UCX transport: schedule messages over UCP's tag API. One UCP context and worker per
// transport (RAII), worker addresses exchanged over the Communicator, an endpoint to every rank.
// Tags carry (source rank, per-pair sequence number), so messages of a pair match in posting
// order whatever order UCX delivers them in. UCX picks its own transports (shared memory, CMA,
// TCP, verbs...); UCX_TLS, UCX_NET_DEVICES and the other UCX_* variables steer it as usual.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

struct UcxOptions {
  double setupSeconds = 60;  // deadline of the set-up collectives
};

// Why UCP can't be used in this process (nullopt: a context and worker could be created).
// Local: creates and destroys a throw-away context.
std::optional<std::string> ucxUnavailable();

// Collective over `comm`. Throws UcxError when UCP fails on any rank.
std::unique_ptr<Transport> makeUcxTransport(Communicator& comm, const UcxOptions& opts = {});

}  // namespace cb
