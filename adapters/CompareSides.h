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

// What other processes took from each run's ranks while it measured (the run detail "cpu-load":
// the largest competing CPUs of its hosts), per side, oldest run first; -1 for a run without one.
struct SidesLoad {
  std::vector<double> base, cand;
  bool any() const;  // some run has a figure
};
SidesLoad sidesLoad(const Store& store, const LoadedRuns& runs);
// "# load while measuring (CPUs other processes took from the ranks, per run): baseline 0.02
// 0.03 0.01; candidate 1.21 1.35 1.10" and, when a side's runs competed and the other's did not,
// why that matters; "" when no run has a figure.
std::string sidesLoadText(const SidesLoad& load);

// One side alone (gate --calibrate): the runs of `spec`, every one finished ok (else
// UsageError); `name` gets how to name them.
RunSet loadSide(const Store& store, const std::string& spec, std::string& name);

}  // namespace cb
