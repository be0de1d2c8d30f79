// What the results store keeps, as plain values (results/ depends on core only; the CLI turns
// bench results into these records).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

struct ResultRecord {
  int64_t id = 0;
  int64_t runId = 0;
  std::string collective;  // "allreduce", ...; p2p: "latency", "bw", "bibw"
  std::string variant;     // "mpi", "ring", "ring/mpi", ...
  std::string dtype;
  std::string op;  // "sum", ..., "none" for collectives without reduction
  int root = -1;
  uint64_t sizeBytes = 0;
  uint64_t count = 0;
  std::string placement;  // "out" | "in"
  int nranks = 0;
  std::string status = "ok";  // ok | unsupported | failed | skipped
  std::string message;        // why, when not ok
  int64_t iterations = 0;
  double timeUs = 0;  // the reported statistic
  std::string statistic = "median";
  double medianUs = 0, meanUs = 0, minUs = 0, maxUs = 0, p99Us = 0, cv = 0;
  double algbw = 0, busbw = 0;  // GB/s (1e9 B/s)
  int64_t wrong = -1;           // -1: not checked
  // Per-iteration times in us as reported (combined over ranks), and per rank (rank-major,
  // nranks x iterations); empty when not kept (imports).
  std::vector<double> samplesUs;
  std::vector<double> rankSamplesUs;
};

}  // namespace cb
