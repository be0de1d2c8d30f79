// Importers: every real log in tests/data/samples parses with the expected rows, collective,
// world size and spot values; the old nccl-tests 'error' column, JSON reports (a hand-written
// layout-2 file in tests/unit/data following nccltests_json_SCHEMA.md, plus inline variants) and
// malformed input (truncated rows, garbage lines) fail with FILE:LINE.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/Lines.h"
#include "core/Error.h"
#include "results/import/Import.h"

namespace cb {
namespace {

using test::readText;

std::string sample(const std::string& name) {
  return std::string(CB_SOURCE_DIR) + "/tests/data/samples/" + name;
}

struct Opt {
  std::optional<std::string> collective;
  int worldSize = 0;
  ImportFormat format = ImportFormat::kAuto;
};
Opt coll(const std::string& c) { return Opt{c, 0, ImportFormat::kAuto}; }
Opt world(int n) { return Opt{std::nullopt, n, ImportFormat::kAuto}; }

// The one run a log must give; a test failure (an exception) otherwise.
ImportedRun onlyRun(std::vector<ImportedRun> runs) {
  if (runs.size() != 1) throw std::runtime_error(fmt::format("{} runs, expected 1", runs.size()));
  return std::move(runs[0]);
}

std::vector<ImportedRun> importSample(const std::string& name, Opt opt = {}) {
  ImportOptions o;
  o.path = name;
  o.collective = opt.collective;
  o.worldSize = opt.worldSize;
  o.importedAt = "2030-01-02T03:04:05Z";
  return parseImport(readText(sample(name)), opt.format, o);
}

std::vector<ImportedRun> importText(const std::string& text, Opt opt = {},
                                    const std::string& path = "t.log") {
  ImportOptions o;
  o.path = path;
  o.collective = opt.collective;
  o.worldSize = opt.worldSize;
  return parseImport(text, opt.format, o);
}

// The message of the UsageError `f` throws ("" when it does not throw).
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

const ResultRecord& find(const ImportedRun& run, uint64_t size, const std::string& placement) {
  for (const auto& r : run.results) {
    if (r.sizeBytes == size && r.placement == placement) return r;
  }
  ADD_FAILURE() << "no result for " << size << " " << placement;
  return run.results.front();
}

nlohmann::json env(const ImportedRun& run) {
  return nlohmann::json::parse(run.run.environmentJson);
}

// Checks shared by every nccl-tests table: two placements per row, one collective, mean times.
void expectNcclTable(const ImportedRun& run, const std::string& coll, size_t rows, int n) {
  EXPECT_EQ(run.results.size(), 2 * rows);
  EXPECT_EQ(run.run.worldSize, n);
  EXPECT_EQ(run.run.worldKind, "imported");
  for (size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    EXPECT_EQ(r.collective, coll);
    EXPECT_EQ(r.placement, i % 2 == 0 ? "out" : "in");
    if (n > 0) {
      EXPECT_EQ(r.nranks, n);
    } else {
      EXPECT_FALSE(r.nranks.has_value());  // the log does not say: NULL, not 0
    }
    EXPECT_EQ(r.statistic, "mean");
    EXPECT_EQ(r.timeUs, r.meanUs);
  }
}

TEST(ImportDetect, RecognisesEverySample) {
  EXPECT_EQ(detectImportFormat(
                readText(sample("nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt")), "x"),
            ImportFormat::kNcclTests);
  EXPECT_EQ(detectImportFormat(
                readText(sample("osu_8_xccl-allreduce-nccl-cuda-v7.5-16gpu-2node.txt")), "x"),
            ImportFormat::kOsu);
  EXPECT_EQ(detectImportFormat(
                readText(sample("imb_3_allreduce-2021.10-144proc-4node-openmpi5.txt")), "x"),
            ImportFormat::kImb);
  EXPECT_EQ(detectImportFormat("  {\"version\":2}", "x"), ImportFormat::kNcclTestsJson);
  std::string e = errorOf([] { detectImportFormat("hello\nworld\n", "notes.txt"); });
  EXPECT_NE(e.find("import: notes.txt: cannot tell the format"), std::string::npos) << e;
  EXPECT_EQ(parseImportFormat("OSU"), ImportFormat::kOsu);
  EXPECT_THROW(parseImportFormat("csv"), UsageError);
}

TEST(ImportNcclTests, CollectiveInferredWhereTheLogDoesNotNameIt) {
  // Old logs print no "# Collective test starting" line: the table tells the collective (redop,
  // root, size / count, busbw / algbw against the world size), and the run says how it knew.
  struct Expect {
    const char* file;
    const char* collective;
    int world;
    const char* how;
  };
  for (const Expect& x : {
           Expect{"nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt", "allreduce", 16,
                  "collective allreduce inferred: from the table: redop sum, root -1, size = count "
                  "x elsize x 1, busbw/algbw 1.875"},
           Expect{"nccltests_2_dgx2-v100-12gpu-oldformat-allgather-FAILED.txt", "allgather", 12,
                  "collective allgather inferred: from the table: no redop column, size = count x "
                  "elsize x 12"},
           Expect{"nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt", "allreduce", 12,
                  "collective allreduce inferred: from the table: redop sum"},
           Expect{"nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt", "allreduce", 2,
                  "collective allreduce inferred: from the table: redop sum, root -1"},
       }) {
    auto runs = importSample(x.file);
    ASSERT_EQ(runs.size(), 1u) << x.file;
    EXPECT_EQ(runs[0].results.front().collective, x.collective) << x.file;
    EXPECT_EQ(runs[0].run.worldSize, x.world) << x.file;
    bool said = std::any_of(runs[0].notes.begin(), runs[0].notes.end(),
                            [&](const auto& n) { return n.find(x.how) != std::string::npos; });
    EXPECT_TRUE(said) << x.file << ": " << fmt::format("{}", fmt::join(runs[0].notes, " | "));
  }
  // A table that contradicts every rule and a file name that says nothing: one clear line.
  std::string bare =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x1] GPU\n"
      "#  Rank  1 Group  0 Pid 1 on h device  1 [0x2] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time "
      "  algbw   busbw #wrong\n"
      "     8388608       2097152     float    none      -1    100.0   83.89   83.89      0    "
      "100.0 "
      "  83.89   83.89      0\n"
      "# Out of bounds values : 0 OK\n";
  ImportOptions o;
  o.path = "mystery.log";
  std::string e = errorOf([&] { parseNcclTestsText(bare, o); });
  EXPECT_NE(e.find("import: mystery.log:4: the log does not name the collective and the table "
                   "does not tell it"),
            std::string::npos)
      << e;
  o.path = "sendrecv_run.log";
  EXPECT_EQ(parseNcclTestsText(bare, o).at(0).results.at(0).collective, "sendrecv");
}

TEST(ImportNcclTests, H100TwoNodesNeedsCollectiveAndParses) {
  const std::string f = "nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt";
  std::string e = errorOf([&] { importSample(f, coll("allgather")); });
  EXPECT_NE(e.find("--collective allgather does not fit this table"), std::string::npos) << e;

  const ImportedRun run = onlyRun(importSample(f, coll("all_reduce")));
  expectNcclTable(run, "allreduce", 31, 16);
  EXPECT_EQ(run.run.source, "nccl-tests");
  EXPECT_EQ(run.run.hosts, "ztan-mig-235z,ztan-mig-gq73");
  EXPECT_EQ(run.run.status, RunStatus::kOk);
  EXPECT_EQ(run.run.startedAt, "2030-01-02T03:04:05Z");  // the log has no date
  EXPECT_EQ(run.run.commandLine, "import " + f);
  const auto& first = find(run, 8, "out");
  EXPECT_DOUBLE_EQ(first.timeUs, 135.8);
  EXPECT_EQ(first.count, 2u);
  EXPECT_EQ(first.dtype, "float");
  EXPECT_EQ(first.op, "sum");
  EXPECT_FALSE(first.root.has_value());  // -1 in the log: not rooted, stored NULL
  EXPECT_EQ(first.wrong, 0);
  EXPECT_EQ(first.iterations, 20);
  EXPECT_EQ(first.variant, "nccl");
  EXPECT_DOUBLE_EQ(find(run, 8, "in").timeUs, 123.5);
  EXPECT_DOUBLE_EQ(find(run, 8589934592ull, "out").busbw.value(), 338.82);
  EXPECT_DOUBLE_EQ(find(run, 8589934592ull, "out").algbw.value(), 180.71);
  EXPECT_DOUBLE_EQ(find(run, 2147483648ull, "in").timeUs, 12641);
  auto j = env(run);
  EXPECT_DOUBLE_EQ(j["avgBusBandwidth"].get<double>(), 70.742);
  EXPECT_EQ(j["devices"].size(), 16u);
  EXPECT_EQ(j["parameters"]["iters"], 20);
}

TEST(ImportNcclTests, OldFormatFailedAllGather) {
  const std::string f = "nccltests_2_dgx2-v100-12gpu-oldformat-allgather-FAILED.txt";
  const ImportedRun run = onlyRun(importSample(f, coll("allgather")));
  expectNcclTable(run, "allgather", 31, 12);
  EXPECT_EQ(run.run.status, RunStatus::kFailed);
  EXPECT_EQ(run.run.hosts, "seville");
  int wrongPlacements = 0;
  for (const auto& r : run.results) {
    EXPECT_EQ(r.op, "none");  // no redop column for all_gather in this format
    EXPECT_FALSE(r.root.has_value());
    if (r.wrong > 0) {
      ++wrongPlacements;
      EXPECT_EQ(r.status, cb::ResultStatus::kFailed);
      EXPECT_NE(r.message.find("1e+00"), std::string::npos) << r.message;
      EXPECT_GE(r.sizeBytes, 4294967280ull);
    } else {
      EXPECT_EQ(r.wrong, 0);
      EXPECT_EQ(r.status, cb::ResultStatus::kOk);
    }
  }
  EXPECT_EQ(wrongPlacements, 4);  // the footer's "Out of bounds values : 4 FAILED"
  EXPECT_DOUBLE_EQ(find(run, 48, "out").timeUs, 57.46);
  EXPECT_EQ(find(run, 48, "out").count, 1u);
  EXPECT_DOUBLE_EQ(find(run, 8589934560ull, "in").busbw.value(), 112.34);
  EXPECT_EQ(env(run)["outOfBounds"], 4);
  // An allreduce label does not fit a table whose size is count x 4 B x 12 ranks.
  std::string e = errorOf([&] { importSample(f, coll("allreduce")); });
  EXPECT_NE(e.find(f + ":18: --collective allreduce does not fit"), std::string::npos) << e;
}

TEST(ImportNcclTests, OldFormatResidualsAreNotFailures) {
  const ImportedRun run = onlyRun(
      importSample("nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt", coll("allreduce")));
  expectNcclTable(run, "allreduce", 31, 12);
  EXPECT_EQ(run.run.status, RunStatus::kOk);
  for (const auto& r : run.results) {
    EXPECT_EQ(r.wrong, 0);
    EXPECT_EQ(r.status, cb::ResultStatus::kOk);
    EXPECT_EQ(r.op, "sum");
  }
  const auto& r = find(run, 8, "out");
  EXPECT_NE(r.message.find("2e-07"), std::string::npos) << r.message;
  EXPECT_DOUBLE_EQ(r.timeUs, 61.03);
  EXPECT_DOUBLE_EQ(find(run, 8589934592ull, "in").busbw.value(), 123.57);
}

// A published excerpt keeping only the last device line ("# Rank 71 ... device 3") states no
// world of 1: the world is not taken from the lines, so busbw / algbw gives it (72, as
// 2 x 71 / 72 = 1.972), or --world-size does
// (tests/data/scaling/coreweave-gb200-nvl72-18nodes.txt: one rack, 72 ranks).
TEST(ImportNcclTests, RankLinesCutToTheLastAreNotTheWorld) {
  const std::string text = readText(std::string(CB_SOURCE_DIR) +
                                    "/tests/data/scaling/coreweave-gb200-nvl72-18nodes.txt");
  ImportedRun run = onlyRun(importText(text, coll("allreduce")));
  EXPECT_EQ(run.run.worldSize, 72);
  for (const auto& r : run.results) EXPECT_EQ(r.nranks, 72);
  run = onlyRun(importText(text, Opt{"allreduce", 72, ImportFormat::kAuto}));
  EXPECT_EQ(run.run.worldSize, 72);
  EXPECT_EQ(run.results.front().nranks, 72);
  EXPECT_NE(errorOf([&] { importText(text, Opt{"allreduce", 144, ImportFormat::kAuto}); }), "");
}

TEST(ImportNcclTests, TwoConcatenatedTestsGiveTwoRuns) {
  auto slow = importSample("nccltests_4_h100-2node-slowpair-alltoall-sendrecv.txt");
  ASSERT_EQ(slow.size(), 2u);
  expectNcclTable(slow[0], "alltoall", 10, 16);
  expectNcclTable(slow[1], "sendrecv", 10, 16);
  EXPECT_EQ(slow[0].run.hosts, "cnode4-005,cnode4-009");
  EXPECT_EQ(find(slow[0], 33554432, "out").dtype, "double");
  EXPECT_EQ(find(slow[0], 33554432, "out").wrong, 0);
  EXPECT_FALSE(find(slow[0], 33554432, "in").wrong.has_value());  // N/A: not checked
  EXPECT_DOUBLE_EQ(find(slow[0], 17179869184ull, "out").busbw.value(), 7.56);
  EXPECT_DOUBLE_EQ(env(slow[0])["avgBusBandwidth"].get<double>(), 13.4518);
  EXPECT_DOUBLE_EQ(env(slow[1])["avgBusBandwidth"].get<double>(), 24.9482);
  EXPECT_EQ(env(slow[1])["binary"], "sendrecv_perf");

  auto normal = importSample("nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt");
  ASSERT_EQ(normal.size(), 2u);
  expectNcclTable(normal[0], "alltoall", 10, 16);
  expectNcclTable(normal[1], "sendrecv", 10, 16);
  EXPECT_EQ(normal[0].run.hosts, "cnode4-005,cnode4-006");
  EXPECT_DOUBLE_EQ(find(normal[0], 33554432, "out").timeUs, 508.0);
  EXPECT_DOUBLE_EQ(find(normal[1], 17179869184ull, "out").busbw.value(), 29.03);
  EXPECT_DOUBLE_EQ(env(normal[0])["avgBusBandwidth"].get<double>(), 72.3909);
  // A --collective that contradicts the log is refused.
  std::string e = errorOf([] {
    importSample("nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt", coll("alltoall"));
  });
  EXPECT_NE(e.find("contradicts the log, which names sendrecv"), std::string::npos) << e;
}

TEST(ImportNcclTests, PcieTwoGpus) {
  auto runs =
      importSample("nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt", coll("allreduce"));
  ASSERT_EQ(runs.size(), 1u);
  expectNcclTable(runs[0], "allreduce", 28, 2);
  EXPECT_DOUBLE_EQ(find(runs[0], 1073741824, "out").busbw.value(), 4.00);
  EXPECT_DOUBLE_EQ(find(runs[0], 1073741824, "in").timeUs, 268461);
  EXPECT_DOUBLE_EQ(env(runs[0])["avgBusBandwidth"].get<double>(), 2.05774);
}

TEST(ImportNcclTests, NewestFormatReduceScatter) {
  const ImportedRun run = onlyRun(importSample("nccltests_8_h100-1node-8gpu-g8-reducescatter.txt"));
  expectNcclTable(run, "reduce_scatter", 31, 8);
  EXPECT_EQ(run.run.ncclVersion, "2.26.2");
  EXPECT_EQ(env(run)["toolVersion"], "2.17.9");
  EXPECT_EQ(run.run.status, RunStatus::kOk);
  EXPECT_DOUBLE_EQ(run.results[0].timeUs, 0.89);  // first zero-byte row
  EXPECT_EQ(run.results[0].sizeBytes, 0u);
  EXPECT_DOUBLE_EQ(find(run, 4294967296ull, "out").timeUs, 10450.3);
  EXPECT_DOUBLE_EQ(find(run, 8589934592ull, "out").busbw.value(), 363.18);
  EXPECT_DOUBLE_EQ(env(run)["avgBusBandwidth"].get<double>(), 111.432);
}

TEST(ImportNcclTests, NewestFormatAllReduceNvls) {
  auto runs = importSample("nccltests_9_h100-1node-8gpu-g8-allreduce-nvls.txt");
  ASSERT_EQ(runs.size(), 1u);
  expectNcclTable(runs[0], "allreduce", 31, 8);
  EXPECT_EQ(runs[0].results[0].variant, "nccl");  // NVLS only in the file name
  EXPECT_DOUBLE_EQ(find(runs[0], 8589934592ull, "out").busbw.value(), 368.69);
  EXPECT_DOUBLE_EQ(find(runs[0], 8, "out").timeUs, 35.58);
  EXPECT_DOUBLE_EQ(env(runs[0])["avgBusBandwidth"].get<double>(), 123.961);
}

// nccl-tests 2.19.6 on one H100 (this project's own run): columns fitted by dropping decimals
// ("1495.0") and by exponents ("1e+06"); the consistency checks must follow the printed digits.
TEST(ImportNcclTests, ColumnFittingOfNcclTests219) {
  auto runs = importSample("nccltests_10_h100-1gpu-g1-allreduce-nccltests2.19.6.txt");
  ASSERT_EQ(runs.size(), 1u);
  expectNcclTable(runs[0], "allreduce", 14, 1);
  EXPECT_DOUBLE_EQ(find(runs[0], 536870912ull, "out").algbw.value(), 1495.0);
  EXPECT_DOUBLE_EQ(find(runs[0], 536870912ull, "out").timeUs, 359.10);
  EXPECT_DOUBLE_EQ(find(runs[0], 536870912ull, "in").algbw.value(), 1e6);
  EXPECT_DOUBLE_EQ(find(runs[0], 8388608ull, "in").algbw.value(), 10529);
}

// The newest header with per-iteration columns, cputime-free, and a timestamp; NCCL INFO chatter
// naming the algorithm; an integer type whose #wrong is non-zero.
TEST(ImportNcclTests, PerIterationColumnsTimestampsAndChatter) {
  const std::string text =
      "# nccl-tests version 2.19.4 nccl-headers=22803 nccl-library=22803\n"
      "# Collective test starting: /opt/nccl-tests/bin/broadcast_perf_mpi\n"
      "# nThread 1 nGpus 2 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 1 iters: 10 "
      "agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
      "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n"
      "#\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid   1000 on     hostA device  0 [0000:1b:00] NVIDIA A100\n"
      "#  Rank  1 Group  0 Pid   1000 on     hostA device  1 [0000:2b:00] NVIDIA A100\n"
      "hostA:1000:1000 [0] NCCL INFO NCCL version 2.28.3+cuda12.9\n"
      "hostA:1000:1000 [0] NCCL INFO NCCL_ALGO set by environment to Tree\n"
      "#\n"
      "#                                       out-of-place (+ per-iteration)       in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong    "
      "i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    "
      "i_p99    i_cv%           timestamp\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
      "        1024           256     int32     sum       0    10.00    0.10    0.10       0     "
      "9.50    11.00    11.00     5.00    10.50    0.10    0.10       0     9.00    12.00    "
      "12.00     6.00  2025-03-04 05:06:07\n"
      "hostA:1000:1000 [1] NCCL WARN something odd\n"
      "        2048           512     int32     sum       0    11.00    0.19    0.19       3     "
      "10.50    12.00    12.00     4.00    11.50    0.18    0.18       0    10.00    13.00    "
      "13.00     7.00  2025-03-04 05:06:08\n"
      "# Out of bounds values : 3 FAILED\n"
      "# Avg bus bandwidth    : 0.14 \n"
      "#\n"
      "# Collective test concluded: /opt/nccl-tests/bin/broadcast_perf_mpi\n";
  const ImportedRun run = onlyRun(importText(text));
  expectNcclTable(run, "broadcast", 2, 2);
  EXPECT_EQ(run.run.status, RunStatus::kFailed);
  EXPECT_EQ(run.run.ncclVersion, "2.28.3");
  EXPECT_EQ(run.run.cudaVersion, "12.9");
  EXPECT_EQ(run.run.startedAt, "2025-03-04T05:06:07");
  const auto& a = find(run, 1024, "out");
  EXPECT_EQ(a.variant, "nccl:tree");
  EXPECT_EQ(a.dtype, "int32");
  EXPECT_EQ(a.root, 0);
  EXPECT_DOUBLE_EQ(a.minUs.value(), 9.5);
  EXPECT_DOUBLE_EQ(a.maxUs.value(), 11.0);
  EXPECT_DOUBLE_EQ(a.p99Us.value(), 11.0);
  EXPECT_DOUBLE_EQ(a.cv.value(), 0.05);
  EXPECT_EQ(a.iterations, 10);
  const auto& bad = find(run, 2048, "out");
  EXPECT_EQ(bad.wrong, 3);
  EXPECT_EQ(bad.status, cb::ResultStatus::kFailed);
  EXPECT_EQ(find(run, 2048, "in").wrong, 0);
  bool warned = false;
  for (const auto& n : run.notes) warned = warned || n.find("something odd") != std::string::npos;
  EXPECT_TRUE(warned);
}

std::string ncclLines(int from, int to) {
  std::istringstream in(readText(sample("nccltests_9_h100-1node-8gpu-g8-allreduce-nvls.txt")));
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n >= from && n <= to) out += line + "\n";
  }
  return out;
}

