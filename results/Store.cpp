// The SQLite results store (see Store.h): opening with clear errors, migrations, WAL and busy
// handling for concurrent writers, and the queries behind `runs`, `show` and `compare`.
#include "results/Store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/Error.h"
#include "core/HostMap.h"
#include "core/Size.h"
#include "core/Text.h"
#include "results/Sqlite.h"

namespace cb {

namespace {

using sql::SqliteError;
using sql::Statement;
using sql::Transaction;

constexpr int kBusyTimeoutMs = 10'000;

// Schema migrations, in order: kMigrations[i] takes the schema from version i to i + 1. A new
// version appends a step; released steps never change.
//
// Samples: `samples` holds one row per result with the combined per-iteration times; the
// per-rank times are one row per (result, rank) in `rank_samples`, so slow-rank diagnosis can
// read one rank without decoding the others. Both are BLOBs of little-endian float64, in us.
constexpr const char* kMigrations[] = {
    // 1: runs, results, samples.
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT '',
  command_line TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT 'collbench',
  collbench_version TEXT NOT NULL DEFAULT '',
  mpi_version TEXT NOT NULL DEFAULT '',
  ucx_version TEXT NOT NULL DEFAULT '',
  cuda_version TEXT NOT NULL DEFAULT '',
  nccl_version TEXT NOT NULL DEFAULT '',
  hosts TEXT NOT NULL DEFAULT '',
  world_size INTEGER NOT NULL DEFAULT 0,
  world_kind TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
  fingerprint TEXT NOT NULL DEFAULT '',
  environment_json TEXT NOT NULL DEFAULT '{}',
  pid INTEGER NOT NULL DEFAULT 0,
  host TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE INDEX runs_label ON runs (label);
CREATE INDEX runs_fingerprint ON runs (fingerprint);
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';

CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  collective TEXT NOT NULL,
  variant TEXT NOT NULL,
  dtype TEXT NOT NULL,
  op TEXT NOT NULL,
  root INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  count INTEGER NOT NULL,
  placement TEXT NOT NULL,
  nranks INTEGER NOT NULL,
  status TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  iterations INTEGER NOT NULL,
  time_us REAL NOT NULL,
  statistic TEXT NOT NULL,
  median_us REAL NOT NULL,
  mean_us REAL NOT NULL,
  min_us REAL NOT NULL,
  max_us REAL NOT NULL,
  p99_us REAL NOT NULL,
  cv REAL NOT NULL,
  algbw REAL NOT NULL,
  busbw REAL NOT NULL,
  wrong INTEGER NOT NULL
);
CREATE INDEX results_run_id ON results (run_id);
CREATE INDEX results_point ON results (collective, variant, dtype, op, size_bytes, placement);

CREATE TABLE samples (
  result_id INTEGER PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
  times_us BLOB NOT NULL
);

CREATE TABLE rank_samples (
  result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  times_us BLOB NOT NULL,
  PRIMARY KEY (result_id, rank)
) WITHOUT ROWID;
)sql",
    // 2: documents attached to a run, by kind (a training proxy's metrics, timeline and scaling
    // table: kind "proxy", JSON "collbench-proxy").
    R"sql(
CREATE TABLE run_details (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (run_id, kind)
) WITHOUT ROWID;
)sql",
    // 3: what a source did not give is NULL, no longer 0 or -1 (issue 13). SQLite cannot drop
    // NOT NULL, so `results` is rebuilt (prepareDatabase runs this with foreign keys off: the
    // DROP must not cascade to the samples). Each sentinel becomes NULL only where it meant
    // "unknown" for the rows that wrote it:
    //  * root < 0 (not rooted), wrong < 0 (not checked), nranks <= 0, dtype/op '', iterations
    //    0 (a point that never ran; an nccl-tests log without "iters:") except IMB's printed 0;
    //  * count 0 for a non-empty size (OSU/IMB with an unknown element size);
    //  * times and cv 0 on a point that is not ok (nothing was timed), and on imported rows
    //    where the log has no such column (nccl-tests has no median, OSU/IMB no cv, ...);
    //    time_us/mean_us 0 on imported rows only for OSU/IMB (derived from a 0 MB/s);
    //  * cv 0 over fewer than 2 iterations (no spread to measure);
    //  * algbw/busbw 0 on a point that is not ok, and on OSU/IMB rows without a convention
    //    (a non-empty size, or a barrier); 0 GB/s at size 0 is a real value and stays.
    // wrong = 0 (verified), root 0 and every other value are kept as they are.
    R"sql(
CREATE TABLE results_new (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  collective TEXT NOT NULL,
  variant TEXT NOT NULL,
  dtype TEXT,
  op TEXT,
  root INTEGER,
  size_bytes INTEGER NOT NULL,
  count INTEGER,
  placement TEXT NOT NULL,
  nranks INTEGER,
  status TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  iterations INTEGER,
  time_us REAL,
  statistic TEXT NOT NULL,
  median_us REAL,
  mean_us REAL,
  min_us REAL,
  max_us REAL,
  p99_us REAL,
  cv REAL,
  algbw REAL,
  busbw REAL,
  wrong INTEGER
);
INSERT INTO results_new
SELECT r.id, r.run_id, r.collective, r.variant, NULLIF(r.dtype, ''), NULLIF(r.op, ''),
  CASE WHEN r.root < 0 THEN NULL ELSE r.root END,
  r.size_bytes,
  CASE WHEN r.count = 0 AND r.size_bytes > 0 THEN NULL ELSE r.count END,
  r.placement,
  CASE WHEN r.nranks <= 0 THEN NULL ELSE r.nranks END,
  r.status, r.message,
  CASE WHEN r.iterations < 0 OR (r.iterations = 0 AND u.source <> 'imb') THEN NULL
       ELSE r.iterations END,
  CASE WHEN r.time_us = 0 AND (r.status <> 'ok' OR u.source IN ('osu', 'imb')) THEN NULL
       ELSE r.time_us END,
  r.statistic,
  CASE WHEN r.median_us = 0 AND (r.status <> 'ok' OR u.source <> 'collbench') THEN NULL
       ELSE r.median_us END,
  CASE WHEN r.mean_us = 0 AND (r.status <> 'ok' OR u.source IN ('osu', 'imb')) THEN NULL
       ELSE r.mean_us END,
  CASE WHEN r.min_us = 0 AND (r.status <> 'ok' OR u.source <> 'collbench') THEN NULL
       ELSE r.min_us END,
  CASE WHEN r.max_us = 0 AND (r.status <> 'ok' OR u.source <> 'collbench') THEN NULL
       ELSE r.max_us END,
  CASE WHEN r.p99_us = 0 AND (r.status <> 'ok' OR u.source <> 'collbench') THEN NULL
       ELSE r.p99_us END,
  CASE WHEN r.cv = 0 AND (r.status <> 'ok' OR u.source <> 'collbench' OR r.iterations < 2)
       THEN NULL ELSE r.cv END,
  CASE WHEN r.algbw = 0 AND (r.status <> 'ok' OR (u.source IN ('osu', 'imb') AND
       (r.size_bytes > 0 OR r.collective = 'barrier'))) THEN NULL ELSE r.algbw END,
  CASE WHEN r.busbw = 0 AND (r.status <> 'ok' OR (u.source IN ('osu', 'imb') AND
       (r.size_bytes > 0 OR r.collective = 'barrier'))) THEN NULL ELSE r.busbw END,
  CASE WHEN r.wrong < 0 THEN NULL ELSE r.wrong END
