// The SQLite store: runs, results and raw samples, in WAL mode with a busy timeout, versioned by
// migrations (PRAGMA user_version). Each result is committed as it arrives, so an interrupted run
// keeps what it measured. Every statement is prepared with bound parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/Records.h"

struct sqlite3;

namespace cb {

struct RunFilter {
  std::optional<std::string> label;
  // ISO date or datetime ("2025-03-01", "2025-03-01T12:00", a space for the T is accepted),
  // compared with started_at as text. `since` is inclusive; `until` includes every run whose
  // started_at begins with it (until 2025-03-01 includes that whole day). Else UsageError.
  std::optional<std::string> since;
  std::optional<std::string> until;
  std::optional<std::string> fingerprint;
  int limit = 0;  // 0 = all
};

// What `collbench runs` shows for one run besides its record: aggregates over its results.
struct RunSummary {
  int64_t results = 0;
  int64_t notOk = 0;                     // results whose status is not "ok"
  int64_t worstWrong = -1;               // max #wrong over checked results, -1 if none checked
  std::vector<std::string> collectives;  // distinct, in the order first measured
};

// This host's name (gethostname), as recorded in RunRecord::host and compared by reapDeadRuns.
std::string localHostName();
// Now as ISO-8601 UTC with seconds, "2025-03-01T12:34:56Z" (the form of startedAt).
std::string utcTimestamp();

class Store {
 public:
  // Opens (creating when `create`) the database and migrates it to the current schema.
  // Throws DatabaseError with one clear line: unwritable path, not a collbench database,
  // corrupt file, or a schema newer than this build.
  static Store open(const std::string& path, bool create = true);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  int schemaVersion() const;
  static int latestSchemaVersion();                      // what this build migrates to
  static constexpr int32_t kApplicationId = 0x434c4253;  // "CLBS" in PRAGMA application_id
  const std::string& path() const { return path_; }

  // Returns the new run id. An empty startedAt becomes now; a running run with pid 0 gets this
  // process's pid and host (so reapDeadRuns can tell when it died).
  int64_t beginRun(const RunRecord& run);
  void addResult(const ResultRecord& result);                 // one transaction per result
  void addResults(const std::vector<ResultRecord>& results);  // one transaction for all
  void finishRun(int64_t runId, RunStatus status);            // sets finishedAt to now
  // Runs left "running" by a process that is gone (same host, pid dead) become "interrupted".
  void reapDeadRuns();

  std::vector<RunRecord> listRuns(const RunFilter& filter = {}) const;  // newest first
  std::optional<RunRecord> findRun(int64_t id) const;
  // In the order they were added.
  std::vector<ResultRecord> results(int64_t runId, bool withSamples = false) const;
  RunSummary summarizeRun(int64_t runId) const;

 private:
  Store(sqlite3* db, std::string path);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace cb
