// What the results store keeps, as plain values (results/ depends on core only; the CLI turns
// bench results into these records).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/Stats.h"

namespace cb {

enum class RunStatus : uint8_t { kRunning, kOk, kFailed, kInterrupted };
std::string_view runStatusName(RunStatus s);  // "running", "ok", "failed", "interrupted"
std::optional<RunStatus> parseRunStatus(std::string_view name);  // inverse; nullopt if unknown

struct RunRecord {
  int64_t id = 0;          // assigned by the store
  std::string startedAt;   // ISO-8601 UTC
  std::string finishedAt;  // "" while running
  std::string label;
  std::string commandLine;
  std::string source = "collbench";  // or "nccl-tests", "osu", "imb" for imports
  std::string collbenchVersion;
  std::string mpiVersion, ucxVersion, cudaVersion, ncclVersion;
  std::string hosts;  // comma-separated unique host names
  int worldSize = 0;
  std::string worldKind;  // "local" | "mpi" | "imported"
  RunStatus status = RunStatus::kRunning;
  std::string fingerprint;      // hash of what makes runs comparable ("" if unknown)
  std::string environmentJson;  // everything else known about the environment, JSON object
  int64_t pid = 0;              // of the rank-0 process, to tell a dead "running" run
  std::string host;             // of the rank-0 process
  // Written by beginRun as the run detail "topology"; not read back into records
  // (Store::runTopology).
  std::string topologyJson;
};

// A field the source did not give (a log's missing column, a point that was not verified, a
// collective without a root) is unset and stored as NULL: never 0 or -1, which are real values
// (0 wrong elements, root 0, 0 GB/s at size 0). Text fields use "" for unknown, stored as NULL.
struct ResultRecord {
  int64_t id = 0;
  int64_t runId = 0;
  std::string collective;   // "allreduce", ...; p2p: "latency", "bw", "bibw"
  std::string variant;      // "mpi", "ring", "ring/mpi", ...
  std::string dtype;        // "" when unknown
  std::string op;           // "sum", ..., "none" for collectives without reduction; "" unknown
  std::optional<int> root;  // unset: not a rooted collective, or unknown
  uint64_t sizeBytes = 0;
  std::optional<uint64_t> count;  // elements; unset when the element size is unknown
  std::string placement;          // "out" | "in"
  std::optional<int> nranks;      // unset when the log does not say
  std::string status = "ok";      // ok | unsupported | failed | skipped
  std::string message;            // why, when not ok
  std::optional<int64_t> iterations;
  // The reported statistic and the median: plain doubles with a flag rather than optionals, as
  // the gate's code and tests use them as numbers. Known false: stored NULL, the value 0 (a
  // point that was not timed; a log that gives no median).
  double timeUs = 0;
  bool timeKnown = true;
  std::string statistic = "median";
  double medianUs = 0;
  bool medianKnown = true;
  std::optional<double> meanUs, minUs, maxUs, p99Us, cv;
  std::optional<double> algbw, busbw;  // GB/s (1e9 B/s)
  std::optional<int64_t> wrong;        // unset: not checked; 0: verified
  // The busbw bound of the hardware under the point (core/PeakModel.h); unset: none known.
  std::optional<double> peakGBps;
  std::string peakLimit;  // what sets it: "NVLink4 x18", "host memory"; "" unknown
  // Per-iteration times in us as reported (combined over ranks), and per rank (rank-major,
  // nranks x iterations); empty when not kept (imports).
  std::vector<double> samplesUs;
  std::vector<double> rankSamplesUs;
};

// The timing part of a record (seconds in, microseconds stored), shared by every measurement:
// what was not measured stays unset (stored NULL).
void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples);

}  // namespace cb