TEST(ImportNcclTests, WindowsLineEndings) {
  std::string text = ncclLines(1, 1000), crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  auto runs = importText(crlf);
  ASSERT_EQ(runs.size(), 1u);
  expectNcclTable(runs[0], "allreduce", 31, 8);
  EXPECT_EQ(runs[0].run.status, RunStatus::kOk);
}

TEST(ImportNcclTests, MalformedInputNamesFileAndLine) {
  const std::string full = ncclLines(1, 1000);
  // Rows start at line 18 (8 B); line 20 becomes a 64 B row without its in-place fields.
  std::string truncated =
      ncclLines(1, 19) + "          64            16     float     sum      -1    34.90    0.00\n" +
      ncclLines(21, 1000);
  std::string e = errorOf([&] { importText(truncated, {}, "cut.log"); });
  EXPECT_NE(e.find("import: cut.log:20: cannot parse '64            16     float"),
            std::string::npos)
      << e;

  std::string garbage =
      ncclLines(1, 22) + "Segmentation fault (core dumped)\n" + ncclLines(23, 1000);
  e = errorOf([&] { importText(garbage, {}, "g.log"); });
  EXPECT_EQ(e,
            "import: g.log:23: cannot parse 'Segmentation fault (core dumped)' (4 fields, the "
            "header has 13)");

  std::string letters = ncclLines(1, 22) +
                        "        8192          2048     float     sum      -1    35.29    0.23    "
                        "0.41       0    3x.57    0.23    0.40       0\n" +
                        ncclLines(24, 1000);
  e = errorOf([&] { importText(letters, {}, "l.log"); });
  EXPECT_NE(e.find("l.log:23: cannot parse"), std::string::npos) << e;

  // A shell prompt before the header is the command line a pasted log carries (issue 46):
  // skipped, with a note; the rows are read as before.
  auto prompted = importText("$ ./all_reduce_perf -g 8\n" + full, {}, "p.log");
  ASSERT_EQ(prompted.size(), 1u);
  EXPECT_NE(std::find(prompted[0].notes.begin(), prompted[0].notes.end(),
                      "skipped 1 command line(s) (first on line 1)"),
            prompted[0].notes.end());

  // A log that stops mid-table is imported as interrupted, not ok.
  auto runs = importText(ncclLines(1, 30));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run.status, RunStatus::kInterrupted);
  EXPECT_EQ(runs[0].results.size(), 2u * 13);  // rows on lines 18..30

  e = errorOf([&] { importText(ncclLines(1, 16), {}, "h.log"); });
  EXPECT_NE(e.find("h.log:16: nccl-tests table has no result rows"), std::string::npos) << e;
}

