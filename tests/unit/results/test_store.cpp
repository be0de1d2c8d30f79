// The SQLite results store: round trips, migrations, concurrent writers in several processes,
// a writer killed mid-run, and the errors for files that are not (usable) collbench databases.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/TempDir.h"
#include "core/Error.h"
#include "core/HostMap.h"
#include "results/Store.h"

namespace cb {
namespace {

// True when `text` contains `part`; prints both otherwise.
::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// A fresh directory under /tmp, removed with everything in it.

RunRecord makeRun(const std::string& label, const std::string& startedAt) {
  RunRecord r;
  r.startedAt = startedAt;
  r.label = label;
  r.commandLine = "collbench run --np 4 -b 8 -e 1M";
  r.collbenchVersion = "0.1.0";
  r.mpiVersion = "Open MPI 4.1.4";
  r.ucxVersion = "1.13.1";
  r.hosts = "node1,node2";
  r.worldSize = 4;
  r.worldKind = "local";
  r.fingerprint = "abc123";
  r.environmentJson = R"({"cpu":"test"})";
  r.host = "node1";
  r.pid = 1;  // init: never reaped as dead
  return r;
}

ResultRecord makeResult(int64_t runId, int index, int nranks = 3, int iterations = 4) {
  ResultRecord r;
  r.runId = runId;
  r.collective = index % 2 ? "allgather" : "allreduce";
  r.variant = "ring";
  r.dtype = "float";
  r.op = index % 2 ? "none" : "sum";
  r.sizeBytes = 8ull << (index % 20);
  r.count = r.sizeBytes / 4;
  r.placement = index % 3 ? "out" : "in";
  r.nranks = nranks;
  r.iterations = iterations;
  r.timeUs = 10.5 + index;
  r.medianUs = r.timeUs;
  r.meanUs = r.timeUs + 0.25;
  r.minUs = r.timeUs - 1;
  r.maxUs = r.timeUs + 2;
  r.p99Us = r.timeUs + 1.75;
  r.cv = 0.03125;
  r.algbw = 1.5;
  r.busbw = 2.0;
  r.wrong = index % 4 == 3 ? 7 : 0;
  for (int i = 0; i < iterations; ++i) r.samplesUs.push_back(r.timeUs + i * 0.5);
  for (int i = 0; i < nranks * iterations; ++i) r.rankSamplesUs.push_back(100.0 * index + i);
  return r;
}

// Runs a query on a separate raw connection (as another tool would) and returns the first
// column of the first row as text.
std::string queryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* text = sqlite3_column_text(stmt, 0);
    value = text ? reinterpret_cast<const char*>(text) : "";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

void execRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::string openError(const std::string& path, bool create = true) {
  try {
    Store::open(path, create);
  } catch (const DatabaseError& e) {
    EXPECT_EQ(exitCodeFor(e.kind()), 2);
    return e.what();
  }
  ADD_FAILURE() << "opening '" << path << "' did not throw";
  return "";
}

// A RunFilter built field by field (designated initializers would warn under -Wextra).
template <typename Set>
RunFilter filter(Set set) {
  RunFilter f;
  set(f);
  return f;
}

// Forks a child that runs `body` and exits 0, or 1 with the error on stderr. Returns its pid.
pid_t forkChild(const std::function<void()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", static_cast<int>(::getpid()), e.what());
      code = 1;
    }
    ::_exit(code);
  }
  return pid;
}

