// Unknown values are NULL (issue 13): the schema-3 migration turns the sentinels of schema 2
// (0, -1, '') into NULL exactly where they meant "unknown" and keeps every real value, in place
// and without losing samples; imported logs store NULL where the log says nothing and the log's
// values elsewhere; a record with unset fields binds NULL and reads back unset.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/TempDir.h"
#include "results/Store.h"
#include "results/import/Import.h"

namespace cb {
namespace {

// A plain SQLite connection, to write the old schema and to read what the store wrote.
class Raw {
 public:
  explicit Raw(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open failed");
  }
  ~Raw() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string what = error ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error(what + " in: " + sql);
    }
  }
  // The rows of a query, each row's columns joined by '|' (quote() them to tell NULL apart).
  std::string query(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string(sqlite3_errmsg(db_)) + " in: " + sql);
    }
    std::string out;
    while (sqlite3_step(s) == SQLITE_ROW) {
      if (!out.empty()) out += "\n";
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const unsigned char* text = sqlite3_column_text(s, c);
        out += (c ? "|" : "") + std::string(text ? reinterpret_cast<const char*>(text) : "");
      }
    }
    sqlite3_finalize(s);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Every column of a result after size_bytes that may be unknown, quoted: NULL shows as NULL.
constexpr const char* kQuoted =
    "quote(dtype), quote(op), quote(root), quote(count), quote(nranks), quote(iterations), "
    "quote(time_us), quote(median_us), quote(mean_us), quote(min_us), quote(max_us), "
    "quote(p99_us), quote(cv), quote(algbw), quote(busbw), quote(wrong)";

// Schema version 2 as released: migrations 1 and 2 of results/Store.cpp (released steps never
// change), every result column NOT NULL, unknowns written as 0, -1 or ''.
std::string schemaV2() {
  return fmt::format("{}{}PRAGMA user_version = 2; PRAGMA application_id = {};",
                     Store::migrationSql(1), Store::migrationSql(2), Store::kApplicationId);
}

// One schema-2 row: id, run, collective, size, status, then the 16 columns of kQuoted as SQL
// literals.
std::string oldRow(int id, int run, const char* collective, int size, const char* status,
                   const char* rest) {
  return fmt::format(
      "INSERT INTO results (id, run_id, collective, variant, size_bytes, placement, status, "
      "statistic, dtype, op, root, count, nranks, iterations, time_us, median_us, mean_us, "
      "min_us, max_us, p99_us, cv, algbw, busbw, wrong) VALUES ({}, {}, '{}', 'v', {}, 'out', "
      "'{}', 'mean', {});",
      id, run, collective, size, status, rest);
}

