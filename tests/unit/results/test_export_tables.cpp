// The tables of `collbench export` (adapters/ExportTables) on a store written here: RFC 4180
// quoting, unknown values as empty CSV fields and JSON nulls, one JSON line per row, per-rank
// samples, and the run selection (oldest first, last, a bad or missing id).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/ExportTables.h"
#include "common/Lines.h"
#include "common/TempDir.h"
#include "core/Error.h"
#include "core/Text.h"
#include "results/Store.h"

namespace cb {
namespace {

const auto lines = test::splitLines;

RunRecord runRecord(const std::string& label, const std::string& startedAt) {
  RunRecord r;
  r.startedAt = startedAt;
  r.label = label;
  r.commandLine = "collbench run --np 2";
  r.worldSize = 2;
  r.worldKind = "local";
  r.environmentJson = R"({"cpu":"test"})";
  r.host = "node1";
  r.pid = 1;  // init: never reaped as dead
  return r;
}

// A measured point with samples (2 iterations, 2 ranks) and an imported one with unknowns.
void addResults(Store& store, int64_t runId) {
  ResultRecord r;
  r.runId = runId;
  r.collective = "allreduce";
  r.variant = "ring";
  r.dtype = "float";
  r.op = "sum";
  r.sizeBytes = 1024;
  r.count = 256;
  r.placement = "out";
  r.nranks = 2;
  r.iterations = 2;
  r.timeUs = r.medianUs = 12.5;
  r.algbw = 0.5;
  r.busbw = 0.5;
  r.wrong = 0;
  r.message = "a, \"quoted\" note";
  r.samplesUs = {12.0, 13.0};
  r.rankSamplesUs = {1, 2, 3, 4};
  store.addResult(r);
  ResultRecord unknown;
  unknown.runId = runId;
  unknown.collective = "allreduce";
  unknown.variant = "nccl";
  unknown.sizeBytes = 2048;
  unknown.placement = "out";
  unknown.timeUs = 20;
  unknown.medianKnown = false;
  store.addResult(unknown);
}

class ExportTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    first_ = store_.beginRun(runRecord("a,b", "2025-03-01T10:00:00Z"));
    addResults(store_, first_);
    store_.finishRun(first_, RunStatus::kOk);
    second_ = store_.beginRun(runRecord("plain", "2025-03-02T10:00:00Z"));
    store_.finishRun(second_, RunStatus::kOk);
  }
  std::string table(const std::vector<RunRecord>& runs, ExportTableOptions options) {
    std::string text;
    writeExportTable(store_, runs, options, [&](std::string_view t) { text += t; });
    return text;
  }
  std::vector<RunRecord> one(const std::string& run) {
    ExportSelection selection;
    selection.run = run;
    return selectExportRuns(store_, selection);
  }

  TempDir dir_;
  Store store_ = Store::open(dir_.file("cb.db"));
  int64_t first_ = 0, second_ = 0;
};

TEST(ExportCsv, QuotesCommasQuotesAndLineBreaksOnly) {
  EXPECT_EQ(csvField("plain"), "plain");
  EXPECT_EQ(csvField("a,b"), "\"a,b\"");
  EXPECT_EQ(csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(exportCsvLine({"x", "", "y,z"}), "x,,\"y,z\"\n");
}

TEST(ExportFormats, TableAndToolFormatsAreDistinct) {
  EXPECT_TRUE(isExportTableFormat("jsonl"));
  EXPECT_FALSE(isExportTableFormat("prometheus"));
  EXPECT_TRUE(isExportToolFormat("simai-busbw"));
  EXPECT_FALSE(isExportToolFormat("csv"));
  EXPECT_EQ(exportToolFormats().size(), 6u);
}

TEST_F(ExportTablesTest, SelectionIsOldestFirstAndLastIsTheNewest) {
  std::vector<RunRecord> all = selectExportRuns(store_, ExportSelection{});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, first_);
  EXPECT_EQ(all[1].id, second_);
  ASSERT_EQ(one("last").size(), 1u);
  EXPECT_EQ(one("last")[0].id, second_);
  EXPECT_EQ(one(std::to_string(first_))[0].label, "a,b");
  EXPECT_THROW(one("0"), UsageError);
  EXPECT_THROW(one("1x"), UsageError);
  EXPECT_THROW(one("99"), UsageError);
  ExportSelection labelled;
  labelled.filter.label = "plain";
  ASSERT_EQ(selectExportRuns(store_, labelled).size(), 1u);
}

TEST_F(ExportTablesTest, CsvResultsQuoteAndLeaveUnknownsEmpty) {
  std::vector<std::string> rows = lines(table(one(std::to_string(first_)), {"results", "csv"}));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].rfind("result_id,run_id,collective,variant,dtype,op,root,size_bytes", 0), 0u);
  // The message is quoted with its quotes doubled; no root is an empty field.
  EXPECT_NE(rows[1].find(",float,sum,,1024,256,out,2,ok,\"a, \"\"quoted\"\" note\",2,"),
            std::string::npos)
      << rows[1];
  // The imported point: no dtype, op, count, nranks, iterations, median or bandwidths.
  EXPECT_NE(rows[2].find(",allreduce,nccl,,,,2048,,out,,ok,,,median,20,,,,,,,,,,"),
            std::string::npos)
      << rows[2];
}

TEST_F(ExportTablesTest, JsonResultsHaveNumbersAndNulls) {
  nlohmann::json rows =
      nlohmann::json::parse(table(one(std::to_string(first_)), {"results", "json"}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["time_us"], 12.5);
  EXPECT_EQ(rows[0]["iterations"], 2);
  EXPECT_EQ(rows[0]["wrong"], 0);
  EXPECT_TRUE(rows[0]["root"].is_null());
  EXPECT_TRUE(rows[1]["dtype"].is_null());
  EXPECT_TRUE(rows[1]["median_us"].is_null());
  EXPECT_TRUE(rows[1]["busbw"].is_null());
  EXPECT_EQ(rows[1]["time_us"], 20.0);
}

TEST_F(ExportTablesTest, JsonLinesIsOneObjectPerRun) {
  std::vector<std::string> rows =
      lines(table(selectExportRuns(store_, ExportSelection{}), {"runs", "jsonl"}));
  ASSERT_EQ(rows.size(), 2u);
  nlohmann::json first = nlohmann::json::parse(rows[0]);
  EXPECT_EQ(first["label"], "a,b");
  EXPECT_EQ(first["environment"]["cpu"], "test");  // parsed, not a string
  EXPECT_EQ(nlohmann::json::parse(rows[1])["label"], "plain");
}

TEST_F(ExportTablesTest, SamplesPerRankAreRowsAndArrays) {
  std::vector<std::string> rows =
      lines(table(one(std::to_string(first_)), {"samples", "csv", true}));
  // Header, 2 combined iterations, 2 ranks x 2 iterations; the imported point has none.
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[1].substr(rows[1].size() - 6), ",,0,12");
  EXPECT_EQ(rows[6].substr(rows[6].size() - 6), ",1,1,4");
  nlohmann::json j =
      nlohmann::json::parse(table(one(std::to_string(first_)), {"samples", "json", true}));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["samples_us"], nlohmann::json({12.0, 13.0}));
  EXPECT_EQ(j[0]["rank_samples_us"], nlohmann::json({{1.0, 2.0}, {3.0, 4.0}}));
}

}  // namespace
}  // namespace cb
