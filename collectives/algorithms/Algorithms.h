// The hand-written algorithms: each is a pure function (rank, nranks, args, options) -> Schedule,
// in a file of its own opened by its steps, alpha-beta cost and constraints. The table below is
// what the registry publishes (as variants over each host transport) and what the tests sweep.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "collectives/schedule/Schedule.h"

namespace cb {

struct AlgoOptions {
  size_t chunkElements = 0;  // pipelining chunk (0 = algorithm default)
  int ranksPerNode = 0;      // hierarchical: ranks per (emulated) node; 0 = one node
};

// What every algorithm is: (rank, nranks, args, options) -> that rank's schedule.
using ScheduleBuild = Schedule(int rank, int nranks, const CollArgs& args, const AlgoOptions& opts);
using ScheduleFn = ScheduleBuild*;

struct AlgorithmInfo {
  Collective coll;
  const char* name;
  const char* description;
  const char* constraints;  // "" when it runs for any n and count
  const char* cost;         // alpha-beta on the critical path; S = bytes per rank buffer
  ScheduleFn build;
  // Why it can't run for n ranks with these options (nullopt: it can). Null = always runs.
  std::optional<std::string> (*unsupported)(int nranks, const CollArgs& args,
                                            const AlgoOptions& opts) = nullptr;
};

std::span<const AlgorithmInfo> algorithms();

// AllReduce
ScheduleBuild ringAllReduce, recDoublingAllReduce, rabenseifnerAllReduce, treeAllReduce,
    oneShotAllReduce, twoShotAllReduce, hierarchicalAllReduce;
// AllGather
ScheduleBuild ringAllGather, recDoublingAllGather, bruckAllGather, directAllGather;
// ReduceScatter
ScheduleBuild ringReduceScatter, recHalvingReduceScatter, directReduceScatter;
// Broadcast (root from CollArgs::root)
ScheduleBuild binomialBroadcast, chainBroadcast;

}  // namespace cb
