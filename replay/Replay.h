// The replay engine: one rank's ops of a TraceSet, in trace order, on a Team.
//   - collectives through the Registry: the first name of --algo that the collective has, on the
//     sub-team of the op's process group (Team::split, one per group, made once);
//   - all_to_allv and send/recv through the group's transport (--transport, else the team's
//     default): one Transport::exchange per all_to_allv (every peer at once) and per batch of
//     consecutive sends/receives;
//   - real buffers of the recorded sizes (the largest op's, shared by all, faulted in once);
//   - --gaps: the recorded compute before each op slept (none, recorded, or scaled).
// Every rank times each of its ops (call start to return); rank 0 gathers the times.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/Registry.h"
#include "collectives/Team.h"
#include "replay/TraceSet.h"

namespace cb::replay {

struct ReplayOptions {
  std::vector<std::string> algos;  // per collective the first name it has
  VariantOptions variant;
  const Registry* registry = nullptr;  // null: Registry::builtin()
  int iterations = 5;
  int warmup = 1;
  int checkRounds = 1;  // 0: no verification; else every op verified once
  double gapScale = 0;  // 0: no gaps; 1: as recorded
  double timeoutSeconds = 300;
  // A barrier on the op's group before each collective, outside the timer (as `run` times a
  // call): per-op times without the previous op's arrival skew. Off: ops flow as in the job.
  bool syncOps = false;
};

// The variant names --algo picks for each op kind of the set (alltoallv/send/recv:
// "pairwise/<transport>", barrier: "barrier"). UsageError when a collective has none.
std::map<OpKind, std::string> chooseVariants(const TraceSet& s, const ReplayOptions& o,
                                             const std::string& transport);

struct ReplayTimes {
  // [rank][op][iteration] seconds, each rank's own op time (a batch's time on each member).
  std::vector<std::vector<std::vector<double>>> op;
  std::vector<std::vector<double>> comm;  // [rank][iteration]: the sum of the rank's op times
  std::vector<double> wall;               // [iteration]: rank 0's replay, gaps included
  int64_t wrong = -1;                     // summed over ranks; -1 not verified
  std::map<OpKind, std::string> variants;
};

class ReplayEngine {
 public:
  // Collective over world: splits the group sub-teams, asks every variant whether it can run
  // (EnvironmentError on every rank when one cannot), prepares every distinct call and
  // allocates the buffers. Call before the run is begun in the database.
  ReplayEngine(Team& world, const TraceSet& set, const ReplayOptions& o);
  ~ReplayEngine();
  // Collective: warm-up, timed iterations, then the check round. Times on rank 0 only.
  ReplayTimes run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cb::replay
