// What a replay run prints, stores and writes (replay/Replay.h): one result per op kind, group and
// size (collective "replay-<op>", placement "out", the group in the variant as
// "<variant>@pg<name>"), one for the whole replay ("replay-total": size = bytes per replay, time =
// communication time of the slowest rank), and the run's "replay" detail.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/Stats.h"
#include "replay/Replay.h"
#include "replay/ReplayReport.h"
#include "replay/TraceSet.h"
#include "results/Records.h"

namespace cb {

// "<variant>@pg<group>", or the variant alone for the world group ("").
std::string replayRowVariant(const std::string& variant, const std::string& group);

// `replay --dry-run`: the set's notes, its name, hash and ranks, and the op table.
void printReplayDryRun(std::FILE* out, const replay::TraceSet& set, int world, bool allRanks);

// The header lines of a run: the trace, the settings (`gaps`: --gaps as given), the set's notes.
std::vector<std::string> replayHeaderLines(const replay::TraceSet& set,
                                           const replay::ReplayOptions& o, const std::string& gaps);

// The table per op kind and size and the per-replay line, as printed after the run.
std::string replaySummaryText(const replay::ReplaySummary& sum, const replay::ReplayTimes& t,
                              Statistic stat);

// One record per row of the summary, then "replay-total", of run `runId`.
std::vector<ResultRecord> replayRecords(const replay::TraceSet& set,
                                        const replay::ReplaySummary& sum,
                                        const replay::ReplayTimes& t, Statistic stat,
                                        int iterations, int64_t runId);

// The run's "replay" detail: trace name and hash, notes, variants, rows with recorded vs
// replayed, every rank's first timed replay op by op and as a timeline. `stored`: compact, as the
// run's detail; `file`: indented by 2 with a newline, as --json writes it (only when `forFile`).
struct ReplayDetail {
  std::string stored;
  std::string file;
};
ReplayDetail replayDetail(const replay::TraceSet& set, const replay::ReplaySummary& sum,
                          const replay::ReplayTimes& t, const std::string& gaps, int iterations,
                          bool forFile);

}  // namespace cb
