// What the results store keeps, as plain values: runs here, their points as core/Result.h's
// ResultRecord (results/ depends on core only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/Result.h"
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

}  // namespace cb
