// Reporters (bench/Report.h): the nccl-tests table must reproduce real nccl-tests lines column
// for column (rows of tests/data/samples fed back in as points), stream rows as both
// placements arrive, print N/A where nccl-tests does, and average busbw as nccl-tests does; the
// side-by-side view marks winners; JSON parses back with every field; CSV has a fixed header.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/Report.h"
#include "common/Lines.h"
#include "core/Error.h"

namespace {

using cb::Collective;
using cb::DataType;
using cb::Placement;
using cb::RedOp;
using cb::ResultRecord;
using cb::ResultStatus;

// A measured point as the engine reports it: 16 ranks, 20 iterations; wrong -1: not checked.
ResultRecord point(Collective c, uint64_t bytes, size_t count, Placement pl, double us,
                   double algbw, double busbw, int64_t wrong, const std::string& variant = "nccl",
                   DataType t = DataType::kFloat, RedOp op = RedOp::kSum) {
  ResultRecord p;
  p.collective = std::string(cb::collectiveName(c));
  p.variant = variant;
  p.dtype = std::string(cb::dataTypeName(t));
  p.op = cb::hasReduction(c) ? std::string(cb::redOpName(op)) : "none";
  if (cb::hasRoot(c)) p.root = 0;
  p.sizeBytes = bytes;
  p.count = count;
  p.placement = std::string(cb::placementName(pl));
  p.nranks = 16;
  p.iterations = 20;
  p.timeUs = us;
  p.algbw = algbw;
  p.busbw = busbw;
  if (wrong >= 0) p.wrong = wrong;
  return p;
}

using cb::test::readLines;
using cb::test::splitLines;

// Feeds every data row of an nccl-tests log back through NcclTestsTable and expects the same
// text: the three header lines and every row, character for character.
void reproduceSample(const std::string& file, Collective c, DataType t, RedOp op) {
  auto lines = readLines(std::string(CB_SOURCE_DIR) + "/tests/data/samples/" + file);
  ASSERT_FALSE(lines.empty()) << file;
  std::string text;
  cb::NcclTestsTable table(c, cb::TextOut(&text));
  std::vector<std::string> expected;
  bool inTable = false;
  for (const auto& line : lines) {
    if (line.find("out-of-place") != std::string::npos) inTable = true;
    if (!inTable) continue;
    if (line.rfind("# Out of bounds", 0) == 0) break;
    expected.push_back(line);
    if (line[0] == '#') continue;
    std::istringstream f(line);
    uint64_t bytes;
    size_t count;
    std::string type, redop, root, wrongOut, wrongIn;
    double tOut, aOut, bOut, tIn, aIn, bIn;
    f >> bytes >> count >> type >> redop >> root >> tOut >> aOut >> bOut >> wrongOut >> tIn >>
        aIn >> bIn >> wrongIn;
    ASSERT_TRUE(f) << line;
    auto wrong = [](const std::string& w) { return w == "N/A" ? int64_t{-1} : std::stoll(w); };
    table.add(
        point(c, bytes, count, Placement::kOut, tOut, aOut, bOut, wrong(wrongOut), "nccl", t, op));
    table.add(point(c, bytes, count, Placement::kIn, tIn, aIn, bIn, wrong(wrongIn), "nccl", t, op));
  }
  ASSERT_GT(expected.size(), 3u);
  auto got = splitLines(text);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "line " << i;
}

TEST(NcclTestsTable, ReproducesAllReduceSampleExactly) {
  reproduceSample("nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt", Collective::kAllReduce,
                  DataType::kFloat, RedOp::kSum);
}

TEST(NcclTestsTable, ReproducesAlltoallSampleWithUncheckedInPlace) {
  // alltoall: redop "none", in-place #wrong "N/A"; the first of the two tests in the file.
  reproduceSample("nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt", Collective::kAllToAll,
                  DataType::kDouble, RedOp::kSum);
}

TEST(NcclTestsTable, KnownRowColumns) {
  std::string text;
  cb::NcclTestsTable table(Collective::kBroadcast, cb::TextOut(&text));
  table.add(
      point(Collective::kBroadcast, 1048576, 262144, Placement::kOut, 12.3456, 84.93, 84.93, 0));
  table.add(point(Collective::kBroadcast, 1048576, 262144, Placement::kIn, 99999.4, 0.01, 0.01, 2));
  auto lines = splitLines(text);
  ASSERT_EQ(lines.size(), 4u);
  // broadcast: redop none, root 0; time precision follows the magnitude.
  EXPECT_EQ(lines[3],
            "     1048576        262144     float    none       0    12.35   84.93   84.93      0"
            "    99999    0.01    0.01      2");
}

TEST(NcclTestsTable, TimePrecisionSwitches) {
  EXPECT_EQ(cb::ncclTestsTime(0.5), "   0.50");
  EXPECT_EQ(cb::ncclTestsTime(99.99), "  99.99");
  EXPECT_EQ(cb::ncclTestsTime(100.0), "  100.0");
  EXPECT_EQ(cb::ncclTestsTime(9999.9), " 9999.9");
  EXPECT_EQ(cb::ncclTestsTime(10000.0), "  10000");
  EXPECT_EQ(cb::ncclTestsTime(213767.2), " 213767");
}

TEST(NcclTestsTable, RowsStreamWhenBothPlacementsArrive) {
  std::string text;
  cb::NcclTestsTable table(Collective::kAllReduce, cb::TextOut(&text));
  table.add(point(Collective::kAllReduce, 8, 2, Placement::kOut, 10, 0, 0, 0));
  EXPECT_EQ(table.rowsPrinted(), 0);
  EXPECT_EQ(splitLines(text).size(), 3u);  // just the header
  table.add(point(Collective::kAllReduce, 16, 4, Placement::kOut, 10, 0, 0, 0));
  table.add(point(Collective::kAllReduce, 16, 4, Placement::kIn, 10, 0, 0, 0));
  EXPECT_EQ(table.rowsPrinted(), 0);  // 16 is complete but waits for 8
  table.add(point(Collective::kAllReduce, 8, 2, Placement::kIn, 10, 0, 0, 0));
  EXPECT_EQ(table.rowsPrinted(), 2);
  auto lines = splitLines(text);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[3].substr(0, 12), "           8");
  EXPECT_EQ(lines[4].substr(0, 12), "          16");
}

