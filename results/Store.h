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
  std::optional<std::string> since;  // ISO date or datetime
  std::optional<std::string> until;
  std::optional<std::string> fingerprint;
  int limit = 0;  // 0 = all
};

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
  const std::string& path() const { return path_; }

  int64_t beginRun(const RunRecord& run);              // returns the new run id
  void addResult(const ResultRecord& result);          // one transaction per result
  void addResults(const std::vector<ResultRecord>& results);  // one transaction for all
  void finishRun(int64_t runId, RunStatus status);
  // Runs left "running" by a process that is gone (same host, pid dead) become "interrupted".
  void reapDeadRuns();

  std::vector<RunRecord> listRuns(const RunFilter& filter = {}) const;
  std::optional<RunRecord> findRun(int64_t id) const;
  std::vector<ResultRecord> results(int64_t runId, bool withSamples = false) const;

 private:
  Store(sqlite3* db, std::string path);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace cb