TEST(Store, RoundTripsRunsResultsAndSamples) {
  TempDir dir;
  Store store = Store::open(dir.file("cb.db"));
  RunRecord run = makeRun("nightly", "2025-03-01T10:00:00Z");
  run.cudaVersion = "13.0";
  run.ncclVersion = "2.28.9";
  int64_t id = store.beginRun(run);
  EXPECT_GT(id, 0);

  std::optional<RunRecord> got = store.findRun(id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->id, id);
  EXPECT_EQ(got->startedAt, run.startedAt);
  EXPECT_EQ(got->finishedAt, "");
  EXPECT_EQ(got->label, run.label);
  EXPECT_EQ(got->commandLine, run.commandLine);
  EXPECT_EQ(got->source, "collbench");
  EXPECT_EQ(got->collbenchVersion, run.collbenchVersion);
  EXPECT_EQ(got->mpiVersion, run.mpiVersion);
  EXPECT_EQ(got->ucxVersion, run.ucxVersion);
  EXPECT_EQ(got->cudaVersion, "13.0");
  EXPECT_EQ(got->ncclVersion, "2.28.9");
  EXPECT_EQ(got->hosts, run.hosts);
  EXPECT_EQ(got->worldSize, 4);
  EXPECT_EQ(got->worldKind, "local");
  EXPECT_EQ(got->status, RunStatus::kRunning);
  EXPECT_EQ(got->fingerprint, run.fingerprint);
  EXPECT_EQ(got->environmentJson, run.environmentJson);
  EXPECT_EQ(got->pid, 1);
  EXPECT_EQ(got->host, "node1");

  std::vector<ResultRecord> written;
  for (int i = 0; i < 5; ++i) written.push_back(makeResult(id, i));
  written[2].status = ResultStatus::kUnsupported;
  written[2].message = "needs a power of two";
  written[2].samplesUs.clear();
  written[2].rankSamplesUs.clear();
  written[4].root = 2;
  written[4].wrong = -1;
  for (const ResultRecord& r : written) store.addResult(r);

  std::vector<ResultRecord> read = store.results(id, true);
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    const ResultRecord& w = written[i];
    const ResultRecord& r = read[i];
    EXPECT_GT(r.id, 0);
    EXPECT_EQ(r.runId, id);
    EXPECT_EQ(r.collective, w.collective);
    EXPECT_EQ(r.variant, w.variant);
    EXPECT_EQ(r.dtype, w.dtype);
    EXPECT_EQ(r.op, w.op);
    EXPECT_EQ(r.root, w.root);
    EXPECT_EQ(r.sizeBytes, w.sizeBytes);
    EXPECT_EQ(r.count, w.count);
    EXPECT_EQ(r.placement, w.placement);
    EXPECT_EQ(r.nranks, w.nranks);
    EXPECT_EQ(r.status, w.status);
    EXPECT_EQ(r.message, w.message);
    EXPECT_EQ(r.iterations, w.iterations);
    EXPECT_EQ(r.timeUs, w.timeUs);
    EXPECT_EQ(r.statistic, "median");
    EXPECT_EQ(r.medianUs, w.medianUs);
    EXPECT_EQ(r.meanUs, w.meanUs);
    EXPECT_EQ(r.minUs, w.minUs);
    EXPECT_EQ(r.maxUs, w.maxUs);
    EXPECT_EQ(r.p99Us, w.p99Us);
    EXPECT_EQ(r.cv, w.cv);
    EXPECT_EQ(r.algbw, w.algbw);
    EXPECT_EQ(r.busbw, w.busbw);
    EXPECT_EQ(r.wrong, w.wrong);
    EXPECT_EQ(r.samplesUs, w.samplesUs);
    EXPECT_EQ(r.rankSamplesUs, w.rankSamplesUs);
  }
  // Without samples the records are the same but carry none.
  std::vector<ResultRecord> light = store.results(id);
  ASSERT_EQ(light.size(), written.size());
  EXPECT_TRUE(light[0].samplesUs.empty());
  EXPECT_TRUE(light[0].rankSamplesUs.empty());
  EXPECT_EQ(light[3].timeUs, written[3].timeUs);

  // Samples are little-endian float64 (readable by any tool): 10.5 = 0x4025000000000000.
  EXPECT_EQ(queryText(store.path(), fmt::format("SELECT hex(substr(times_us, 1, 8)) FROM samples "
                                                "WHERE result_id = {}",
                                                read[0].id)),
            "0000000000002540");
  // One rank_samples row per rank, each with `iterations` values.
  EXPECT_EQ(queryText(store.path(), fmt::format("SELECT count(*) || ':' || max(length(times_us)) "
                                                "FROM rank_samples WHERE result_id = {}",
                                                read[0].id)),
            "3:32");

  RunSummary summary = store.summarizeRun(id);
  EXPECT_EQ(summary.results, 5);
  EXPECT_EQ(summary.notOk, 1);
  EXPECT_EQ(summary.worstWrong, 7);
  EXPECT_EQ(summary.collectives, (std::vector<std::string>{"allreduce", "allgather"}));
  EXPECT_EQ(store.summarizeRun(id + 100).results, 0);
  EXPECT_EQ(store.summarizeRun(id + 100).worstWrong, -1);

  store.finishRun(id, RunStatus::kOk);
  got = store.findRun(id);
  EXPECT_EQ(got->status, RunStatus::kOk);
  EXPECT_EQ(got->finishedAt.size(), std::string("2025-03-01T10:00:00Z").size());
  EXPECT_FALSE(store.findRun(id + 100));
  EXPECT_THROW(store.finishRun(id + 100, RunStatus::kOk), DatabaseError);
  // A result for a run that does not exist is refused (foreign key), with the run id.
  try {
    store.addResult(makeResult(id + 100, 0));
    ADD_FAILURE() << "result for a missing run accepted";
  } catch (const DatabaseError& e) {
    EXPECT_TRUE(contains(e.what(), fmt::format("run {}", id + 100)));
  }
  // Per-rank samples that do not split over the ranks are a caller bug, and nothing is kept.
  ResultRecord bad = makeResult(id, 0);
  bad.rankSamplesUs.pop_back();
  EXPECT_THROW(store.addResult(bad), InternalError);
  EXPECT_EQ(store.results(id).size(), 5u);
}

