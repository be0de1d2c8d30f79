// The options of the commands that measure about where ranks run: --bind and --strict.
#pragma once

#include "session/World.h"

namespace CLI {
class App;
}

namespace cb::cli {

// --bind none|core|numa (local world rank threads, as mpirun --bind-to) and --strict (the
// topology preflight's findings stop the run). `world` and `strict` must outlive the parse.
void addPlacementOptions(CLI::App* sub, WorldOptions& world, bool& strict);

}  // namespace cb::cli