TEST(ImportNcclTests, RowWhoseColumnsDisagreeIsRefused) {
  // The current layout prints algbw = size / time. Line 23 (8192 B: time 35.29, algbw 0.23,
  // busbw 0.41) with time and busbw swapped would store a 0.41 us allreduce: refused, naming it.
  std::string swapped = ncclLines(1, 22) +
                        "        8192          2048     float     sum      -1     0.41    0.23    "
                        "35.29       0    35.57    0.23    0.40       0\n" +
                        ncclLines(24, 1000);
  std::string e = errorOf([&] { importText(swapped, {}, "s.log"); });
  EXPECT_NE(e.find("s.log:23: cannot parse"), std::string::npos) << e;
  EXPECT_NE(e.find("out-of-place algbw 0.23 is not size / time = 19.98 GB/s"), std::string::npos)
      << e;
  // Within the printed rounding (35.29 us, 8192 B: 0.2321 GB/s printed 0.23) is not a mismatch:
  // every real log in tests/data imports (the tests above).
  EXPECT_NO_THROW(importText(ncclLines(1, 1000)));
}

TEST(ImportNcclTestsJson, LayoutVersion2WithPerIterationTiming) {
  ImportOptions o;
  o.path = "ar.json";
  const ImportedRun run = onlyRun(parseImport(
      readText(std::string(CB_SOURCE_DIR) + "/tests/unit/data/nccltests_allreduce_v2.json"),
      ImportFormat::kAuto, o));
  EXPECT_EQ(run.run.source, "nccl-tests-json");
  EXPECT_EQ(run.run.worldSize, 2);  // two processes x 1 thread x 1 GPU
  EXPECT_EQ(run.run.hosts, "nodeA,nodeB");
  EXPECT_EQ(run.run.ncclVersion, "2.26.2");
  EXPECT_EQ(run.run.startedAt, "2025-03-01T10:20:30");
  EXPECT_EQ(run.run.status, RunStatus::kOk);
  ASSERT_EQ(run.results.size(), 6u);
  const auto& r = find(run, 2048, "out");
  EXPECT_EQ(r.collective, "allreduce");
  EXPECT_EQ(r.variant, "nccl:ring");
  EXPECT_FALSE(r.root.has_value());
  EXPECT_EQ(r.count, 512u);
  EXPECT_EQ(r.iterations, 5);
  EXPECT_DOUBLE_EQ(r.timeUs, 21.0);
  EXPECT_DOUBLE_EQ(r.minUs.value(), 20.6);
  EXPECT_DOUBLE_EQ(r.medianUs, 21.0);
  EXPECT_EQ(r.samplesUs, (std::vector<double>{21.0, 20.6, 21.4, 20.9, 21.1}));
  EXPECT_EQ(r.wrong, 0);
  EXPECT_FALSE(find(run, 4096, "in").wrong.has_value());  // nwrong null
  EXPECT_TRUE(find(run, 4096, "in").samplesUs.empty());
  auto j = env(run);
  EXPECT_EQ(j["ncclEnvironment"]["NCCL_ALGO"], "Ring");
  EXPECT_FALSE(j["ncclEnvironment"].contains("SECRET_TOKEN"));  // only NCCL_* is kept
  EXPECT_EQ(j["parameters"]["iterations"], 5);
}