FROM results r JOIN runs u ON u.id = r.run_id;
DROP TABLE results;
ALTER TABLE results_new RENAME TO results;
CREATE INDEX results_run_id ON results (run_id);
CREATE INDEX results_point ON results (collective, variant, dtype, op, size_bytes, placement);
)sql",
    // 4: the bound the hardware sets on each point's busbw (core/PeakModel.h): NULL unknown.
    R"sql(
ALTER TABLE results ADD COLUMN peak_gbps REAL;
ALTER TABLE results ADD COLUMN peak_limit TEXT NOT NULL DEFAULT '';
)sql",
};

constexpr int kLatestVersion = static_cast<int>(std::size(kMigrations));

constexpr const char* kRunColumns =
    "id, started_at, finished_at, label, command_line, source, collbench_version, mpi_version, "
    "ucx_version, cuda_version, nccl_version, hosts, world_size, world_kind, status, "
    "fingerprint, environment_json, pid, host";

constexpr const char* kResultColumns =
    "id, run_id, collective, variant, dtype, op, root, size_bytes, count, placement, nranks, "
    "status, message, iterations, time_us, statistic, median_us, mean_us, min_us, max_us, "
    "p99_us, cv, algbw, busbw, wrong, peak_gbps, peak_limit";

RunRecord readRun(const Statement& s) {
  RunRecord r;
  int c = 0;
  r.id = s.int64At(c++);
  r.startedAt = s.textAt(c++);
  r.finishedAt = s.textAt(c++);
  r.label = s.textAt(c++);
  r.commandLine = s.textAt(c++);
  r.source = s.textAt(c++);
  r.collbenchVersion = s.textAt(c++);
  r.mpiVersion = s.textAt(c++);
  r.ucxVersion = s.textAt(c++);
  r.cudaVersion = s.textAt(c++);
  r.ncclVersion = s.textAt(c++);
  r.hosts = s.textAt(c++);
  r.worldSize = static_cast<int>(s.int64At(c++));
  r.worldKind = s.textAt(c++);
  std::string status = s.textAt(c++);
  // The CHECK constraint keeps other names out.
  r.status = parseRunStatus(status).value_or(RunStatus::kFailed);
  r.fingerprint = s.textAt(c++);
  r.environmentJson = s.textAt(c++);
  r.pid = s.int64At(c++);
  r.host = s.textAt(c++);
  return r;
}

// A nullable column: unset when NULL.
std::optional<int64_t> optionalInt(const Statement& s, int c) {
  return s.isNullAt(c) ? std::nullopt : std::optional<int64_t>(s.int64At(c));
}
std::optional<double> optionalDouble(const Statement& s, int c) {
  return s.isNullAt(c) ? std::nullopt : std::optional<double>(s.doubleAt(c));
}

// Reads the kResultColumns starting at `first` (0, or after the run columns of a join).
ResultRecord readResult(const Statement& s, int first = 0) {
  ResultRecord r;
  int c = first;
  r.id = s.int64At(c++);
  r.runId = s.int64At(c++);
  r.collective = s.textAt(c++);
  r.variant = s.textAt(c++);
  r.dtype = s.textAt(c++);  // NULL reads as ""
  r.op = s.textAt(c++);
  if (auto v = optionalInt(s, c++)) r.root = static_cast<int>(*v);
  r.sizeBytes = static_cast<uint64_t>(s.int64At(c++));
  if (auto v = optionalInt(s, c++)) r.count = static_cast<uint64_t>(*v);
  r.placement = s.textAt(c++);
  if (auto v = optionalInt(s, c++)) r.nranks = static_cast<int>(*v);
  // Only the four statuses were ever written; a row edited by hand to another reads as failed.
  r.status = parseResultStatus(s.textAt(c++)).value_or(ResultStatus::kFailed);
  r.message = s.textAt(c++);
  r.iterations = optionalInt(s, c++);
  r.timeKnown = !s.isNullAt(c);
  r.timeUs = s.doubleAt(c++);  // 0 when NULL
  r.statistic = s.textAt(c++);
  r.medianKnown = !s.isNullAt(c);
  r.medianUs = s.doubleAt(c++);
  for (std::optional<double>* v :
       {&r.meanUs, &r.minUs, &r.maxUs, &r.p99Us, &r.cv, &r.algbw, &r.busbw}) {
    *v = optionalDouble(s, c++);
  }
  r.wrong = optionalInt(s, c++);
  r.peakGBps = optionalDouble(s, c++);
  r.peakLimit = s.textAt(c++);
  return r;
}

// Binds an unset value, or an empty text, as NULL.
template <typename T>
void bindOptional(Statement& s, int index, const std::optional<T>& v) {
  if (!v) {
    s.bindNull(index);
  } else if constexpr (std::is_floating_point_v<T>) {
    s.bind(index, static_cast<double>(*v));
  } else {
    s.bind(index, static_cast<int64_t>(*v));
  }
}
void bindTextOrNull(Statement& s, int index, const std::string& v) {
  if (v.empty()) {
    s.bindNull(index);
  } else {
    s.bind(index, v);
  }
}

