// The SQLite store: runs, results and raw samples, in WAL mode with a busy timeout, versioned by
// migrations (PRAGMA user_version). Each result is committed as it arrives, so an interrupted run
// keeps what it measured. Every statement is prepared with bound parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/Case.h"
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

// ---- records of the comparison commands (see the block at the end of Store) ----

struct HistoryPoint {
  RunRecord run;
  ResultRecord result;
};

struct DbCheckReport {
  std::vector<std::string> problems;  // empty when integrity_check says ok and no FK violation
  int schemaVersion = 0;
  std::vector<std::pair<std::string, int64_t>> runsByStatus;  // status, count
  int64_t runs = 0, results = 0, samples = 0, rankSamples = 0;
};

struct PruneOptions {
  int keepLast = -1;                  // keep the N newest runs (>= 0), delete older ones
  std::optional<std::string> before;  // delete runs started before this UTC date[Ttime]
  std::optional<std::string> label;   // only runs with this label
  bool dryRun = false;
};

struct PruneReport {
  std::vector<int64_t> runIds;  // deleted (or, dry run, to delete), newest first
  int64_t results = 0;          // their results (samples go with them)
};

// Now as ISO-8601 UTC with seconds, "2025-03-01T12:34:56Z" (the form of startedAt).
std::string utcTimestamp();

class Store {
 public:
  // Opens (creating when `create`) the database and migrates it to the current schema.
  // Throws DatabaseError with one clear line: unwritable path, not a collbench database,
  // corrupt file, or a schema newer than this build.
  static Store open(const std::string& path, bool create = true);
  // For the commands that only read (runs, show, export, db check, compare, history, report,
  // gate): a connection that cannot change the database (query_only), which also works on a full
  // disk or a read-only file system (there read-only, without the log's shared index: the file
  // alone when its log is empty). An older schema is migrated and dead runs reaped through a
  // writing connection when one can be had.
  static Store openForReading(const std::string& path);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  int schemaVersion() const;
  static int latestSchemaVersion();  // what this build migrates to
  // The SQL that takes the schema from `toVersion` - 1 to `toVersion` (1..latest): the tests
  // build a database as an older release left it from the released steps.
  static std::string_view migrationSql(int toVersion);
  static constexpr int32_t kApplicationId = 0x434c4253;  // "CLBS" in PRAGMA application_id
  const std::string& path() const { return path_; }

  // Returns the new run id. An empty startedAt becomes now; a running run with pid 0 gets this
  // process's pid and host (so reapDeadRuns can tell when it died).
  int64_t beginRun(const RunRecord& run);
  void addResult(const ResultRecord& result);                 // one transaction per result
  void addResults(const std::vector<ResultRecord>& results);  // one transaction for all
  void finishRun(int64_t runId, RunStatus status);            // sets finishedAt to now
  // A document attached to a run (one per kind; replaced when set again), e.g. kind "proxy":
  // a training proxy's metrics, timeline and scaling table as JSON.
  void setRunDetail(int64_t runId, const std::string& kind, const std::string& json);
  std::optional<std::string> runDetail(int64_t runId, const std::string& kind) const;
  // Runs left "running" by a process that is gone (same host, pid dead) become "interrupted".
  // `open` does it; callers need not.
  void reapDeadRuns();
  std::vector<int64_t> deadRunIds() const;  // what reapDeadRuns would mark interrupted

  std::vector<RunRecord> listRuns(const RunFilter& filter = {}) const;  // newest first
  std::optional<RunRecord> findRun(int64_t id) const;
  // The topology JSON stored with a run (RunRecord::topologyJson at beginRun, the run detail
  // "topology"); "" if none.
  std::string runTopology(int64_t runId) const;
  // In the order they were added.
  std::vector<ResultRecord> results(int64_t runId, bool withSamples = false) const;
  RunSummary summarizeRun(int64_t runId) const;

  // ---- compare, gate, history, export and db maintenance (cli/Compare..., Gate..., History...,
  // Export..., DbCommand) ----

  // A run's results with their combined per-iteration samples only (what compare and gate
  // test), without the per-rank samples `results(id, true)` also reads.
  std::vector<ResultRecord> resultsWithSamples(int64_t runId) const;
  // Results with status ok matching `pattern`, in runs matching `filter`, oldest run first
  // (without samples); filter.limit keeps the newest N runs that have a match.
  std::vector<HistoryPoint> history(const CasePattern& pattern, const RunFilter& filter) const;
  // The distinct values of one result column ("collective" or "variant") over every stored
  // result, sorted: what a CASE pattern can name.
  std::vector<std::string> storedValues(std::string_view column) const;
  // PRAGMA integrity_check and foreign_key_check, the schema version and the row counts.
  DbCheckReport check() const;
  // Deletes runs (never running ones) with their results and samples, in one transaction;
  // with options.dryRun only reports what it would delete.
  PruneReport prune(const PruneOptions& options);
  // Rebuilds the file to return the space of deleted rows; checkpoints the WAL first.
  void vacuum();
  int64_t fileBytes() const;  // page_count * page_size of the main database

 private:
  Store(sqlite3* db, std::string path);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace cb