TEST(ImportNcclTestsJson, LayoutVersion1QuirksAndErrors) {
  // Version 1: cpu_time key, nan string, failure counted, single-process device list.
  const std::string v1 =
      R"({"version":1,"start_time":"2024-11-05 08:00:00","args":["/opt/nccl-tests/all_gather_perf","-g","4"],)"
      R"("env":[],"nccl_version":22304,"config":{"nthreads":1,"ngpus":4,"minimum_bytes":64,)"
      R"("maximum_bytes":128,"step_factor":2,"warmup_iters":5,"iterations":20,)"
      R"("aggregated_iterations":1,"validation":1,"graph":0,"blocking_collectives":"false",)"
      R"("parallel_init":"false","devices":[{"rank":0,"group":0,"pid":77,"hostname":"box",)"
      R"("device":0,"device_hex":"0000:01:00","device_info":"GPU"}]},"results":[)"
      R"({"size":64,"count":4,"type":"float","redop":"none","root":"    -1","out_of_place":)"
      R"({"cpu_time":12.500000,"alg_bw":0.010000,"bus_bw":0.007500,"nwrong":0.000000},)"
      R"("in_place":{"cpu_time":"nan","alg_bw":"nan","bus_bw":"nan","nwrong":2.000000},)"
      R"("actual_iterations":20,"experiment_name":""}],"out_of_bounds":{"count":2,"okay":"false"},)"
      R"("average_bus_bandwidth":{"bandwidth":0.007500,"okay":"unchecked"},"errors":[],)"
      R"("end_time":"2024-11-05 08:00:01"})";
  auto runs = importText(v1);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run.worldSize, 4);
  EXPECT_EQ(runs[0].run.ncclVersion, "2.23.4");
  EXPECT_EQ(runs[0].run.status, RunStatus::kFailed);
  ASSERT_EQ(runs[0].results.size(), 2u);
  EXPECT_EQ(runs[0].results[0].collective, "allgather");
  EXPECT_DOUBLE_EQ(runs[0].results[0].timeUs, 12.5);
  EXPECT_EQ(runs[0].results[1].status,
            cb::ResultStatus::kFailed);  // nwrong 2 beats the nan measurement
  EXPECT_EQ(runs[0].results[1].wrong, 2);

  // Aborted version-1 run: truncated JSON.
  std::string e = errorOf([&] { importText(v1.substr(0, 300), {}, "cut.json"); });
  EXPECT_NE(e.find("import: cut.json:1: not a complete nccl-tests JSON report"), std::string::npos)
      << e;
  // A number past double's range is an unreadable report, not an internal error.
  e = errorOf([] { importText(R"({"version":1e999,"config":{},"results":[]})", {}, "big.json"); });
  EXPECT_NE(e.find("import: big.json: not a readable nccl-tests JSON report (number overflow"),
            std::string::npos)
      << e;
  // Unknown layout.
  e = errorOf([] { importText(R"({"version":7,"config":{},"results":[]})", {}, "v7.json"); });
  EXPECT_NE(e.find("v7.json: version: unsupported JSON layout version 7"), std::string::npos) << e;
  // A row without a size.
  e = errorOf([] {
    importText(R"({"version":2,"args":["all_reduce_perf"],"config":{"nthreads":1,"ngpus":1},)"
               R"("results":[{"count":1}]})",
               {}, "m.json");
  });
  EXPECT_NE(e.find("m.json: results[0]: missing 'size'"), std::string::npos) << e;
}

