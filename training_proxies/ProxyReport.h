// What a proxy run prints (rank 0): the set-up in "#" lines, one table of step metrics per run,
// the calls of the step with their bandwidth, the pipeline bubble next to (p-1)/(m+p-1), and the
// scaling table with its predicted rows labelled as such.
#pragma once

#include <cstdio>

#include "training_proxies/Proxy.h"

namespace cb::proxy {

void printProxySetup(std::FILE* out, const ProxyOptions& o, int worldSize, const std::string& algo,
                     const std::string& transport);
void printProxyResult(std::FILE* out, const ProxyOptions& o, const ProxyResult& r);

// The label of the variant used by the step's collectives, as results store it: "ring/local",
// "mpi".
std::string variantLabel(const ProxyResult& r);

}  // namespace cb::proxy
