// `diag bisect`: halve the communicator, run the same allreduce (the ring over the run's
// transport) on both halves at once, and descend into the half that is slower by more than the
// practical gap, in about log2(n) rounds, until one rank is left: that rank is named. A half of
// one rank is padded with a rank already found fast, so every measured group has a link. When
// neither half is slower (both fast, both slow, or the slow part is a link the halves do not
// use) bisection cannot go on and the pair matrix (`diag links` over every pair) decides. At the
// top, the halves alike and the whole world as fast as its halves is healthy without a matrix.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/Team.h"
#include "core/Communicator.h"
#include "core/Transport.h"
#include "diagnosis/DiagLinks.h"

namespace cb {

struct DiagBisectOptions {
  uint64_t bytes = 1 << 20;  // allreduce size (float sum)
  int iterations = 5;        // calls per repeat
  int repeats = 5;           // interleaved repeats per round; the median decides
  double timeoutSeconds = 60;
  SuspectOptions suspect;
  DiagLinksOptions fallback;  // the pair matrix when bisection cannot decide
};

struct BisectRound {
  std::vector<int> a, b;          // world ranks of the two groups measured at once
  double busbwA = 0, busbwB = 0;  // GB/s, medians over repeats
  std::string decision;           // "a slower", "b slower", "alike"
};

struct DiagBisectResult {
  double worldBusbw = 0;  // the whole world, for the top-level check
  std::vector<BisectRound> rounds;
  int slowRank = -1;      // found by bisection
  bool healthy = false;   // halves alike at the top and the world as fast as they are
  bool fellBack = false;  // the pair matrix decided
  DiagLinksResult links;  // when it did
  // What other processes took from each host's ranks over the whole bisection (core/CpuLoad.h).
  std::vector<CpuContention> cpu;
};

// Called on every member of a measured group with its sub-team (of Team::split) and the world
// ranks of its ranks, before the sub-team's transport is set up: a fault injector that names
// world ranks is installed here (a sub-team otherwise inherits the world's decorator as is).
using SubTeamHook = std::function<void(Team& sub, const std::vector<int>& worldRanks)>;

// Collective over the world team; `transport` names the transport every group uses (each
// sub-team sets up its own). The result is complete on rank 0.
DiagBisectResult runDiagBisect(Team& world, const std::string& transport,
                               const DiagBisectOptions& o, const LinkClassOf& linkClass = {},
                               const SubTeamHook& onSubTeam = {});

}  // namespace cb
