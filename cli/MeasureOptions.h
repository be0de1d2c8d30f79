// The options every measuring command (run, p2p, proxy, replay, diag) shares, declared once: where
// the run is stored (--db, --no-db, --label), the deadline of any single wait (-T), the local
// world (--np) and where ranks run (--bind, --strict).
#pragma once

#include <string>

#include "session/RunSession.h"
#include "session/World.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct MeasureOptions {
  std::string db = "collbench.db";
  bool noDb = false;
  std::string label;
  double timeout = 300;  // seconds; a command may set its own default before adding the flags
  WorldOptions world;
  bool strict = false;
  // The session these options open; the command line is this process's.
  SessionOptions session() const;
};

// Adds the flags over `o` (which must outlive the parse). `timeoutWhat`: what -T bounds ("wait",
// "exchange"); `npHelp`: the --np text (its default); `placement`: also --bind and --strict.
void addMeasureOptions(CLI::App* sub, MeasureOptions& o, const char* timeoutWhat,
                       const std::string& npHelp, bool placement = true);

}  // namespace cb::cli