TEST(NcclTestsTable, StreamsToAFile) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  cb::NcclTestsTable table(Collective::kAllReduce, cb::TextOut(f), {true, false});
  table.add(point(Collective::kAllReduce, 8, 2, Placement::kOut, 10, 0, 0, 0));
  // Written (and flushed) before finish(): the row is in the file already.
  long size = std::ftell(f);
  EXPECT_GT(size, 0);
  std::rewind(f);
  std::string content(static_cast<size_t>(size), '\0');
  ASSERT_EQ(std::fread(content.data(), 1, content.size(), f), content.size());
  EXPECT_EQ(splitLines(content).size(), 4u);
  std::fclose(f);
}

TEST(NcclTestsTable, MissingPlacementsPrintNotAvailable) {
  std::string text;
  cb::NcclTestsTable table(Collective::kAllReduce, cb::TextOut(&text), {true, false});
  table.add(point(Collective::kAllReduce, 64, 16, Placement::kOut, 20, 1, 2, -1));
  auto unsup = point(Collective::kAllReduce, 128, 32, Placement::kOut, 0, 0, 0, -1);
  unsup.status = ResultStatus::kUnsupported;
  table.add(unsup);
  table.finish();
  auto lines = splitLines(text);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[3],
            "          64            16     float     sum      -1    20.00    1.00    2.00    N/A"
            "      N/A     N/A     N/A    N/A");
  EXPECT_EQ(lines[4],
            "         128            32     float     sum      -1      N/A     N/A     N/A    N/A"
            "      N/A     N/A     N/A    N/A");
  EXPECT_EQ(lines[5], "# Out of bounds values : 0 OK");
  // Only the one measured placement counts in the average.
  EXPECT_EQ(lines[6], "# Avg bus bandwidth    : 2 ");
  EXPECT_EQ(lines[7], "#");
}

