// A job's traces as one replay plan: one RankTrace per rank of the world that replays it, the
// process groups resolved to ranks, and the checks that the ranks' ops fit together (a bad set is
// one UsageError line before anything runs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay/Trace.h"

namespace cb::replay {

struct TraceSetOptions {
  // One path with `{rank}` (expanded for 0, 1, ... while a file matches; shell wildcards allowed
  // after the expansion), or one path per rank in rank order, or one path replayed on every rank
  // (useOneTrace).
  std::vector<std::string> traces;
  bool useOneTrace = false;
  // Kineto traces of the same job and ranks (`{rank}` pattern; shell wildcards allowed after the
  // expansion, e.g. worker{rank}_*.pt.trace.json): their kernel durations and gaps are copied onto
  // the ops.
  std::string kineto;
  std::vector<OpKind> ops;  // keep only these kinds (empty: all)
  double scaleSize = 1;     // what-if: every message this many times its recorded size
};

struct GroupInfo {
  std::string name;          // "" = every rank
  std::vector<int> members;  // global ranks, group-rank order
};

struct TraceSet {
  std::string name;           // the pattern or first file, as given
  std::string hash;           // "fnv1a64:<hex>" of every file's bytes, in rank order
  int recordedRanks = 0;      // rank traces read (1 with useOneTrace)
  int recordedWorldSize = 0;  // what the files say about their world (0: nothing)
  bool oneTrace = false;
  std::vector<RankTrace> ranks;             // after fitToWorld: one per world rank
  std::map<std::string, GroupInfo> groups;  // after fitToWorld
  std::vector<std::string> notes;           // how the set was fitted (shrunk, filtered, scaled)
};

// Reads every file (UsageError on the first bad one). Kinds outside o.ops are dropped here.
TraceSet loadTraceSet(const TraceSetOptions& o);

// The world size a set replays on when nothing else says: the rank traces read, or for one trace
// the world it records (0 when unknown).
int naturalWorldSize(const TraceSet& s);

// Fits the set to a world of `world` ranks and checks it. shrinkTo > 0 (--ranks N) replays the
// first N rank traces: traffic to and from the other ranks is dropped (groups lose those
// members, all_to_allv keeps the splits among the kept ranks, sends and receives with a dropped
// peer are left out) and a note says how much; it must equal `world`. Without it the rank traces
// must equal the world. Then every group's members must agree on their ops (number, kind, type,
// size, root; all_to_allv splits: what r sends j is what j receives from r) and every send must
// meet its receive. Also applies scaleSize. UsageError naming a file and node otherwise.
void fitToWorld(TraceSet& s, int world, int shrinkTo, double scaleSize);

// Host memory one rank of the fitted set needs at most: the largest op's send and receive
// buffers (an allgather receives group size x its count), as the engine allocates them.
uint64_t largestBuffers(const TraceSet& s);

// The group an op runs on.
const GroupInfo& groupOf(const TraceSet& s, const CommOp& op);

uint64_t fnv1a64(std::string_view bytes, uint64_t h = 1469598103934665603ull);

}  // namespace cb::replay
