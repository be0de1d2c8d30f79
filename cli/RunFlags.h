// The flags of `collbench run` and their translation into the engine's SweepOptions: every bad
// value fails here with one line naming the flag, before any rank starts.
#pragma once

#include <cstddef>
#include <string>

#include "bench/Sweep.h"
#include "cli/MeasureOptions.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct RunOptions {
  std::string collectives = "allreduce,allgather";
  std::string minBytes = "8", maxBytes = "64M";
  double stepFactor = 2;
  std::string stepBytes;
  int iters = 20, warmup = 5, check = 1, cycles = 1, root = 0;
  int average = -1;  // -1: the timing mode's (timingDefaults)
  std::string dtype = "float", op = "sum";
  std::string stat;    // "": the timing mode's
  std::string timing;  // "": nccl-tests with --format nccl-tests, else per-call
  std::string timeBudget;
  std::string algo = "all";
  std::string transport;
  std::string chunk;
  std::string zeroCopy;
  int ranksPerNode = 0;
  std::string placement = "both";
  std::string format = "collbench";
  std::string sideMetric = "busbw";
  std::string sideBaseline;
  std::string json, csv;
  std::string injectDelay;
  int blocking = 0, graph = 0, registration = 0;
  bool reference = false;
  std::string ncclAlgo, ncclProto;
  bool ncclChoice = false;
  bool expect = false;
  double expectFraction = 0;  // 0: the peak model's per link class
  MeasureOptions measure;     // -T, --db, --no-db, --label, --np, --bind, --strict
};

// Declares every flag of `run` over `o` (which must outlive the parse).
void addRunFlags(CLI::App* sub, RunOptions& o);
// --zero-copy: a size, or off (never).
size_t zeroCopyBytes(const RunOptions& o);
SweepOptions toSweep(const RunOptions& o);

}  // namespace cb::cli
