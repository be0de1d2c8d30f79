// What a replay measured, per op kind and size, and the dry run's op table: pure functions of a
// TraceSet and the times rank 0 gathered.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/Stats.h"
#include "replay/Replay.h"
#include "replay/TraceSet.h"

namespace cb::replay {

struct ReplayRow {
  OpKind kind = OpKind::kAllReduce;
  std::string group;
  DataType dtype = DataType::kFloat;
  uint64_t bytes = 0;  // the op's recorded size (its input)
  uint64_t count = 0;
  int nranks = 0;     // the group's size
  int instances = 0;  // ops of this kind and size in one replay (of one group: counted once)
  // One per instance and iteration: the slowest member's time (send/recv: each rank's own).
  std::vector<double> samples;
  Summary summary;
  double timeSeconds = 0;  // the statistic
  double algbw = 0, busbw = 0;
  double recordedUs = -1;  // median of the recorded durations of the instances (-1: none)
};

struct ReplaySummary {
  std::vector<ReplayRow> rows;
  std::vector<double> commSamples;  // per iteration: the slowest rank's total communication time
  Summary comm;
  std::vector<double> wallSamples;
  uint64_t bytesPerReplay = 0;  // every rank's op bytes, summed
  double recordedCommUs = -1;   // rank 0's recorded durations, summed (-1: none)
};

ReplaySummary summarizeReplay(const TraceSet& s, const ReplayTimes& t, Statistic stat);

// The dry run: rank 0's ops one per line (all ranks' with allRanks), then totals per op kind and
// group: ops and bytes on rank 0 and over every rank.
void printOpTable(std::FILE* out, const TraceSet& s, bool allRanks);

}  // namespace cb::replay