// The three inserts of one result, prepared once per transaction (imports add thousands).
class ResultWriter {
 public:
  ResultWriter(sqlite3* db, const std::string& path)
      : db_(db),
        path_(path),
        result_(db,
                "INSERT INTO results (run_id, collective, variant, dtype, op, root, size_bytes, "
                "count, placement, nranks, status, message, iterations, time_us, statistic, "
                "median_us, mean_us, min_us, max_us, p99_us, cv, algbw, busbw, wrong, peak_gbps, "
                "peak_limit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)"),
        samples_(db, "INSERT INTO samples (result_id, times_us) VALUES (?1, ?2)"),
        rankSamples_(db,
                     "INSERT INTO rank_samples (result_id, rank, times_us) VALUES (?1, ?2, ?3)") {}

  void write(const ResultRecord& r) {
    size_t perRank = 0;
    if (!r.rankSamplesUs.empty()) {
      const int n = r.nranks.value_or(0);
      if (n <= 0 || r.rankSamplesUs.size() % static_cast<size_t>(n) != 0) {
        throw InternalError(
            fmt::format("cannot store {} {} {} B: {} per-rank samples do not split over {} ranks",
                        r.collective, r.variant, r.sizeBytes, r.rankSamplesUs.size(), n));
      }
      perRank = r.rankSamplesUs.size() / static_cast<size_t>(n);
    }
    result_.reset();
    int i = 1;
    result_.bind(i++, r.runId);
    result_.bind(i++, r.collective);
    result_.bind(i++, r.variant);
    bindTextOrNull(result_, i++, r.dtype);
    bindTextOrNull(result_, i++, r.op);
    bindOptional(result_, i++, r.root);
    result_.bind(i++, static_cast<int64_t>(r.sizeBytes));
    bindOptional(result_, i++, r.count);
    result_.bind(i++, r.placement);
    bindOptional(result_, i++, r.nranks);
    result_.bind(i++, resultStatusName(r.status));
    result_.bind(i++, r.message);
    bindOptional(result_, i++, r.iterations);
    bindOptional(result_, i++, r.timeKnown ? std::optional<double>(r.timeUs) : std::nullopt);
    result_.bind(i++, r.statistic);
    bindOptional(result_, i++, r.medianKnown ? std::optional<double>(r.medianUs) : std::nullopt);
    for (const std::optional<double>* v :
         {&r.meanUs, &r.minUs, &r.maxUs, &r.p99Us, &r.cv, &r.algbw, &r.busbw}) {
      bindOptional(result_, i++, *v);
    }
    bindOptional(result_, i++, r.wrong);
    bindOptional(result_, i++, r.peakGBps);
    result_.bind(i++, r.peakLimit);
    try {
      result_.run();
    } catch (const SqliteError& e) {
      if (e.code() == SQLITE_CONSTRAINT) {
        throw DatabaseError(
            fmt::format("cannot add a result to run {} in '{}': {}", r.runId, path_, e.detail()));
      }
      throw;
    }
    int64_t id = sqlite3_last_insert_rowid(db_);
    if (!r.samplesUs.empty()) {
      samples_.reset();
      samples_.bind(1, id).bindBlob(2, sql::encodeDoubles(r.samplesUs));
      samples_.run();
    }
    for (int rank = 0; perRank > 0 && rank < r.nranks.value_or(0); ++rank) {
      std::span<const double> row(r.rankSamplesUs.data() + rank * perRank, perRank);
      rankSamples_.reset();
      rankSamples_.bind(1, id).bind(2, rank).bindBlob(3, sql::encodeDoubles(row));
      rankSamples_.run();
    }
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  Statement result_, samples_, rankSamples_;
};

int64_t pragmaInt(sqlite3* db, const char* pragma) {
  Statement s(db, fmt::format("PRAGMA {}", pragma));
  return s.step() ? s.int64At(0) : 0;
}

// A date or datetime as RunFilter documents it, normalized to the stored form (T separator).
// The digits of an already shape-checked YYYY-MM-DD[THH[:MM[:SS...]]] name a real date and time
// (2026-13-45 or 24:61 match the shape but no moment).
bool validCalendarFields(const std::string& t) {
  auto num = [&](size_t at) { return (t[at] - '0') * 10 + (t[at + 1] - '0'); };
  int year = std::stoi(t.substr(0, 4)), month = num(5), day = num(8);
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  // Optional THH, :MM, :SS: two digits each, in range.
  static constexpr int kLimit[] = {24, 60, 61};
  size_t at = 11;
  for (int field = 0; field < 3 && at < t.size(); ++field) {
    if (at + 2 > t.size() || !std::isdigit(static_cast<unsigned char>(t[at])) ||
        !std::isdigit(static_cast<unsigned char>(t[at + 1])) || num(at) >= kLimit[field]) {
      return false;
    }
    at += 2;
    if (at >= t.size() || t[at] != ':') break;
    ++at;
  }
  return true;
}

std::string normalizeTimeBound(const std::string& text, const char* flag) {
  std::string t = text;
  if (t.size() > 10 && t[10] == ' ') t[10] = 'T';
  // YYYY-MM-DD, then optionally THH, :MM, :SS, fraction and Z.
  const char* shape = "dddd-dd-dd";
  bool ok = t.size() >= 10;
  for (size_t i = 0; ok && i < 10; ++i) {
    ok = shape[i] == 'd' ? (t[i] >= '0' && t[i] <= '9') : t[i] == shape[i];
  }
  if (ok && t.size() > 10) {
    ok = t[10] == 'T' && t.size() >= 13;
    for (size_t i = 11; ok && i < t.size(); ++i) {
      char ch = t[i];
      ok = (ch >= '0' && ch <= '9') || ch == ':' || ch == '.' || (ch == 'Z' && i + 1 == t.size());
    }
  }
  if (ok) ok = validCalendarFields(t);
  if (!ok) {
    throw UsageError(fmt::format(
        "{} '{}': expected a UTC date or datetime such as 2025-03-01 or 2025-03-01T12:00", flag,
        text));
  }
  return t;
}

// A query's WHERE tests and the values bound to their placeholders, in order: the tests hold only
// placeholders (?N), never a value.
class Where {
 public:
  explicit Where(std::string query) : query_(std::move(query)) {}
  // " AND <test> ?N" with `value` bound to it ("label =", "r.size_bytes >=").
  void add(std::string_view test, std::variant<std::string, int64_t> value) {
    values_.push_back(std::move(value));
    query_ += fmt::format(" AND {} ?{}", test, values_.size());
  }
  // A run filter's window on `column`: from --since, up to --until's whole prefix ('~' sorts
  // after every character of a timestamp).
  void window(std::string_view column, const std::optional<std::string>& since,
              const std::optional<std::string>& until) {
    if (since) add(fmt::format("{} >=", column), normalizeTimeBound(*since, "--since"));
    if (until) add(fmt::format("{} <=", column), normalizeTimeBound(*until, "--until") + "~");
  }
  void append(std::string_view text) { query_ += text; }
  // " LIMIT ?N", after the ORDER BY.
  void limit(int64_t n) {
    values_.push_back(n);
    query_ += fmt::format(" LIMIT ?{}", values_.size());
  }
  const std::string& query() const { return query_; }
  void bind(sql::Statement& s) const {
    for (size_t i = 0; i < values_.size(); ++i) {
      std::visit([&](const auto& v) { s.bind(static_cast<int>(i + 1), v); }, values_[i]);
    }
  }