TEST(NullMigration, SentinelsOfSchema2BecomeNullAndRealValuesStay) {
  TempDir tmp;
  {
    Raw old(tmp.file("cb.db"));
    old.exec(schemaV2());
    old.exec(
        "INSERT INTO runs (id, started_at, source, status) VALUES (1, '2025-01-01T00:00:00Z', "
        "'collbench', 'ok'), (2, '2025-01-02T00:00:00Z', 'nccl-tests', 'ok'), (3, "
        "'2025-01-03T00:00:00Z', 'osu', 'ok'), (4, '2025-01-04T00:00:00Z', 'imb', 'ok');");
    //                      dtype    op    root count nr it time med mean min max p99 cv alg bus w
    old.exec(oldRow(1, 1, "allreduce", 1024, "ok",  // measured, not verified, not rooted
                    "'float', 'sum', -1, 256, 2, 20, 5, 5, 5.1, 4, 6, 6, 0.1, 1, 2, -1"));
    old.exec(oldRow(2, 1, "broadcast", 1024, "ok",  // root 0 and wrong 0 are real values
                    "'float', 'none', 0, 256, 2, 20, 5, 5, 5.1, 4, 6, 6, 0, 1, 1, 0"));
    old.exec(oldRow(3, 1, "allreduce", 1024, "unsupported",  // nothing was timed
                    "'float', 'sum', -1, 256, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1"));
    old.exec(oldRow(4, 1, "allreduce", 0, "ok",  // one iteration: no cv; 0 GB/s at 0 B is real
                    "'float', 'sum', -1, 0, 2, 1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0"));
    old.exec(oldRow(5, 2, "allreduce", 4096, "ok",  // nccl-tests: no iters line, no median
                    "'float', 'sum', -1, 1024, 8, 0, 10, 0, 10, 0, 0, 0, 0, 3.5, 6.1, -1"));
    old.exec(oldRow(6, 2, "allreduce", 8192, "failed",  // checked and wrong
                    "'float', 'sum', -1, 2048, 8, 20, 11, 0, 11, 0, 0, 0, 0, 3.4, 6, 7"));
    old.exec(oldRow(7, 3, "allreduce", 4, "ok",  // OSU without datatype and world size
                    "'', 'sum', -1, 0, 0, 0, 5.47, 0, 5.47, 0, 0, 0, 0, 0, 0, -1"));
    old.exec(oldRow(8, 3, "bw", 8, "ok",  // OSU bandwidth of 0 MB/s: no time
                    "'uint8', 'none', -1, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1"));
    old.exec(oldRow(9, 4, "pingpong", 0, "ok",  // IMB prints 0 repetitions; no min/max
                    "'uint8', 'none', -1, 0, 2, 0, 0.5, 0, 0.5, 0, 0, 0, 0, 0, 0, -1"));
    old.exec(oldRow(10, 4, "barrier", 0, "ok",  // no bandwidth for a barrier
                    "'uint8', 'none', -1, 0, 4, 1000, 3, 0, 3, 2, 4, 0, 0, 0, 0, -1"));
    old.exec(oldRow(11, 4, "allreduce", 1024, "skipped",  // IMB out-of-mem row, 0 reps kept
                    "'float', 'sum', -1, 256, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1"));
    old.exec(
        "INSERT INTO samples VALUES (1, x'0000000000001440'), (2, x'0000000000001440');"
        "INSERT INTO rank_samples VALUES (1, 0, x'0000000000001440'), "
        "(1, 1, x'0000000000001440');");
  }

  Store store = Store::open(tmp.file("cb.db"), false);
  EXPECT_EQ(store.schemaVersion(), Store::latestSchemaVersion());
  Raw db(tmp.file("cb.db"));
  EXPECT_EQ(db.query(fmt::format("SELECT id, {} FROM results ORDER BY id", kQuoted)),
            "1|'float'|'sum'|NULL|256|2|20|5.0|5.0|5.1|4.0|6.0|6.0|0.1|1.0|2.0|NULL\n"
            "2|'float'|'none'|0|256|2|20|5.0|5.0|5.1|4.0|6.0|6.0|0.0|1.0|1.0|0\n"
            "3|'float'|'sum'|NULL|256|2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n"
            "4|'float'|'sum'|NULL|0|2|1|2.0|2.0|2.0|2.0|2.0|2.0|NULL|0.0|0.0|0\n"
            "5|'float'|'sum'|NULL|1024|8|NULL|10.0|NULL|10.0|NULL|NULL|NULL|NULL|3.5|6.1|NULL\n"
            "6|'float'|'sum'|NULL|2048|8|20|11.0|NULL|11.0|NULL|NULL|NULL|NULL|3.4|6.0|7\n"
            "7|NULL|'sum'|NULL|NULL|NULL|NULL|5.47|NULL|5.47|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n"
            "8|'uint8'|'none'|NULL|8|2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n"
            "9|'uint8'|'none'|NULL|0|2|0|0.5|NULL|0.5|NULL|NULL|NULL|NULL|0.0|0.0|NULL\n"
            "10|'uint8'|'none'|NULL|0|4|1000|3.0|NULL|3.0|2.0|4.0|NULL|NULL|NULL|NULL|NULL\n"
            "11|'float'|'sum'|NULL|256|4|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL");
  // The rebuild lost no sample (the DROP did not cascade) and kept the indexes.
  EXPECT_EQ(db.query("SELECT count(*) FROM samples"), "2");
  EXPECT_EQ(db.query("SELECT count(*) FROM rank_samples"), "2");
  EXPECT_EQ(db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = "
                     "'results' ORDER BY name"),
            "results_point\nresults_run_id");
  EXPECT_EQ(db.query("SELECT count(*) FROM sqlite_master WHERE name = 'results_new'"), "0");
  EXPECT_TRUE(store.check().problems.empty());

  // The store reads NULL as unset, real values as they were.
  std::vector<ResultRecord> measured = store.results(1, true);
  ASSERT_EQ(measured.size(), 4u);
  EXPECT_FALSE(measured[0].root.has_value());
  EXPECT_FALSE(measured[0].wrong.has_value());
  EXPECT_EQ(measured[0].samplesUs, std::vector<double>{5.0});
  EXPECT_EQ(measured[0].rankSamplesUs, (std::vector<double>{5.0, 5.0}));
  EXPECT_EQ(measured[1].root, 0);
  EXPECT_EQ(measured[1].wrong, 0);
  EXPECT_FALSE(measured[2].timeKnown);
  EXPECT_FALSE(measured[2].busbw.has_value());
  EXPECT_FALSE(measured[3].cv.has_value());
  EXPECT_EQ(measured[3].busbw, 0.0);
  std::vector<ResultRecord> osu = store.results(3);
  ASSERT_EQ(osu.size(), 2u);
  EXPECT_EQ(osu[0].dtype, "");
  EXPECT_FALSE(osu[0].count.has_value());
  EXPECT_FALSE(osu[0].nranks.has_value());
  EXPECT_FALSE(osu[0].medianKnown);
  EXPECT_DOUBLE_EQ(osu[0].timeUs, 5.47);

  // Foreign keys are on again after the migration: deleting a run takes its samples.
  PruneOptions prune;
  prune.keepLast = 3;
  store.prune(prune);
  EXPECT_EQ(db.query("SELECT count(*) FROM samples"), "0");
  EXPECT_EQ(db.query("SELECT count(*) FROM results"), "7");
}

