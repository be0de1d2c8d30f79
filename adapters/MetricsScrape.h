// `collbench export results --format prometheus --listen PORT`: the text served to one scrape.
#pragma once

#include <string>

namespace cb {

// Listens on 127.0.0.1:`port` (0: any free port; the port is printed on stderr) and answers one
// HTTP/1.x exchange per connection until GET or HEAD /metrics has been answered with `body`
// (other paths get 404 and the wait goes on). EnvironmentError when it cannot listen,
// TimeoutError when no scrape came within `timeoutS` seconds.
void serveMetricsOnce(const std::string& body, int port, double timeoutS);

}  // namespace cb