 private:
  std::string query_;
  std::vector<std::variant<std::string, int64_t>> values_;
};

bool processGone(int64_t pid) {
  if (pid <= 0) return false;  // unknown: never reap
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Why `path` (which does not exist) cannot be created, or "" when its directory looks fine.
std::string whyNotCreatable(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0) {
    if (errno == ENOENT) return fmt::format("directory '{}' does not exist", parent.string());
    if (errno == ENOTDIR) return fmt::format("'{}' is not a directory", parent.string());
    return fmt::format("'{}': {}", parent.string(), std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return fmt::format("'{}' is not a directory", parent.string());
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return fmt::format("directory '{}' is not writable", parent.string());
  }
  return "";
}

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbHandle = std::unique_ptr<sqlite3, CloseDb>;

// Identity, integrity and version of a freshly opened connection, by reading only; returns the
// schema version. Throws SqliteError from SQLite, DatabaseError for what it finds.
int64_t checkIdentity(sqlite3* db, const std::string& path) {
  // The first read of the header: a file that is not SQLite fails here with SQLITE_NOTADB.
  // The three reads share one read transaction: another process may be creating the schema
  // right now, and a half-old, half-new view would look like a foreign database.
  int64_t appId = 0, version = 0;
  std::vector<std::string> objects;
  sql::retryBusy(
      [&] {
        sql::exec(db, "BEGIN");
        try {
          appId = pragmaInt(db, "application_id");
          version = pragmaInt(db, "user_version");
          objects.clear();
          Statement s(
              db, "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
          while (s.step()) objects.push_back(s.textAt(0));
        } catch (...) {
          sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
          throw;
        }
        sql::exec(db, "COMMIT");
      },
      60);
  bool fresh = appId == 0 && version == 0 && objects.empty();
  if (appId != Store::kApplicationId && !fresh) {
    if (objects.size() > 4) {
      objects.resize(4);
      objects.push_back("...");
    }
    throw DatabaseError(fmt::format(
        "'{}' is not a collbench database (SQLite file with application_id {:#x} and tables: "
        "{})",
        path, static_cast<uint32_t>(appId), fmt::join(objects, ", ")));
  }
  {
    // quick_check reads every page (O(size), without the index cross-checks of
    // integrity_check): a damaged file is reported here rather than as odd results later.
    Statement s(db, "PRAGMA quick_check(3)");
    std::vector<std::string> problems;
    while (s.step()) {
      // A row may hold several lines ("*** in database main ***\nPage 4: ..."): keep the
      // problems, on one line.
      for (const std::string& line : nonEmptyLines(s.textAt(0))) {
        if (!line.starts_with("***")) problems.push_back(line);
      }
    }
    if (!(problems.size() == 1 && problems[0] == "ok")) {
      throw DatabaseError(
          fmt::format("database '{}' is corrupt: {}", path, fmt::join(problems, "; ")));
    }
  }
  if (version > kLatestVersion) {
    throw DatabaseError(fmt::format(
        "database '{}' has schema version {}, newer than this collbench supports ({}): use a "
        "newer collbench",
        path, version, kLatestVersion));
  }
  return version;
}

// The WAL is checkpointed every kWalCheckpointPages pages written (SQLite's default is 1000, 4 MiB
// of log beside the file, which made the first small run fail on a 2 MiB file system) and cut
// back to kWalKeepBytes after each checkpoint; each run ends with a full checkpoint
// (Store::finishRun), so the database needs little more than its own size.
constexpr int kWalCheckpointPages = 64;
constexpr int kWalKeepBytes = 64 << 10;

// Connection settings of a writing connection; then the migrations. Throws SqliteError from
// SQLite, DatabaseError for what it finds.
void prepareForWriting(sqlite3* db, const std::string& path, int64_t version) {
  // WAL: readers never block the writer and a crash mid-transaction loses only that
  // transaction. Changing the journal mode may return BUSY without the busy handler.
  sql::retryBusy([&] { sql::exec(db, "PRAGMA journal_mode = WAL"); }, 60);
  // In WAL mode NORMAL syncs at checkpoints only: a power loss may drop the last commits but
  // never corrupts the file.
  sql::exec(db, "PRAGMA synchronous = NORMAL");
  sql::exec(db, fmt::format("PRAGMA wal_autocheckpoint = {}", kWalCheckpointPages));
  sql::exec(db, fmt::format("PRAGMA journal_size_limit = {}", kWalKeepBytes));

  if (version == kLatestVersion) {
    sql::exec(db, "PRAGMA foreign_keys = ON");
    return;
  }
  // Migrations run with foreign keys off (a table rebuild's DROP would cascade; the pragma is a
  // no-op inside a transaction), checked by foreign_key_check before the commit.
  sql::exec(db, "PRAGMA foreign_keys = OFF");
  Transaction tx(db);
  // Another process may have migrated between our read and the write lock.
  version = pragmaInt(db, "user_version");
  const int64_t appId = pragmaInt(db, "application_id");
  if (appId != 0 && appId != Store::kApplicationId) {
    throw DatabaseError(fmt::format("'{}' is not a collbench database", path));
  }
  for (int v = static_cast<int>(version); v < kLatestVersion; ++v) {
    sql::exec(db, kMigrations[v]);
  }
  // PRAGMAs take no bound parameters; both values are integer constants of this file.
  sql::exec(db, fmt::format("PRAGMA user_version = {}", kLatestVersion));
  sql::exec(db, fmt::format("PRAGMA application_id = {}", Store::kApplicationId));
  {
    Statement check(db, "PRAGMA foreign_key_check");
    if (check.step()) {
      throw DatabaseError(
          fmt::format("cannot migrate database '{}': {} row {} refers to a missing {} row", path,
                      check.textAt(0), check.int64At(1), check.textAt(2)));
    }
  }
  tx.commit();
  sql::exec(db, "PRAGMA foreign_keys = ON");
}

}  // namespace

std::string utcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

namespace {

// Why nothing can be written beside `path`: "the file system is read-only", "the disk is full",
// or "" when neither is known.
std::string whyNotWritable(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return "";
  if (fs.f_flag & ST_RDONLY) return "the file system is read-only";
  if (fs.f_bavail == 0) return "the disk is full";
  return "";
}

// One line for an SQLite error met while opening `path` to `what` ("read", "write").
DatabaseError openError(const SqliteError& e, const std::string& path, std::string_view what) {
  if (e.code() == SQLITE_NOTADB) {
    return DatabaseError(
        fmt::format("'{}' is not a collbench database (file is not SQLite)", path));
  }
  if (e.code() == SQLITE_CORRUPT) {
    return DatabaseError(fmt::format("database '{}' is corrupt: {}", path, e.detail()));
  }
  const bool unwritable = e.code() == SQLITE_READONLY || e.code() == SQLITE_CANTOPEN ||
                          e.code() == SQLITE_FULL || e.code() == SQLITE_IOERR;
  // SQLite says "disk I/O error" when it cannot grow the log's index on a full disk.
  if (const std::string why = unwritable ? whyNotWritable(path) : ""; !why.empty()) {
    return DatabaseError(fmt::format("cannot {} database '{}': {}", what, path, why));
  }
  if (e.code() == SQLITE_READONLY || e.code() == SQLITE_CANTOPEN) {
    return DatabaseError(fmt::format("cannot {} database '{}': {}", what, path, e.detail()));
  }
  return DatabaseError(fmt::format("cannot open database '{}': {}", path, e.detail()));
}

// An SQLite URI of a file path with query parameters: '%', '?' and '#' are escaped, and a path
// that starts with "//" keeps one slash (two would name a URI authority).
std::string fileUri(const std::string& path, std::string_view params) {
  std::string_view p = path;
  while (p.starts_with("//")) p.remove_prefix(1);
  std::string uri = "file:";
  for (char c : p) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?" + std::string(params);
}

// The size of a file, -1 when there is none.
int64_t fileSizeOrNone(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

// A connection that cannot change the database (query_only; with `params` "mode=ro..." or
// "immutable=1" a read-only one) whose first read checks the file (checkIdentity). Throws
// SqliteError.
DbHandle connectForReading(const std::string& path, std::string_view params, int64_t& version) {
  sqlite3* raw = nullptr;
  const std::string uri = fileUri(path, params);
  const int flags =
      (params.empty() ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_URI;
  const int rc = sqlite3_open_v2(uri.c_str(), &raw, flags, nullptr);
  DbHandle db(raw);
  if (rc != SQLITE_OK) sql::fail(raw, rc, "cannot open");
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  sql::exec(db.get(), "PRAGMA query_only = 1");
  version = checkIdentity(db.get(), path);
  return db;
}

}  // namespace

Store Store::openForReading(const std::string& path) {
  if (path.empty()) throw DatabaseError("empty database path");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      throw DatabaseError(fmt::format("no database at '{}'", path));
    }
    throw DatabaseError(fmt::format("cannot open database '{}': {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw DatabaseError(fmt::format("'{}' is a directory, not a collbench database", path));
  }
  int64_t version = 0;
  DbHandle db;
  try {
    // Opened as a writer would be, so that as the last connection it removes the log and its
    // index as a writer does (a read-only one leaves them beside the file), but query_only.
    db = connectForReading(path, "", version);
  } catch (const SqliteError& e) {
    // A reader still sets up the log's shared index (-shm) beside the file, which fails on a full
    // disk (SQLite resizes it) or a read-only file system (it can't create it). What the file
    // holds can still be read, read-only: all of it when the log is empty (immutable: no index,
    // no locks), else through the index left beside it.
    const std::string why = whyNotWritable(path);
    const int code = e.code();
    const bool besideUnwritable = code == SQLITE_IOERR || code == SQLITE_FULL ||
                                  code == SQLITE_CANTOPEN || code == SQLITE_READONLY;
    if (why.empty() || !besideUnwritable) throw openError(e, path, "read");
    const int64_t wal = fileSizeOrNone(path + "-wal");
    try {
      if (wal <= 0) {
        db = connectForReading(path, "immutable=1", version);
      } else if (fileSizeOrNone(path + "-shm") >= 0) {
        db = connectForReading(path, "mode=ro&readonly_shm=1", version);
      } else {
        throw DatabaseError(fmt::format(
            "cannot read database '{}' here: {}, and its write-ahead log holds {} not yet in the "
            "file without the index (-shm) to read it by; copy the database and its -wal to a "
            "writable disk and read it there",
            path, why, formatSize(static_cast<uint64_t>(wal))));
      }
    } catch (const SqliteError& again) {
      throw DatabaseError(
          fmt::format("cannot read database '{}' ({}): {}", path, why, again.detail()));
    }
  }
  Store store(db.release(), path);
  // Migrating an older schema and reaping runs whose process is gone are writes: a writing
  // connection does them when it can. An older schema must be migrated before it can be read;
  // dead runs are read as they are in the file when it can't be written.
  bool reap = false;
  try {
    reap = !store.deadRunIds().empty();
  } catch (const SqliteError&) {  // an older schema may lack the columns; migrating comes first
  }
  if (version < kLatestVersion || reap) {
    try {
      Store::open(path, false);
    } catch (const DatabaseError& e) {
      if (version < kLatestVersion) {
        throw DatabaseError(fmt::format(
            "database '{}' has schema version {}: this collbench reads version {} and cannot "
            "migrate it here ({})",
            path, version, kLatestVersion, e.what()));
      }
    }
  }
  return store;
}

Store Store::open(const std::string& path, bool create) {
  if (path.empty()) throw DatabaseError("empty database path");
  struct stat st {};
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT && errno != ENOTDIR) {
    throw DatabaseError(fmt::format("cannot open database '{}': {}", path, std::strerror(errno)));
  }
  if (!exists && !create) throw DatabaseError(fmt::format("no database at '{}'", path));
  if (!exists) {
    if (std::string why = whyNotCreatable(path); !why.empty()) {
      throw DatabaseError(fmt::format("cannot create database '{}': {}", path, why));
    }
  } else if (S_ISDIR(st.st_mode)) {
    throw DatabaseError(fmt::format("'{}' is a directory, not a collbench database", path));
  }

  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbHandle db(raw);
  if (rc != SQLITE_OK) {
    int err = raw ? sqlite3_system_errno(raw) : 0;
    std::string why = err ? std::strerror(err) : (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    throw DatabaseError(
        fmt::format("cannot {} database '{}': {}", exists ? "open" : "create", path, why));
  }
  // SQLite opens a file it may not write read-only without a word; a writer says so at once.
  if (sqlite3_db_readonly(db.get(), "main") == 1) {
    const std::string why = whyNotWritable(path);
    throw DatabaseError(fmt::format("cannot write database '{}': {}", path,
                                    why.empty() ? "the file is read-only" : why));
  }
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  try {
    prepareForWriting(db.get(), path, checkIdentity(db.get(), path));
  } catch (const SqliteError& e) {
    throw openError(e, path, "write");
  }
  // Every open reaps: a run whose process is gone reads `interrupted`, whichever command looks.
  Store store(db.release(), path);
  try {
    store.reapDeadRuns();
  } catch (const SqliteError& e) {
    throw DatabaseError(fmt::format("cannot open database '{}': {}", path, e.detail()));
  }
  return store;
}

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Store::~Store() {
  if (db_) sqlite3_close_v2(db_);
}

Store::Store(Store&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Store& Store::operator=(Store&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

std::string_view Store::migrationSql(int toVersion) {
  if (toVersion < 1 || toVersion > kLatestVersion) {
    throw std::out_of_range(fmt::format("no schema migration to version {}", toVersion));
  }
  return kMigrations[toVersion - 1];
}

int Store::schemaVersion() const { return static_cast<int>(pragmaInt(db_, "user_version")); }

int Store::latestSchemaVersion() { return kLatestVersion; }

int64_t Store::beginRun(const RunRecord& run) {
  RunRecord r = run;
  if (r.startedAt.empty()) r.startedAt = utcTimestamp();
  if (r.status == RunStatus::kRunning && r.pid == 0) {
    r.pid = ::getpid();
    if (r.host.empty()) r.host = hostName();
  }
  Transaction tx(db_);
  Statement s(db_,
              "INSERT INTO runs (started_at, finished_at, label, command_line, source, "
              "collbench_version, mpi_version, ucx_version, cuda_version, nccl_version, hosts, "
              "world_size, world_kind, status, fingerprint, environment_json, pid, host) VALUES "
              "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)");
  s.bindAll(r.startedAt, r.finishedAt, r.label, r.commandLine, r.source, r.collbenchVersion,
            r.mpiVersion, r.ucxVersion, r.cudaVersion, r.ncclVersion, r.hosts, r.worldSize,
            r.worldKind, runStatusName(r.status), r.fingerprint,
            r.environmentJson.empty() ? std::string_view("{}") : r.environmentJson, r.pid, r.host);
  s.run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  if (!r.topologyJson.empty()) {
    Statement t(db_, "INSERT INTO run_details (run_id, kind, json) VALUES (?1, 'topology', ?2)");
    t.bind(1, id);
    t.bind(2, r.topologyJson);
    t.run();
  }
  tx.commit();
  return id;
}

std::string Store::runTopology(int64_t runId) const {
  return runDetail(runId, "topology").value_or("");
}

void Store::addResult(const ResultRecord& result) {
  Transaction tx(db_);
  ResultWriter writer(db_, path_);
  writer.write(result);
  tx.commit();
}

void Store::addResults(const std::vector<ResultRecord>& results) {
  Transaction tx(db_);
  ResultWriter writer(db_, path_);
  for (const ResultRecord& r : results) writer.write(r);
  tx.commit();
}

void Store::setRunDetail(int64_t runId, const std::string& kind, const std::string& json) {
  Transaction tx(db_);
  Statement s(db_, "INSERT OR REPLACE INTO run_details (run_id, kind, json) VALUES (?1, ?2, ?3)");
  s.bindAll(runId, kind, json);
  s.run();
  tx.commit();
}

std::optional<std::string> Store::runDetail(int64_t runId, const std::string& kind) const {
  Statement s(db_, "SELECT json FROM run_details WHERE run_id = ?1 AND kind = ?2");
  s.bindAll(runId, kind);
  if (!s.step()) return std::nullopt;
  return s.textAt(0);
}

void Store::finishRun(int64_t runId, RunStatus status) {
  Transaction tx(db_);
  Statement s(db_, "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3");
  s.bindAll(runStatusName(status), utcTimestamp(), runId);
  s.run();
  if (sqlite3_changes(db_) == 0) {
    throw DatabaseError(fmt::format("no run {} in '{}'", runId, path_));
  }
  tx.commit();
  // The run's log into the file, and the log cut to nothing (see kWalCheckpointPages). Best
  // effort and without waiting (a signal's hook ends the run here while mpirun counts down): a
  // reader on an old snapshot, another writer or a full disk leaves it to the next checkpoint;
  // the run's status is committed either way.
  sqlite3_busy_timeout(db_, 0);
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

std::vector<int64_t> Store::deadRunIds() const {
  std::vector<int64_t> dead;
  Statement s(db_, "SELECT id, pid FROM runs WHERE status = 'running' AND host = ?1");
  s.bind(1, hostName());
  while (s.step()) {
    if (processGone(s.int64At(1))) dead.push_back(s.int64At(0));
  }
  return dead;
}

void Store::reapDeadRuns() {
  // Read first without the write lock: usually nothing is left running, and `runs`/`show`
  // should not queue behind a writer for nothing.
  const std::vector<int64_t> dead = deadRunIds();
  if (dead.empty()) return;
  Transaction tx(db_);
  Statement s(db_,
              "UPDATE runs SET status = 'interrupted', finished_at = ?1 "
              "WHERE id = ?2 AND status = 'running'");
  std::string now = utcTimestamp();
  for (int64_t id : dead) {
    s.reset();
    s.bindAll(now, id);
    s.run();
  }
  tx.commit();
}

std::vector<RunRecord> Store::listRuns(const RunFilter& filter) const {
  Where where(fmt::format("SELECT {} FROM runs WHERE 1", kRunColumns));
  if (filter.label) where.add("label =", *filter.label);
  where.window("started_at", filter.since, filter.until);
  if (filter.fingerprint) where.add("fingerprint =", *filter.fingerprint);
  where.append(" ORDER BY started_at DESC, id DESC");
  if (filter.limit > 0) where.limit(filter.limit);
  Statement s(db_, where.query());
  where.bind(s);
  std::vector<RunRecord> runs;
  while (s.step()) runs.push_back(readRun(s));
  return runs;
}

std::optional<RunRecord> Store::findRun(int64_t id) const {
  Statement s(db_, fmt::format("SELECT {} FROM runs WHERE id = ?1", kRunColumns));
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return readRun(s);
}

std::vector<ResultRecord> Store::results(int64_t runId, bool withSamples) const {
  std::vector<ResultRecord> out;
  {
    Statement s(
        db_, fmt::format("SELECT {} FROM results WHERE run_id = ?1 ORDER BY id", kResultColumns));
    s.bind(1, runId);
    while (s.step()) out.push_back(readResult(s));
  }
  if (!withSamples || out.empty()) return out;
  // `out` is in id order: sample rows find their result by binary search.
  auto byId = [&](int64_t id) -> ResultRecord* {
    auto it = std::lower_bound(out.begin(), out.end(), id,
                               [](const ResultRecord& r, int64_t v) { return r.id < v; });
    return it != out.end() && it->id == id ? &*it : nullptr;
  };
  {
    Statement s(db_,
                "SELECT s.result_id, s.times_us FROM samples s JOIN results r ON r.id = "
                "s.result_id WHERE r.run_id = ?1");
    s.bind(1, runId);
    while (s.step()) {
      if (ResultRecord* r = byId(s.int64At(0))) r->samplesUs = s.doublesAt(1);
    }
  }
  {
    Statement s(db_,
                "SELECT s.result_id, s.times_us FROM rank_samples s JOIN results r ON r.id = "
                "s.result_id WHERE r.run_id = ?1 ORDER BY s.result_id, s.rank");
    s.bind(1, runId);
    while (s.step()) {
      if (ResultRecord* r = byId(s.int64At(0))) {
        std::vector<double> row = s.doublesAt(1);
        r->rankSamplesUs.insert(r->rankSamplesUs.end(), row.begin(), row.end());
      }
    }
  }
  return out;
}

RunSummary Store::summarizeRun(int64_t runId) const {
  RunSummary summary;
  {
    Statement s(db_,
                "SELECT count(*), coalesce(sum(status <> 'ok'), 0), coalesce(max(wrong), -1) "
                "FROM results WHERE run_id = ?1");
    s.bind(1, runId);
    if (s.step()) {
      summary.results = s.int64At(0);
      summary.notOk = s.int64At(1);
      summary.worstWrong = s.int64At(2);
    }
  }
  Statement s(db_,
              "SELECT collective FROM results WHERE run_id = ?1 GROUP BY collective "
              "ORDER BY min(id)");
  s.bind(1, runId);
  while (s.step()) summary.collectives.push_back(s.textAt(0));
  return summary;
}

}  // namespace cb

// ---- compare, gate, history, export and db maintenance ----

namespace cb {

namespace {

// "id, started_at, ..." -> "u.id, u.started_at, ..." for joins.
std::string prefixedColumns(std::string_view columns, std::string_view prefix) {
  std::string out;
  for (const std::string& c : splitList(columns)) {
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", prefix, c);
  }
  return out;
}

int64_t countRows(sqlite3* db, const char* table) {
  // Table names are constants of this file; values are never spliced in.
  sql::Statement s(db, fmt::format("SELECT count(*) FROM {}", table));
  return s.step() ? s.int64At(0) : 0;
}

}  // namespace

std::vector<ResultRecord> Store::resultsWithSamples(int64_t runId) const {
  std::vector<ResultRecord> out = results(runId, false);
  if (out.empty()) return out;
  auto byId = [&](int64_t id) -> ResultRecord* {
    auto it = std::lower_bound(out.begin(), out.end(), id,
                               [](const ResultRecord& r, int64_t v) { return r.id < v; });
    return it != out.end() && it->id == id ? &*it : nullptr;
  };
  sql::Statement s(db_,
                   "SELECT s.result_id, s.times_us FROM samples s JOIN results r ON r.id = "
                   "s.result_id WHERE r.run_id = ?1");
  s.bind(1, runId);
  while (s.step()) {
    if (ResultRecord* r = byId(s.int64At(0))) r->samplesUs = s.doublesAt(1);
  }
  return out;
}

std::vector<std::string> Store::storedValues(std::string_view column) const {
  if (column != "collective" && column != "variant") {
    throw std::invalid_argument("storedValues: not a CASE column");
  }
  Statement s(db_, fmt::format("SELECT DISTINCT {0} FROM results ORDER BY {0}", column));
  std::vector<std::string> values;
  while (s.step()) values.push_back(s.textAt(0));
  return values;
}

std::vector<HistoryPoint> Store::history(const CasePattern& pattern,
                                         const RunFilter& filter) const {
  Where where(fmt::format(
      "SELECT {}, {} FROM results r JOIN runs u ON u.id = r.run_id WHERE r.status = 'ok'",
      prefixedColumns(kRunColumns, "u."), prefixedColumns(kResultColumns, "r.")));
  if (pattern.collective) where.add("r.collective =", *pattern.collective);
  if (pattern.variant) where.add("r.variant =", *pattern.variant);
  if (pattern.dtype) where.add("r.dtype =", *pattern.dtype);
  if (pattern.op) where.add("r.op =", *pattern.op);
  if (pattern.placement) where.add("r.placement =", *pattern.placement);
  if (pattern.sizes) {
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    where.add("r.size_bytes >=", static_cast<int64_t>(std::min(pattern.sizes->first, kMax)));
    where.add("r.size_bytes <=", static_cast<int64_t>(std::min(pattern.sizes->second, kMax)));
  }
  // A case key's nranks 0 and root -1 stand for NULL (unknown, not rooted).
  if (pattern.nranks && *pattern.nranks == 0) where.append(" AND r.nranks IS NULL");
  if (pattern.nranks && *pattern.nranks != 0) where.add("r.nranks =", int64_t{*pattern.nranks});
  if (pattern.root && *pattern.root < 0) where.append(" AND r.root IS NULL");
  if (pattern.root && *pattern.root >= 0) where.add("r.root =", int64_t{*pattern.root});
  if (filter.label) where.add("u.label =", *filter.label);
  if (filter.fingerprint) where.add("u.fingerprint =", *filter.fingerprint);
  where.window("u.started_at", filter.since, filter.until);
  where.append(" ORDER BY u.started_at, u.id, r.id");
  sql::Statement s(db_, where.query());
  where.bind(s);
  const int runColumns = static_cast<int>(splitList(kRunColumns).size());
  std::vector<HistoryPoint> points;
  while (s.step()) {
    HistoryPoint p;
    p.run = readRun(s);
    p.result = readResult(s, runColumns);
    points.push_back(std::move(p));
  }
  if (filter.limit > 0) {
    // Keep the newest `limit` runs that have a match (points are oldest first).
    std::vector<int64_t> runs;
    for (auto it = points.rbegin(); it != points.rend(); ++it) {
      if (std::find(runs.begin(), runs.end(), it->run.id) == runs.end()) {
        runs.push_back(it->run.id);
      }
    }
    if (runs.size() > static_cast<size_t>(filter.limit)) {
      runs.resize(static_cast<size_t>(filter.limit));
      std::erase_if(points, [&](const HistoryPoint& p) {
        return std::find(runs.begin(), runs.end(), p.run.id) == runs.end();
      });
    }
  }
  return points;
}

DbCheckReport Store::check() const {
  DbCheckReport report;
  {
    sql::Statement s(db_, "PRAGMA integrity_check(100)");
    std::vector<std::string> lines;
    while (s.step()) {
      for (const std::string& line : nonEmptyLines(s.textAt(0))) {
        if (!line.starts_with("***")) lines.push_back(line);
      }
    }
    if (!(lines.size() == 1 && lines[0] == "ok")) report.problems = lines;
  }
  {
    sql::Statement s(db_, "PRAGMA foreign_key_check");
    while (s.step()) {
      report.problems.push_back(fmt::format("{} row {} refers to a missing {} row", s.textAt(0),
                                            s.int64At(1), s.textAt(2)));
    }
  }
  report.schemaVersion = schemaVersion();
  {
    sql::Statement s(db_, "SELECT status, count(*) FROM runs GROUP BY status ORDER BY status");
    while (s.step()) report.runsByStatus.emplace_back(s.textAt(0), s.int64At(1));
  }
  report.runs = countRows(db_, "runs");
  report.results = countRows(db_, "results");
  report.samples = countRows(db_, "samples");
  report.rankSamples = countRows(db_, "rank_samples");
  return report;
}

PruneReport Store::prune(const PruneOptions& o) {
  if (o.keepLast < 0 && !o.before) {
    throw UsageError("prune needs --keep-last N or --before DATE");
  }
  // The finished runs of the selection, newest first; --before narrows the ones to delete.
  auto finished = [&](bool before) {
    Where where("SELECT id FROM runs WHERE status <> 'running'");
    if (o.label) where.add("label =", *o.label);
    if (before) where.add("started_at <", normalizeTimeBound(*o.before, "--before"));
    where.append(" ORDER BY started_at DESC, id DESC");
    std::vector<int64_t> ids;
    sql::Statement s(db_, where.query());
    where.bind(s);
    while (s.step()) ids.push_back(s.int64At(0));
    return ids;
  };
  PruneReport report;
  // The selection and the deletes share one write transaction: a run finishing meanwhile can't
  // slip between them.
  sql::Transaction tx(db_);
  std::vector<int64_t> ids = finished(o.before.has_value());
  if (o.keepLast >= 0) {
    // keep-last counts every finished run of the selection, older or not than --before.
    const std::vector<int64_t> all = finished(false);
    size_t keep = std::min(all.size(), static_cast<size_t>(o.keepLast));
    std::set<int64_t> kept(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep));
    std::erase_if(ids, [&](int64_t id) { return kept.count(id) > 0; });
  }
  report.runIds = ids;
  sql::Statement count(db_, "SELECT count(*) FROM results WHERE run_id = ?1");
  sql::Statement del(db_, "DELETE FROM runs WHERE id = ?1");
  for (int64_t id : ids) {
    count.reset();
    count.bind(1, id);
    if (count.step()) report.results += count.int64At(0);
    if (o.dryRun) continue;
    del.reset();
    del.bind(1, id);
    del.run();
  }
  if (!o.dryRun) tx.commit();
  return report;
}

void Store::vacuum() {
  sql::retryBusy([&] { sql::exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)"); }, 60);
  sql::retryBusy([&] { sql::exec(db_, "VACUUM"); }, 60);
  sql::retryBusy([&] { sql::exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)"); }, 60);
}

int64_t Store::fileBytes() const {
  return pragmaInt(db_, "page_count") * pragmaInt(db_, "page_size");
}

}  // namespace cb