TEST(NullMigration, AFreshStoreBindsNullAndReadsItBack) {
  TempDir tmp;
  Store store = Store::open(tmp.file("cb.db"));
  RunRecord run;
  run.status = RunStatus::kOk;
  int64_t id = store.beginRun(run);
  ResultRecord r;  // a point nothing was known of but its identity
  r.runId = id;
  r.collective = "allreduce";
  r.variant = "mpi";
  r.sizeBytes = 64;
  r.placement = "out";
  r.status = ResultStatus::kSkipped;
  r.timeKnown = r.medianKnown = false;
  store.addResult(r);
  Raw db(tmp.file("cb.db"));
  EXPECT_EQ(db.query(fmt::format("SELECT {} FROM results", kQuoted)),
            "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL");
  ResultRecord back = store.results(id).at(0);
  EXPECT_EQ(back.dtype, "");
  EXPECT_EQ(back.op, "");
  EXPECT_FALSE(back.root || back.count || back.nranks || back.iterations || back.meanUs ||
               back.minUs || back.maxUs || back.p99Us || back.cv || back.algbw || back.busbw ||
               back.wrong);
  EXPECT_FALSE(back.timeKnown);
  EXPECT_FALSE(back.medianKnown);
}

std::string readSample(const std::string& name) {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/tests/data/samples/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Imports one sample into a fresh store; returns the quoted columns of the result at `size`
// and `placement` of the run's `index`-th run.
class ImportedDb {
 public:
  explicit ImportedDb(const std::string& name) : store_(Store::open(tmp_.file("cb.db"))) {
    ImportOptions o;
    o.path = name;
    for (ImportedRun& run : parseImport(readSample(name), ImportFormat::kAuto, o)) {
      int64_t id = store_.beginRun(run.run);
      for (ResultRecord& r : run.results) r.runId = id;
      store_.addResults(run.results);
    }
  }
  std::string row(uint64_t size, const char* placement, int run = 1) {
    Raw db(tmp_.file("cb.db"));
    return db.query(fmt::format(
        "SELECT {} FROM results WHERE run_id = {} AND size_bytes = {} AND placement = '{}'",
        kQuoted, run, size, placement));
  }

 private:
  TempDir tmp_;
  Store store_;
};

TEST(NullImport, OsuLatencyWithoutWorldSizeOrDatatype) {
  // "# Size  Avg Latency(us)" only: the time is the log's; the world size, datatype (so count
  // and bandwidths), iterations and every other statistic are unknown.
  ImportedDb db("osu_1_allreduce-v5.6.2-64proc-openmpi4-ucx.txt");
  // algbw needs only the size (allreduce: S = size), busbw the world size.
  EXPECT_EQ(db.row(1048576, "out"),
            fmt::format("NULL|'sum'|NULL|NULL|NULL|NULL|3730.69|NULL|3730.69|NULL|NULL|NULL|NULL|"
                        "{:.20e}|NULL|NULL",
                        1048576 / 3730.69 / 1e3));
}

TEST(NullImport, ImbPingPongHasNoMinMaxMedianOrCheck) {
  ImportedDb db("imb_1_pingpong-2019u5-2node-openmpi4-ucx-fullsweep.txt");
  std::string row = db.row(1024, "out");
  // dtype op root count nranks iters time median mean min max p99 cv algbw busbw wrong
  EXPECT_TRUE(row.starts_with("'uint8'|'none'|NULL|1024|2|")) << row;
  EXPECT_TRUE(row.find("|NULL|NULL|NULL|NULL|") != std::string::npos) << row;  // min..cv
  EXPECT_TRUE(row.ends_with("|NULL")) << row;  // no defects column: not checked
}

TEST(NullImport, NcclTestsNotCheckedNotRootedNoMedian) {
  // In-place #wrong "N/A" (not checked), root -1 (alltoall has none), out-of-place 0.
  ImportedDb db("nccltests_4_h100-2node-slowpair-alltoall-sendrecv.txt");
  EXPECT_EQ(
      db.row(33554432, "out"),
      "'double'|'none'|NULL|262144|16|20|2006.1|NULL|2006.1|NULL|NULL|NULL|NULL|16.73|15.68|0");
  EXPECT_EQ(db.row(33554432, "in"),
            "'double'|'none'|NULL|262144|16|20|2198.5|NULL|2198.5|NULL|NULL|NULL|NULL|15.26|14.31|"
            "NULL");
}

}  // namespace
}  // namespace cb