TEST(Store, AddResultsIsOneTransaction) {
  TempDir dir;
  Store store = Store::open(dir.file("cb.db"));
  RunRecord run = makeRun("import", "2024-01-01T00:00:00Z");
  run.source = "nccl-tests";
  run.status = RunStatus::kOk;
  int64_t id = store.beginRun(run);
  std::vector<ResultRecord> batch;
  for (int i = 0; i < 50; ++i) batch.push_back(makeResult(id, i, 1, 0));
  batch[10].samplesUs.clear();
  store.addResults(batch);
  EXPECT_EQ(store.results(id).size(), 50u);
  EXPECT_EQ(store.findRun(id)->source, "nccl-tests");
  EXPECT_EQ(store.findRun(id)->status, RunStatus::kOk);

  // A bad record in the batch rolls back the whole batch.
  batch[49].runId = id + 1000;
  EXPECT_THROW(store.addResults(batch), DatabaseError);
  EXPECT_EQ(store.results(id).size(), 50u);
}

TEST(Store, ListRunsFilters) {
  TempDir dir;
  Store store = Store::open(dir.file("cb.db"));
  int64_t a = store.beginRun(makeRun("base", "2025-02-27T23:59:59Z"));
  int64_t b = store.beginRun(makeRun("base", "2025-03-01T08:00:00Z"));
  RunRecord other = makeRun("exp", "2025-03-01T23:30:00Z");
  other.fingerprint = "zzz";
  int64_t c = store.beginRun(other);
  int64_t d = store.beginRun(makeRun("base", "2025-03-05T00:00:00Z"));

  auto ids = [&](const RunFilter& f) {
    std::vector<int64_t> out;
    for (const RunRecord& r : store.listRuns(f)) out.push_back(r.id);
    return out;
  };
  EXPECT_EQ(ids({}), (std::vector<int64_t>{d, c, b, a}));  // newest first
  EXPECT_EQ(ids(filter([](RunFilter& f) { f.label = "base"; })), (std::vector<int64_t>{d, b, a}));
  EXPECT_EQ(ids(filter([](RunFilter& f) { f.label = "none"; })), std::vector<int64_t>{});
  EXPECT_EQ(ids(filter([](RunFilter& f) { f.since = "2025-03-01"; })),
            (std::vector<int64_t>{d, c, b}));
  // `until` a date includes that whole day; a space may separate date and time.
  EXPECT_EQ(ids(filter([](RunFilter& f) { f.until = "2025-03-01"; })),
            (std::vector<int64_t>{c, b, a}));
  EXPECT_EQ(ids(filter([](RunFilter& f) {
              f.since = "2025-03-01 09:00";
              f.until = "2025-03-04";
            })),
            (std::vector<int64_t>{c}));
  EXPECT_EQ(ids(filter([](RunFilter& f) { f.fingerprint = "zzz"; })), (std::vector<int64_t>{c}));
  EXPECT_EQ(ids(filter([](RunFilter& f) {
              f.label = "base";
              f.limit = 2;
            })),
            (std::vector<int64_t>{d, b}));
  EXPECT_THROW(store.listRuns(filter([](RunFilter& f) { f.since = "yesterday"; })), UsageError);
  EXPECT_THROW(store.listRuns(filter([](RunFilter& f) { f.until = "2025-3-1"; })), UsageError);
  // The right shape but no such day or time.
  for (const char* bad : {"2026-13-45", "2026-00-10", "2026-02-29", "2025-04-31", "2025-03-01T24",
                          "2025-03-01T12:60", "2025-03-01T12:00:61"}) {
    EXPECT_THROW(store.listRuns(filter([&](RunFilter& f) { f.since = bad; })), UsageError) << bad;
  }
  EXPECT_EQ(ids(filter([](RunFilter& f) { f.until = "2024-02-29T23:59:60Z"; })),
            std::vector<int64_t>{});  // a leap day and a leap second exist
}