TEST(ImportOsu, CollectivesWithoutWorldSize) {
  const ImportedRun run = onlyRun(importSample("osu_1_allreduce-v5.6.2-64proc-openmpi4-ucx.txt"));
  EXPECT_EQ(run.run.source, "osu");
  EXPECT_EQ(run.run.worldSize, 0);
  ASSERT_EQ(run.results.size(), 19u);
  EXPECT_EQ(run.results[0].collective, "allreduce");
  EXPECT_EQ(run.results[0].variant, "mpi");
  EXPECT_EQ(run.results[0].placement, "out");
  EXPECT_EQ(run.results[0].sizeBytes, 4u);
  EXPECT_DOUBLE_EQ(run.results[0].timeUs, 5.47);
  EXPECT_FALSE(run.results[0].busbw.has_value());  // needs the world size
  EXPECT_NEAR(run.results.back().algbw.value(), 1048576 / 3730.69 / 1e3, 1e-12);  // S = size
  EXPECT_EQ(env(run)["toolVersion"], "5.6.2");

  // With --world-size the brief's factor applies: 2(n-1)/n.
  auto runs = importSample("osu_1_allreduce-v5.6.2-64proc-openmpi4-ucx.txt", world(64));
  EXPECT_EQ(runs[0].run.worldSize, 64);
  EXPECT_NEAR(runs[0].results.back().busbw.value(), 1048576 / 3730.69 / 1e3 * 2 * 63 / 64, 1e-12);

  runs = importSample("osu_2_allgather-v5.6.2-64proc-intelmpi.txt");
  ASSERT_EQ(runs[0].results.size(), 21u);
  EXPECT_EQ(runs[0].results[0].collective, "allgather");
  EXPECT_EQ(runs[0].results[0].op, "none");
  EXPECT_FALSE(runs[0].results.back().algbw.has_value());  // S = size x n is unknown
  EXPECT_DOUBLE_EQ(runs[0].results.back().timeUs, 196016.56);
  runs = importSample("osu_2_allgather-v5.6.2-64proc-intelmpi.txt", world(64));
  EXPECT_NEAR(runs[0].results.back().algbw.value(), 1048576.0 * 64 / 196016.56 / 1e3, 1e-12);
  EXPECT_NEAR(runs[0].results.back().busbw.value(), 1048576.0 * 63 / 196016.56 / 1e3, 1e-12);
}

