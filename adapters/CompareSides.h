// The two sides of `compare` and `gate` resolved against the store (ids, last,
// label:NAME[@last-K]: results/Compare.h RunSpec), with their results and samples loaded.
#pragma once

#include <string>
#include <vector>

#include "core/CpuRoundTrip.h"
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

// Each run's CPUs as it measured (the run detail "cpu-load", results/CpuLoadDetail.h): what other
// processes took from its ranks (the largest competing CPUs of its hosts) and the cache-line
// round trip between the CPUs of ranks 0 and 1 (its median); -1 where the run has no figure.
struct RunCpuState {
  double competing = -1, roundTripNs = -1;
  double roundTripAfterNs = -1;  // probed again after the sweep (runs since session 19)
};
// Per side, oldest run first.
struct SidesLoad {
  std::vector<RunCpuState> base, cand;
};
SidesLoad sidesLoad(const Store& store, const LoadedRuns& runs);
// "# load while measuring ...: baseline 0.02 0.03 0.01; candidate 1.21 1.35 1.10" and "# CPUs'
// round trip ...", each with a note when the sides differ in a way that can pass for a change of
// the build (only one side under load; round trips kRoundTripApart apart); "" when no run has a
// figure.
std::string sidesLoadText(const SidesLoad& load);
// When the sides' median round trips are kRoundTripApart or more apart, why a change between them
// decides nothing ("the sides ran on CPUs placed apart differently (...)"); "" otherwise, and
// when a side's runs split evenly between two placements (it has none to compare).
std::string placementsDiffer(const SidesLoad& load);

// Runs that measured another machine than the rest of their side are left out of it (their
// results too, and their entries in `load`), one line each in `leftOut`:
// - a run whose round trips before and after its sweep are kRoundTripApart apart: its ranks'
//   CPUs moved while it measured, so its figures mix two placements;
// - a run probed on another placement than the median of its side, before the sweep and after
//   it, when the rest are most of the side.
// A run on another placement by its first probe alone (runs before session 19 have no second)
// stays: the probe runs before the sweep, and the VM moved between the two often enough (issue
// 26's round 30: a baseline run probed near and measured far) that leaving such runs out made a
// same-build gate regress. Returns one warning line per such run, and one per side whose runs
// sit on two placements with neither most of them; the gate then decides nothing.
std::vector<std::string> leaveOutOtherPlacements(LoadedRuns& runs, SidesLoad& load,
                                                 std::vector<std::string>& leftOut);

// One side alone (gate --calibrate): the runs of `spec`, every one finished ok (else
// UsageError); `name` gets how to name them.
RunSet loadSide(const Store& store, const std::string& spec, std::string& name);

}  // namespace cb
