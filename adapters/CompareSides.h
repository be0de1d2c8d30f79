// The two sides of `compare` and `gate` resolved against the store (ids, last,
// label:NAME[@last-K]: results/Compare.h RunSpec), with their results and samples loaded.
#pragma once

#include <string>
#include <vector>

#include "results/Compare.h"
#include "results/Store.h"

namespace cb {

// Both sides loaded with their samples, and how to name them.
struct LoadedRuns {
  RunSet base, cand;
  std::string baseName, candName;     // "run 12 (base)", "label:main@last-3 (runs 9, 8, 7)"
  std::vector<std::string> warnings;  // runs that did not finish ok (compare shows them)
};

// BASE and CAND: id, list of ids, last, label:NAME[@last-K] (see RunSpec). Throws UsageError
// naming what is missing (unknown run, no finished run with that label), for a run on both
// sides, and, when `strict` (gate), for a baseline that did not finish ok or a candidate still
// running or interrupted.
LoadedRuns loadRuns(const Store& store, const std::string& base, const std::string& cand,
                    bool strict);

// One side alone (gate --calibrate): the runs of `spec`, every one finished ok (else
// UsageError); `name` gets how to name them.
RunSet loadSide(const Store& store, const std::string& spec, std::string& name);

}  // namespace cb