TEST(Store, MigratesEmptyFileAndReopens) {
  TempDir dir;
  std::string path = dir.file("empty.db");
  std::ofstream(path).close();  // an existing empty file is a new database
  {
    Store store = Store::open(path, false);
    EXPECT_EQ(store.schemaVersion(), Store::latestSchemaVersion());
    EXPECT_GE(Store::latestSchemaVersion(), 1);
    store.beginRun(makeRun("kept", "2025-01-01T00:00:00Z"));
  }
  EXPECT_EQ(queryText(path, "PRAGMA application_id"), std::to_string(Store::kApplicationId));
  EXPECT_EQ(queryText(path, "PRAGMA user_version"), std::to_string(Store::latestSchemaVersion()));
  EXPECT_EQ(queryText(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(queryText(path,
                      "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE "
                      "type = 'table' ORDER BY name)"),
            "rank_samples,results,run_details,runs,samples");
  EXPECT_EQ(queryText(path,
                      "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                      "('results_run_id', 'results_point')"),
            "2");
  {
    Store again = Store::open(path);
    EXPECT_EQ(again.schemaVersion(), Store::latestSchemaVersion());
    ASSERT_EQ(again.listRuns().size(), 1u);
    EXPECT_EQ(again.listRuns()[0].label, "kept");
  }
  // Deleting a run deletes its results and samples (foreign keys with ON DELETE CASCADE).
  {
    Store store = Store::open(path);
    int64_t id = store.beginRun(makeRun("gone", "2025-01-02T00:00:00Z"));
    store.addResult(makeResult(id, 1));
  }
  execRaw(path, "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE label = 'gone'");
  EXPECT_EQ(queryText(path,
                      "SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM "
                      "samples) + (SELECT count(*) FROM rank_samples)"),
            "0");

  // A database written by a newer collbench is refused, not downgraded.
  execRaw(path, fmt::format("PRAGMA user_version = {}", Store::latestSchemaVersion() + 1));
  EXPECT_TRUE(contains(openError(path), fmt::format("database '{}' has schema version {}, newer",
                                                    path, Store::latestSchemaVersion() + 1)));
}

TEST(Store, MissingFileWithoutCreate) {
  TempDir dir;
  std::string path = dir.file("missing.db");
  EXPECT_EQ(openError(path, false), fmt::format("no database at '{}'", path));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Store, ConcurrentWritersInSeveralProcessesLoseNothing) {
  TempDir dir;
  std::string path = dir.file("shared.db");
  constexpr int kWriters = 3;
  constexpr int kResultsEach = 200;
  // The children start together on a database that does not exist yet, so they also race to
  // create and migrate it.
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    children.push_back(forkChild([&, w] {
      ::close(gate[1]);
      char byte;
      if (::read(gate[0], &byte, 1) != 0) throw std::runtime_error("gate");
      Store store = Store::open(path);
      int64_t id = store.beginRun(makeRun(fmt::format("writer{}", w), ""));
      for (int i = 0; i < kResultsEach; ++i) store.addResult(makeResult(id, i, 2, 8));
      store.finishRun(id, RunStatus::kOk);
    }));
    ASSERT_GT(children.back(), 0);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // opens the gate: every child's read returns 0
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed, see stderr";
  }
  Store store = Store::open(path);
  std::vector<RunRecord> runs = store.listRuns();
  ASSERT_EQ(runs.size(), static_cast<size_t>(kWriters));
  size_t total = 0;
  for (const RunRecord& r : runs) {
    EXPECT_EQ(r.status, RunStatus::kOk);
    std::vector<ResultRecord> results = store.results(r.id, true);
    EXPECT_EQ(results.size(), static_cast<size_t>(kResultsEach)) << r.label;
    for (const ResultRecord& res : results) {
      EXPECT_EQ(res.samplesUs.size(), 8u);
      EXPECT_EQ(res.rankSamplesUs.size(), 16u);
    }
    total += results.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kWriters * kResultsEach));
  EXPECT_EQ(queryText(path, "PRAGMA integrity_check"), "ok");
}

// Issue 50 defect 6: SQLite's log grew to 4 MiB (1000 pages) before a checkpoint, so on a
// 2 MiB file system the first small run failed. The log stays small while results are added and
// is empty once the run is finished (the store still open: closing checkpoints anyway).
TEST(Store, WriteAheadLogIsBoundedAndEmptyAfterEachRun) {
  TempDir dir;
  std::string path = dir.file("wal.db");
  Store store = Store::open(path);
  const int64_t id = store.beginRun(makeRun("wal", "2025-01-01T00:00:00Z"));
  auto walBytes = [&] {
    std::error_code ec;
    const auto n = std::filesystem::file_size(path + "-wal", ec);
    return ec ? int64_t{0} : static_cast<int64_t>(n);
  };
  int64_t largest = 0;
  for (int i = 0; i < 150; ++i) {
    store.addResult(makeResult(id, i, 4, 256));  // ~10 KiB of samples each
    largest = std::max(largest, walBytes());
  }
  EXPECT_LT(largest, int64_t{1} << 20) << "the log grew to " << largest << " bytes";
  store.finishRun(id, RunStatus::kOk);
  EXPECT_EQ(walBytes(), 0);
  EXPECT_EQ(queryText(path, "SELECT count(*) FROM results"), "150");
}

// Issue 50 defects 3 and 4: the reading commands open the database read-only (the fallbacks for
// a full disk and a read-only file system are exercised by tests/cli/db_full_disk.sh, which
// mounts one); a read still migrates an older schema and reaps dead runs where it may write.
TEST(Store, OpensForReadingReadOnlyAndStillReapsAndMigrates) {
  TempDir dir;
  std::string path = dir.file("read.db");
  EXPECT_TRUE(contains(
      [&] {
        try {
          Store::openForReading(path);
        } catch (const DatabaseError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      "no database at"));
  EXPECT_FALSE(std::filesystem::exists(path));
  std::ofstream(path).close();  // an empty file: version 0, migrated by the writing connection
  int64_t dead = 0;
  {
    Store reader = Store::openForReading(path);
    EXPECT_EQ(reader.schemaVersion(), Store::latestSchemaVersion());
    Store writer = Store::open(path);
    RunRecord gone = makeRun("gone", "2025-01-01T00:00:00Z");
    gone.host = hostName();
    gone.pid = 999'999'999;  // no such process
    dead = writer.beginRun(gone);
    // The reader's connection is read-only: a write through it fails, nothing is changed.
    EXPECT_THROW(reader.finishRun(dead, RunStatus::kOk), DatabaseError);
  }
  Store reader = Store::openForReading(path);
  EXPECT_EQ(reader.findRun(dead)->status, RunStatus::kInterrupted);
}

TEST(Store, KilledWriterKeepsFinishedResultsAndIsReaped) {
  TempDir dir;
  std::string path = dir.file("killed.db");
  int64_t liveRun = 0, otherHostRun = 0;
  {
    Store store = Store::open(path);
    // Still running in this (live) process, and on another host: neither may be reaped.
    RunRecord live = makeRun("live", "2025-01-01T00:00:00Z");
    live.pid = ::getpid();
    live.host = hostName();
    liveRun = store.beginRun(live);
    RunRecord remote = makeRun("remote", "2025-01-01T00:00:01Z");
    remote.host = hostName() + ".elsewhere";
    remote.pid = 999'999'999;
    otherHostRun = store.beginRun(remote);
  }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = forkChild([&] {
    ::close(ready[0]);
    Store store = Store::open(path);
    RunRecord run = makeRun("doomed", "");
    run.pid = 0;  // filled with this process's pid and host
    run.host.clear();
    int64_t id = store.beginRun(run);
    store.addResult(makeResult(id, 0));
    store.addResult(makeResult(id, 1));
    if (::write(ready[1], "x", 1) != 1) throw std::runtime_error("pipe");
    // Keep writing until killed, so the kill lands in the middle of a transaction or close.
    for (int i = 2;; ++i) store.addResult(makeResult(id, i, 4, 256));
  });
  ASSERT_GT(child, 0);
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::usleep(20'000);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  // Opening reaps: the killed writer's run reads interrupted at once, whichever command opens.
  Store store = Store::open(path);
  EXPECT_EQ(queryText(path, "PRAGMA integrity_check"), "ok");
  std::vector<RunRecord> doomed = store.listRuns(filter([](RunFilter& f) { f.label = "doomed"; }));
  ASSERT_EQ(doomed.size(), 1u);
  EXPECT_EQ(doomed[0].status, RunStatus::kInterrupted);
  EXPECT_FALSE(doomed[0].finishedAt.empty());
  EXPECT_EQ(doomed[0].pid, child);
  EXPECT_EQ(doomed[0].host, hostName());
  std::vector<ResultRecord> kept = store.results(doomed[0].id, true);
  ASSERT_GE(kept.size(), 2u);
  EXPECT_EQ(kept[0].timeUs, makeResult(0, 0).timeUs);
  EXPECT_EQ(kept[1].timeUs, makeResult(0, 1).timeUs);
  // Every result that made it has all its samples: result and samples commit together.
  for (const ResultRecord& r : kept) {
    EXPECT_EQ(r.samplesUs.size(), static_cast<size_t>(r.iterations.value()));
    EXPECT_EQ(r.rankSamplesUs.size(), static_cast<size_t>(*r.iterations * r.nranks.value()));
  }

  store.reapDeadRuns();  // again: nothing more to reap
  EXPECT_EQ(store.findRun(liveRun)->status, RunStatus::kRunning);
  EXPECT_EQ(store.findRun(otherHostRun)->status, RunStatus::kRunning);
  EXPECT_EQ(store.results(doomed[0].id).size(), kept.size());
}

TEST(Store, RefusesForeignSqliteFile) {
  TempDir dir;
  std::string path = dir.file("foreign.db");
  execRaw(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
  EXPECT_TRUE(contains(openError(path), fmt::format("'{}' is not a collbench database", path)));
  EXPECT_TRUE(contains(openError(path), "customers"));
  // Left untouched.
  EXPECT_EQ(queryText(path, "PRAGMA user_version"), "0");
  EXPECT_EQ(queryText(path, "SELECT count(*) FROM sqlite_master"), "1");

  // Another application's id without tables is not ours either.
  std::string tagged = dir.file("tagged.db");
  execRaw(tagged, "PRAGMA application_id = 1234");
  EXPECT_TRUE(contains(openError(tagged), fmt::format("'{}' is not a collbench database", tagged)));
}

TEST(Store, RefusesFileThatIsNotSqlite) {
  TempDir dir;
  std::string path = dir.file("notes.db");
  {
    std::ofstream out(path);
    for (int i = 0; i < 100; ++i) out << "this is a text file, not a database\n";
  }
  EXPECT_EQ(openError(path),
            fmt::format("'{}' is not a collbench database (file is not SQLite)", path));
}

TEST(Store, DetectsCorruptFile) {
  TempDir dir;
  std::string path = dir.file("corrupt.db");
  {
    Store store = Store::open(path);
    int64_t id = store.beginRun(makeRun("big", "2025-01-01T00:00:00Z"));
    std::vector<ResultRecord> batch;
    for (int i = 0; i < 400; ++i) batch.push_back(makeResult(id, i, 2, 4));
    store.addResults(batch);
  }  // the last close checkpoints the WAL into the main file
  int64_t pageSize = std::stoll(queryText(path, "PRAGMA page_size"));
  int64_t root = std::stoll(queryText(path,
                                      "SELECT rootpage FROM sqlite_master WHERE name = "
                                      "'results'"));
  int64_t size = static_cast<int64_t>(std::filesystem::file_size(path));
  ASSERT_GT(size, 8 * pageSize);
  {
    // Garbage over the results table's root page and over the middle of the file.
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    std::string garbage(static_cast<size_t>(pageSize), '\xa5');
    file.seekp((root - 1) * pageSize);
    file.write(garbage.data(), pageSize);
    file.seekp(size / 2 - 256);
    file.write(garbage.data(), 512);
  }
  std::string error = openError(path);
  EXPECT_TRUE(contains(error, fmt::format("database '{}' is corrupt: ", path)));
  EXPECT_TRUE(contains(error, "Page "));                    // what quick_check found
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;  // one line
}

TEST(Store, RefusesUnwritableLocations) {
  TempDir dir;
  std::string noDir = dir.file("no/such/dir/cb.db");
  EXPECT_EQ(openError(noDir),
            fmt::format("cannot create database '{}': directory '{}' does not exist", noDir,
                        dir.file("no/such/dir")));
  // Under a regular file (a chmod'ed directory would not stop root).
  std::string file = dir.file("plain");
  std::ofstream(file) << "x";
  std::string underFile = file + "/cb.db";
  EXPECT_EQ(openError(underFile),
            fmt::format("cannot create database '{}': '{}' is not a directory", underFile, file));
  EXPECT_TRUE(contains(openError(dir.file("")), "is a directory"));
  if (::geteuid() != 0) {
    std::string ro = dir.file("ro");
    std::filesystem::create_directory(ro);
    std::filesystem::permissions(
        ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    EXPECT_TRUE(contains(openError(ro + "/cb.db"), "is not writable"));
  }
}

}  // namespace
}  // namespace cb