TEST(NcclTestsTable, FooterAveragesEveryMeasuredPlacementAndCountsFailures) {
  std::string text;
  cb::NcclTestsTable table(Collective::kAllGather, cb::TextOut(&text));
  table.add(point(Collective::kAllGather, 8, 1, Placement::kOut, 5, 1, 1.25, 0));
  table.add(point(Collective::kAllGather, 8, 1, Placement::kIn, 5, 1, 2.5, 0));
  table.add(point(Collective::kAllGather, 16, 2, Placement::kOut, 5, 1, 3.75, 7));
  table.add(point(Collective::kAllGather, 16, 2, Placement::kIn, 5, 1, 5, 0));
  table.finish();
  EXPECT_DOUBLE_EQ(table.averageBusBw(), 3.125);
  EXPECT_EQ(table.outOfBounds(), 1);
  auto lines = splitLines(text);
  EXPECT_EQ(lines[lines.size() - 3], "# Out of bounds values : 1 FAILED");
  EXPECT_EQ(lines[lines.size() - 2], "# Avg bus bandwidth    : 3.125 ");
  // allgather takes no op: redop "none"; #wrong printed like printf's %5g.
  EXPECT_EQ(lines[4],
            "          16             2     float    none      -1     5.00    1.00    3.75      7"
            "     5.00    1.00    5.00      0");
}

TEST(NcclTestsTable, RepeatedCyclesMakeNewRows) {
  std::string text;
  cb::NcclTestsTable table(Collective::kAllReduce, cb::TextOut(&text), {true, false});
  for (int cycle = 0; cycle < 2; ++cycle) {
    table.add(point(Collective::kAllReduce, 8, 2, Placement::kOut, 10 + cycle, 0, 0, 0));
  }
  EXPECT_EQ(table.rowsPrinted(), 2);
}

// The lines a side-by-side table prints.
std::vector<std::string> linesOf(const cb::SideBySideTable& side) {
  std::string text;
  side.write(cb::TextOut(&text));
  return splitLines(text);
}

TEST(SideBySideTable, MarksFastestAndCountsWins) {
  cb::SideBySideTable side(Placement::kOut, cb::SideMetric::kBusBw);
  auto c = Collective::kAllReduce;
  // size 8: b fastest; size 16: a fastest, c wrong (faster but never a winner);
  // size 32: c unsupported, a and b tie (no winner: no difference beyond the spread).
  side.add(point(c, 8, 2, Placement::kOut, 10, 0, 1.0, 0, "a"));
  side.add(point(c, 8, 2, Placement::kOut, 5, 0, 2.0, 0, "b"));
  side.add(point(c, 8, 2, Placement::kOut, 20, 0, 0.5, 0, "c"));
  side.add(point(c, 8, 2, Placement::kIn, 1, 0, 9.0, 0, "c"));  // other placement: ignored
  side.add(point(c, 16, 4, Placement::kOut, 4, 0, 4.0, 0, "a"));
  side.add(point(c, 16, 4, Placement::kOut, 8, 0, 2.0, 0, "b"));
  side.add(point(c, 16, 4, Placement::kOut, 1, 0, 16.0, 3, "c"));
  side.add(point(c, 32, 8, Placement::kOut, 6, 0, 5.0, 0, "a"));
  side.add(point(c, 32, 8, Placement::kOut, 6, 0, 5.0, 0, "b"));
  auto unsup = point(c, 32, 8, Placement::kOut, 0, 0, 0, -1, "c");
  unsup.status = ResultStatus::kUnsupported;
  side.add(unsup);
  EXPECT_EQ(side.wins(), (std::vector<int>{1, 1, 0}));
  EXPECT_TRUE(side.anyMeasured());
  cb::SideBySideTable none(Placement::kOut, cb::SideMetric::kBusBw);
  none.add(unsup);
  EXPECT_FALSE(none.anyMeasured());

  auto lines = linesOf(side);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_NE(lines[0].find("allreduce float sum, out-of-place, 16 ranks: busbw (GB/s)"),
            std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1], "#       size          a           b           c ");
  EXPECT_EQ(lines[2], "           8       1.00        2.00*     0.5000 ");
  EXPECT_EQ(lines[3], "          16       4.00*       2.00       WRONG ");
  EXPECT_EQ(lines[4], "          32       5.00        5.00       unsup ");
  EXPECT_EQ(lines[5], "#       wins          1           1           0 ");
}