TEST(ImportOsu, PointToPoint) {
  auto lat = importSample("osu_3_latency-v5.6.2-2proc-openmpi4-ucx.txt");
  ASSERT_EQ(lat[0].results.size(), 24u);
  EXPECT_EQ(lat[0].run.worldSize, 2);
  EXPECT_EQ(lat[0].results[0].collective, "latency");
  EXPECT_EQ(lat[0].results[0].sizeBytes, 0u);
  EXPECT_DOUBLE_EQ(lat[0].results[0].timeUs, 1.00);
  EXPECT_DOUBLE_EQ(lat[0].results.back().timeUs, 351.21);
  EXPECT_NEAR(lat[0].results.back().algbw.value(), 4194304 / 351.21 / 1e3, 1e-12);

  auto bw = importSample("osu_4_bw-v5.6.2-2proc-openmpi4-ucx.txt");
  ASSERT_EQ(bw[0].results.size(), 23u);
  EXPECT_EQ(bw[0].results[0].collective, "bw");
  // OSU MB/s is 1e6 B/s: 12164.86 MB/s = 12.16486 GB/s.
  EXPECT_NEAR(bw[0].results.back().algbw.value(), 12.16486, 1e-12);
  EXPECT_NEAR(bw[0].results.back().busbw.value(), 12.16486, 1e-12);
  EXPECT_NEAR(bw[0].results.back().timeUs, 4194304 / 12164.86, 1e-9);

  auto cuda = importSample("osu_9_bw-cuda-DD-v7.5-2node-single-size.txt");
  ASSERT_EQ(cuda[0].results.size(), 1u);
  EXPECT_EQ(cuda[0].results[0].variant, "mpi:cuda");
  EXPECT_EQ(cuda[0].results[0].dtype, "int8");
  EXPECT_EQ(cuda[0].results[0].sizeBytes, 268435456u);
  EXPECT_NEAR(cuda[0].results[0].algbw.value(), 11.96221, 1e-12);
}

