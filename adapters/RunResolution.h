// How commands name a stored run on the command line, resolved against the store: a positive id,
// or "last"/"latest" (show, export, report). The sides of compare and gate: CompareSides.h.
#pragma once

#include <cstdint>
#include <string>

#include "results/Store.h"

namespace cb {

// Throws UsageError for anything else, or "last" on an empty database (`db` names it).
int64_t resolveRun(const Store& store, const std::string& text, const std::string& db);

}  // namespace cb