TEST(SideBySideTable, TimeMetricAndMissingCells) {
  cb::SideBySideTable side(Placement::kIn, cb::SideMetric::kTime);
  auto c = Collective::kAllGather;
  side.add(point(c, 8, 2, Placement::kIn, 12.5, 0, 1, 0, "ring/local"));
  side.add(point(c, 16, 4, Placement::kIn, 250, 0, 1, 0, "ring/local"));
  side.add(point(c, 16, 4, Placement::kIn, 300, 0, 1, 0, "mpi"));
  auto lines = linesOf(side);
  ASSERT_GE(lines.size(), 5u);
  EXPECT_NE(lines[0].find("in-place"), std::string::npos);
  EXPECT_NE(lines[0].find("time (us)"), std::string::npos);
  EXPECT_EQ(lines[2], "           8       12.50*          - ");
  EXPECT_EQ(lines[3], "          16       250.0*      300.0 ");
  EXPECT_THROW(cb::parseSideMetric("algbw"), cb::UsageError);
}

std::vector<ResultRecord> samplePoints() {
  auto a =
      point(Collective::kAllReduce, 1024, 256, Placement::kOut, 12.5, 0.08, 0.12, 0, "ring/local");
  a.nranks = 2;
  const std::vector<double> samples{12e-6, 12.5e-6, 13e-6};
  cb::setTiming(a, cb::summarize(samples), 12.5e-6, 20, cb::Statistic::kMedian, samples,
                {11e-6, 12.5e-6, 13e-6, 12e-6, 12e-6, 12.5e-6});
  a.peakGBps = 0.24;
  a.peakLimit = "host memory";
  auto b = point(Collective::kBroadcast, 64, 16, Placement::kIn, 0, 0, 0, -1, "mpi");
  b.status = ResultStatus::kUnsupported;
  b.message = "needs \"power of two\", ranks";
  return {a, b};
}