TEST(ImportOsu, FullStatsDatatypeLineAndNccl) {
  auto full = importSample("osu_6_allgatherv-v5.8-fullstats-f-128proc-4node-ucc-dpu-offload.txt");
  ASSERT_EQ(full[0].results.size(), 13u);
  const auto& r = full[0].results[0];
  EXPECT_EQ(r.collective, "allgatherv");
  EXPECT_EQ(r.sizeBytes, 256u);
  EXPECT_DOUBLE_EQ(r.timeUs, 1835.82);
  EXPECT_DOUBLE_EQ(r.minUs.value(), 1826.81);
  EXPECT_DOUBLE_EQ(r.maxUs.value(), 1849.30);
  EXPECT_EQ(r.iterations, 1000);
  EXPECT_EQ(full[0].results.back().iterations, 100);

  auto v75 = importSample("osu_7_allreduce-v7.5-144proc-4node-datatype-line.txt");
  ASSERT_EQ(v75[0].results.size(), 27u);
  EXPECT_EQ(v75[0].results[0].dtype, "int32");
  EXPECT_EQ(v75[0].results[0].count, 1u);
  EXPECT_EQ(v75[0].results.back().count, 268435456u / 4);
  EXPECT_DOUBLE_EQ(v75[0].results.back().timeUs, 496306.98);
  EXPECT_EQ(env(v75[0])["toolVersion"], "7.5");

  auto xccl = importSample("osu_8_xccl-allreduce-nccl-cuda-v7.5-16gpu-2node.txt");
  ASSERT_EQ(xccl.size(), 1u);
  ASSERT_EQ(xccl[0].results.size(), 1u);
  EXPECT_EQ(xccl[0].run.worldSize, 16);  // 16 "#Using NCCL" lines
  const auto& x = xccl[0].results[0];
  EXPECT_EQ(x.variant, "nccl");
  EXPECT_EQ(x.sizeBytes, 1073741824u);
  EXPECT_DOUBLE_EQ(x.timeUs, 13482.19);
  EXPECT_NEAR(x.busbw.value(), 1073741824 / 13482.19 / 1e3 * 30 / 16, 1e-9);
  // A log that states 16 ranks contradicts --world-size 8.
  std::string e = errorOf(
      [] { importSample("osu_8_xccl-allreduce-nccl-cuda-v7.5-16gpu-2node.txt", world(8)); });
  EXPECT_NE(e.find("--world-size 8 contradicts the log, which shows 16 ranks"), std::string::npos)
      << e;
}

TEST(ImportOsu, ValidationBarrierConcatenationAndErrors) {
  const std::string text =
      "# OSU MPI Reduce Latency Test v7.4\n"
      "# Datatype: MPI_FLOAT.\n"
      "# Size       Avg Latency(us)        Validation  P50 Tail Lat(us)  P99 Tail Lat(us)\n"
      "4                      2.00              Pass              1.90              3.00\n"
      "8                      2.10              Fail              2.00              3.10\n"
      "\n"
      "# OSU MPI Barrier Latency Test v7.4\n"
      "# Avg Latency(us)\n"
      "          4.50\n";
  auto runs = importText(text, world(4));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run.status, RunStatus::kFailed);
  EXPECT_EQ(runs[0].results[0].wrong, 0);
  EXPECT_EQ(runs[0].results[1].wrong, 1);
  EXPECT_EQ(runs[0].results[1].status, cb::ResultStatus::kFailed);
  EXPECT_DOUBLE_EQ(runs[0].results[0].medianUs, 1.9);
  EXPECT_DOUBLE_EQ(runs[0].results[0].p99Us.value(), 3.0);
  EXPECT_NEAR(runs[0].results[0].busbw.value(), 4 / 2.0 / 1e3,
              1e-12);  // reduce: S = size, factor 1
  EXPECT_EQ(runs[1].results[0].collective, "barrier");
  EXPECT_DOUBLE_EQ(runs[1].results[0].timeUs, 4.5);

  std::string bad =
      "\n# OSU MPI Latency Test v5.6.2\n# Size          Latency (us)\n0   1.00\n"
      "[node1:1234] SET UCX_NET_DEVICES=mlx5_0:1\n";
  std::string e = errorOf([&] { importText(bad, {}, "o.log"); });
  EXPECT_EQ(e,
            "import: o.log:5: cannot parse '[node1:1234] SET UCX_NET_DEVICES=mlx5_0:1' (3 fields, "
            "the header has 2)");
  e = errorOf(
      [] { importText("# OSU MPI Latency Test v5.6.2\n# Size  Latency (us)\n16\n", {}, "t.log"); });
  EXPECT_NE(e.find("t.log:3: cannot parse '16' (1 fields, the header has 2)"), std::string::npos)
      << e;
  e = errorOf(
      [] { importText("# OSU MPI Non-blocking Allreduce Latency Test v7.4\n", {}, "n.log"); });
  EXPECT_NE(e.find("n.log:1: unsupported OSU test"), std::string::npos) << e;
}

