// The topology a run recorded (Store::runTopology JSON), as an HTML fragment for the report.
#pragma once

#include <string>

namespace cb {

// A collapsed <details> block: per host its summary and nvidia-smi-style matrix, the placement
// of each rank, and the preflight's findings; "" for an empty or unreadable record. Every
// string is escaped.
std::string topologyHtml(const std::string& topologyJson);

}  // namespace cb