TEST(ResultsExport, JsonRoundTrip) {
  auto points = samplePoints();
  std::map<std::string, std::string> header{{"label", "nightly"}, {"fingerprint", "abc123"}};
  auto j = nlohmann::json::parse(cb::resultsToJson(header, points));
  EXPECT_EQ(j["format"], "collbench-results");
  EXPECT_EQ(j["version"], 2);
  EXPECT_EQ(j["header"]["label"], "nightly");
  EXPECT_EQ(j["header"]["fingerprint"], "abc123");
  ASSERT_EQ(j["points"].size(), 2u);
  const auto& p = j["points"][0];
  EXPECT_EQ(p["collective"], "allreduce");
  EXPECT_EQ(p["variant"], "ring/local");
  EXPECT_EQ(p["dtype"], "float");
  EXPECT_EQ(p["op"], "sum");
  EXPECT_TRUE(p["root"].is_null());  // allreduce has no root
  EXPECT_EQ(p["bytes"], 1024u);
  EXPECT_EQ(p["count"], 256u);
  EXPECT_EQ(p["placement"], "out");
  EXPECT_EQ(p["nranks"], 2);
  EXPECT_EQ(p["status"], "ok");
  EXPECT_EQ(p["iterations"], 20);
  EXPECT_DOUBLE_EQ(p["time_us"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(p["algbw_gbps"].get<double>(), 0.08);
  EXPECT_DOUBLE_EQ(p["busbw_gbps"].get<double>(), 0.12);
  EXPECT_EQ(p["wrong"], 0);
  EXPECT_DOUBLE_EQ(p["peak_gbps"].get<double>(), 0.24);
  EXPECT_EQ(p["peak_limit"], "host memory");
  EXPECT_DOUBLE_EQ(p["pct_of_peak"].get<double>(), 50);
  EXPECT_TRUE(j["points"][1]["peak_gbps"].is_null());
  EXPECT_EQ(p["summary_us"]["n"], 3u);
  EXPECT_NEAR(p["summary_us"]["median"].get<double>(), 12.5, 1e-9);
  EXPECT_NEAR(p["summary_us"]["min"].get<double>(), 12.0, 1e-9);
  EXPECT_NEAR(p["summary_us"]["max"].get<double>(), 13.0, 1e-9);
  EXPECT_NEAR(p["summary_us"]["p99"].get<double>(), *points[0].p99Us, 1e-9);
  EXPECT_NEAR(p["summary_us"]["stddev"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(p["summary_us"]["cv"].get<double>(), *points[0].cv, 1e-12);
  ASSERT_EQ(p["samples_us"].size(), 3u);
  EXPECT_NEAR(p["samples_us"][2].get<double>(), 13.0, 1e-9);
  ASSERT_EQ(p["rank_samples_us"].size(), 2u);  // one array per rank
  ASSERT_EQ(p["rank_samples_us"][1].size(), 3u);
  EXPECT_NEAR(p["rank_samples_us"][0][0].get<double>(), 11.0, 1e-9);
  EXPECT_NEAR(p["rank_samples_us"][1][2].get<double>(), 12.5, 1e-9);
  const auto& q = j["points"][1];
  EXPECT_EQ(q["status"], "unsupported");
  EXPECT_EQ(q["message"], "needs \"power of two\", ranks");
  EXPECT_EQ(q["root"], 0);
  // Unknown is null, never -1 or 0: not checked, and no time for an unsupported point.
  EXPECT_TRUE(q["wrong"].is_null());
  EXPECT_TRUE(q["time_us"].is_null());
  EXPECT_TRUE(q["algbw_gbps"].is_null());
  EXPECT_TRUE(q["busbw_gbps"].is_null());
  EXPECT_TRUE(q["summary_us"]["median"].is_null());
  EXPECT_EQ(q["placement"], "in");
  EXPECT_TRUE(q["rank_samples_us"].empty());
}

TEST(ResultsExport, CsvHeaderAndRows) {
  auto csv = cb::resultsToCsv(samplePoints());
  auto lines = splitLines(csv);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "collective,variant,dtype,op,root,bytes,count,placement,nranks,status,iterations,"
            "time_us,algbw_gbps,busbw_gbps,wrong,median_us,mean_us,min_us,max_us,p99_us,stddev_us,"
            "cv,peak_gbps,pct_of_peak,message");
  EXPECT_EQ(
      lines[1].rfind("allreduce,ring/local,float,sum,,1024,256,out,2,ok,20,12.5,0.08,0.12,0,", 0),
      0u)
      << lines[1];
  // Unknown values are empty fields: no time for an unsupported point, wrong not checked; a
  // collective without a reduction has op none, as in the database.
  EXPECT_EQ(lines[2].rfind("broadcast,mpi,float,none,0,64,16,in,16,unsupported,20,,,,,,,,,,,,", 0),
            0u)
      << lines[2];
  EXPECT_NE(lines[1].find(",0.24,50,"), std::string::npos) << lines[1];
  // The message holds a comma and quotes: one quoted field with doubled quotes.
  EXPECT_NE(lines[2].find(",\"needs \"\"power of two\"\", ranks\""), std::string::npos) << lines[2];
}

TEST(ResultsExport, FilesAndErrors) {
  std::string dir = testing::TempDir();
  cb::writeJsonFile(dir + "cb_report_test.json", {{"k", "v"}}, samplePoints());
  cb::writeCsvFile(dir + "cb_report_test.csv", samplePoints());
  std::ifstream j(dir + "cb_report_test.json");
  EXPECT_EQ(nlohmann::json::parse(j)["points"].size(), 2u);
  EXPECT_EQ(readLines(dir + "cb_report_test.csv").size(), 3u);
  EXPECT_THROW(cb::writeCsvFile("/nonexistent-dir/x.csv", samplePoints()), cb::EnvironmentError);
}

TEST(ReportSet, FirstVariantStreamsOthersFollowTheirCollective) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  auto readAll = [&] {
    std::fflush(f);
    long size = std::ftell(f);
    std::string s(static_cast<size_t>(size), '\0');
    std::rewind(f);
    EXPECT_EQ(std::fread(s.data(), 1, s.size(), f), s.size());
    return s;
  };
  {
    cb::ReportSet report(f, "collbench", "busbw", 4);
    auto c = Collective::kAllReduce;
    for (uint64_t bytes : {8u, 16u}) {
      for (const char* v : {"ring/local", "mpi"}) {
        for (auto pl : {Placement::kOut, Placement::kIn}) {
          report.add(point(c, bytes, bytes / 4, pl, bytes, 0, bytes / 8.0, 0, v));
        }
      }
    }
    std::string midway = readAll();
    EXPECT_NE(midway.find("# Variant: ring/local"), std::string::npos);
    EXPECT_EQ(midway.find("# Variant: mpi"), std::string::npos);  // held back
    report.endGroup();
    report.add(point(Collective::kAllGather, 8, 1, Placement::kOut, 3, 0, 1, 0, "ring/local"));
    report.add(point(Collective::kAllGather, 8, 1, Placement::kIn, 3, 0, 1, 0, "ring/local"));
    report.endGroup();
    cb::SweepSummary summary;
    summary.points = 10;
    report.finish(summary);
  }
  std::string all = readAll();
  std::fclose(f);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t pos = all.find(what); pos != std::string::npos; pos = all.find(what, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("# Collective test starting: all_reduce_perf"), 2u);
  EXPECT_EQ(count("# Collective test concluded: all_reduce_perf"), 2u);
  EXPECT_EQ(count("# Collective test starting: all_gather_perf"), 1u);
  EXPECT_EQ(count("# Avg bus bandwidth"), 3u);
  EXPECT_EQ(count("# side by side: allreduce"), 2u);  // out and in; allgather had one variant
  EXPECT_EQ(count("# side by side: allgather"), 0u);
  // The held mpi table comes after the streamed ring table, the side-by-side after both.
  EXPECT_LT(all.find("# Variant: ring/local"), all.find("# Variant: mpi"));
  EXPECT_LT(all.find("# Variant: mpi"), all.find("# side by side"));
  EXPECT_LT(all.find("# side by side"), all.find("all_gather_perf"));
  EXPECT_NE(all.find("# 10 points: 0 unsupported, 0 failed, 0 wrong element(s)"),
            std::string::npos);
}

TEST(ReportSet, NcclTestsFormatHasNoSideBySideAndNonePrintsNothing) {
  std::string none;
  {
    std::FILE* f = std::tmpfile();
    cb::ReportSet report(f, "none", "time", 2);
    report.add(point(Collective::kAllReduce, 8, 2, Placement::kOut, 1, 0, 0, 0));
    report.endGroup();
    report.finish({});
    EXPECT_EQ(std::ftell(f), 0);
    std::fclose(f);
  }
  std::FILE* f = std::tmpfile();
  {
    cb::ReportSet report(f, "nccl-tests", "busbw", 2);
    for (const char* v : {"a", "b"}) {
      report.add(point(Collective::kAllToAll, 64, 2, Placement::kOut, 1, 0, 0, 0, v));
    }
    report.endGroup();
    report.finish({});
  }
  long size = std::ftell(f);
  std::string s(static_cast<size_t>(size), '\0');
  std::rewind(f);
  ASSERT_EQ(std::fread(s.data(), 1, s.size(), f), s.size());
  std::fclose(f);
  EXPECT_EQ(s.find("side by side"), std::string::npos);
  // alltoall has no in-place form: rows print with N/A in-place columns.
  EXPECT_NE(s.find("     N/A     N/A    N/A\n"), std::string::npos) << s;
  EXPECT_THROW(cb::ReportSet(stdout, "csv", "busbw", 2), cb::UsageError);
}

// A failed point is a row of N/A in nccl-tests' table: its reason follows as a '#' line (seen on
// an H100: a watchdog abort left a bare N/A row and no reason anywhere).
TEST(ReportSet, AFailedPointSaysWhyUnderItsRow) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    cb::ReportSet report(f, "nccl-tests", "busbw", 1, {true, false});
    auto p = point(Collective::kAllReduce, 1024, 256, Placement::kOut, 0, 0, 0, -1, "nccl");
    p.status = ResultStatus::kFailed;
    p.message = "ncclAllReduce did not complete before the deadline (-T)";
    report.add(p);
    report.endGroup();
    report.finish({});
  }
  std::fflush(f);
  long size = std::ftell(f);
  std::string s(static_cast<size_t>(size), '\0');
  std::rewind(f);
  ASSERT_EQ(std::fread(s.data(), 1, s.size(), f), s.size());
  std::fclose(f);
  auto row = s.find("        1024           256");
  ASSERT_NE(row, std::string::npos) << s;
  auto why = s.find("#   failed (out): ncclAllReduce did not complete before the deadline (-T)\n");
  EXPECT_NE(why, std::string::npos) << s;
  EXPECT_GT(why, row);
}