TEST(ImportImb, PingPong) {
  const ImportedRun run =
      onlyRun(importSample("imb_1_pingpong-2019u5-2node-openmpi4-ucx-fullsweep.txt"));
  EXPECT_EQ(run.run.source, "imb");
  EXPECT_EQ(run.run.worldSize, 2);
  EXPECT_EQ(run.run.startedAt, "2020-09-11T15:04:20");
  ASSERT_EQ(run.results.size(), 24u);
  const auto& last = run.results.back();
  EXPECT_EQ(last.collective, "latency");
  EXPECT_EQ(last.variant, "mpi");
  EXPECT_EQ(last.sizeBytes, 4194304u);
  EXPECT_EQ(last.iterations, 10);
  EXPECT_DOUBLE_EQ(last.timeUs, 352.68);
  // IMB 2019: Mbytes/sec is 1e6 B/s (size / t = 4194304 / 352.68 = 11892.66).
  EXPECT_NEAR(last.algbw.value(), 11.8926, 1e-12);
  EXPECT_EQ(env(run)["toolVersion"], "2019 Update 5");

  auto two = importSample("imb_2_pingpong-2021.10-2node-openmpi5-msglog28.txt");
  ASSERT_EQ(two[0].results.size(), 2u);
  EXPECT_DOUBLE_EQ(two[0].results[1].timeUs, 21983.36);
  EXPECT_NEAR(two[0].results[1].algbw.value(), 12.21085, 1e-12);
}

TEST(ImportImb, AllreduceUsesAverageTime) {
  auto runs = importSample("imb_3_allreduce-2021.10-144proc-4node-openmpi5.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run.worldSize, 144);
  ASSERT_EQ(runs[0].results.size(), 2u);
  const auto& r = runs[0].results[1];
  EXPECT_EQ(r.collective, "allreduce");
  EXPECT_EQ(r.dtype, "float");
  EXPECT_EQ(r.op, "sum");
  EXPECT_EQ(r.count, 268435456u / 4);
  EXPECT_DOUBLE_EQ(r.timeUs, 422165.51);
  EXPECT_DOUBLE_EQ(r.minUs.value(), 403874.11);
  EXPECT_DOUBLE_EQ(r.maxUs.value(), 433311.53);
  EXPECT_NEAR(r.algbw.value(), 268435456 / 422165.51 / 1e3, 1e-12);
  EXPECT_NEAR(r.busbw.value(), *r.algbw * 2 * 143 / 144, 1e-12);

  auto four = importSample("imb_4_allreduce-2021.2-144proc-4node-intelmpi.txt");
  ASSERT_EQ(four[0].results.size(), 3u);
  EXPECT_EQ(four[0].results[1].sizeBytes, 134217728u);
  EXPECT_DOUBLE_EQ(four[0].results[1].timeUs, 105716.44);
  EXPECT_EQ(four[0].run.startedAt, "2024-06-20T16:46:03");
}

// An IMB 4.x log: Mbytes/sec in 2^20 B/s; two process counts give two runs.
TEST(ImportImb, OldVersionUnitsAndOneRunPerWorldSize) {
  const std::string text =
      "#---------------------------------------------------\n"
      "# Intel (R) MPI Benchmark Suite V4.0.0, MPI-1 part\n"
      "#---------------------------------------------------\n"
      "# Date                  : Wed Jan 29 00:18:01 2014\n"
      "#---------------------------------------------------\n"
      "# Benchmarking PingPong\n"
      "# #processes = 2\n"
      "# ( 2 additional processes waiting in MPI_Barrier)\n"
      "#---------------------------------------------------\n"
      "       #bytes #repetitions      t[usec]   Mbytes/sec\n"
      "            0         1000         1.00         0.00\n"
      "      4194304           10      1000.00      4000.00\n"
      "\n"
      "#----------------------------------------------------------------\n"
      "# Benchmarking Allreduce\n"
      "# #processes = 2\n"
      "#----------------------------------------------------------------\n"
      "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
      "         1024         1000         2.00         4.00         3.00\n"
      "#----------------------------------------------------------------\n"
      "# Benchmarking Allreduce\n"
      "# #processes = 4\n"
      "#----------------------------------------------------------------\n"
      "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
      "         1024         1000         3.00         5.00         4.00\n"
      "      1048576 out-of-mem.; needed X=   1.000 GB; use flag \"-mem X\" or MAX_MEM_USAGE>=X "
      "(IMB_mem_info.h)\n";
  auto runs = importText(text);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run.worldSize, 2);
  EXPECT_EQ(runs[1].run.worldSize, 4);
  ASSERT_EQ(runs[0].results.size(), 3u);
  // 4194304 B / 1000 us = 4194.304 MB/s of 1e6 B = 4000 MB/s of 2^20 B.
  EXPECT_NEAR(runs[0].results[1].algbw.value(), 4000 * 1048576.0 / 1e9, 1e-12);
  EXPECT_EQ(runs[0].results[2].collective, "allreduce");
  EXPECT_NEAR(runs[0].results[2].busbw.value(), 1024 / 3.0 / 1e3 * 2 * 1 / 2, 1e-12);
  ASSERT_EQ(runs[1].results.size(), 2u);
  EXPECT_EQ(runs[1].results[1].status, cb::ResultStatus::kSkipped);  // IMB could not run that size
  EXPECT_NE(runs[1].results[1].message.find("out-of-mem"), std::string::npos);
  EXPECT_EQ(runs[1].run.status, RunStatus::kOk);
}

TEST(ImportImb, MalformedInput) {
  std::string text = readText(sample("imb_3_allreduce-2021.10-144proc-4node-openmpi5.txt"));
  auto at = text.find("    268435456");
  std::string bad = text.substr(0, at) + "    268435456            1    403874.11\n" +
                    text.substr(text.find('\n', at) + 1);
  std::string e = errorOf([&] { importText(bad, {}, "i.log"); });
  EXPECT_NE(e.find("import: i.log:36: cannot parse '268435456            1    403874.11' (3 "
                   "fields, the header has 5)"),
            std::string::npos)
      << e;
  std::string garbage = text + "mpirun noticed that process rank 3 exited on signal 9\n";
  e = errorOf([&] { importText(garbage, {}, "k.log"); });
  EXPECT_NE(e.find("k.log:41: cannot parse 'mpirun noticed"), std::string::npos) << e;
}

}  // namespace
}  // namespace cb
