// How commands name a stored run on the command line: a positive id, or "last"/"latest".
#pragma once

#include <cstdint>
#include <string>

#include "results/Store.h"

namespace cb::cli {

// Throws UsageError for anything else, or "last" on an empty database (`db` names it).
int64_t resolveRun(const Store& store, const std::string& text, const std::string& db);

}  // namespace cb::cli