TEST(ReportSet, UnsupportedVariantsGetOneLineUnlessTheyRunSomewhere) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    cb::ReportSet report(f, "nccl-tests", "busbw", 3, {true, false});
    auto c = Collective::kReduceScatter;
    for (uint64_t bytes : {12u, 24u}) {
      auto never = point(c, bytes, bytes / 12, Placement::kOut, 0, 0, 0, -1, "nccl");
      never.status = ResultStatus::kUnsupported;
      never.message = "no GPU";
      report.add(never);
      // "pow2" can't run the first size but runs the second: its table shows both rows.
      auto late = point(c, bytes, bytes / 12, Placement::kOut, 2, 1, 1, 0, "pow2");
      if (bytes == 12) late.status = ResultStatus::kUnsupported;
      report.add(late);
    }
    report.endGroup();
    report.finish({});
  }
  long size = std::ftell(f);
  std::string s(static_cast<size_t>(size), '\0');
  std::rewind(f);
  ASSERT_EQ(std::fread(s.data(), 1, s.size(), f), s.size());
  std::fclose(f);
  EXPECT_NE(s.find("# Variant: nccl  unsupported here: no GPU\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("# Variant: nccl  (3 ranks)"), std::string::npos);
  EXPECT_NE(s.find("# Variant: pow2  (3 ranks)"), std::string::npos);
  EXPECT_NE(s.find("          12             1     float     sum      -1      N/A     N/A     N/A"
                   "    N/A      N/A"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("          24             2     float     sum      -1     2.00    1.00    1.00"
                   "      0      N/A"),
            std::string::npos)
      << s;
}

}  // namespace
