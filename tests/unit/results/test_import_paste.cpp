// What users paste (#27 item 5): the result table of every real nccl-tests log in
// tests/data/samples cut out of its log, with and without its '#' column header and footer, with
// trailing spaces, imports with the same points as the whole log; a row whose busbw is not its
// algbw times the collective's factor is refused with its line; a current-layout table whose
// collective could be allgather or alltoall is not guessed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/Error.h"
#include "results/import/Import.h"

namespace cb {
namespace {

std::vector<std::string> sampleLines(const std::string& name) {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/tests/data/samples/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
  }
  return lines;
}

std::vector<ImportedRun> importText(const std::string& text, const std::string& path,
                                    std::optional<std::string> collective = std::nullopt) {
  ImportOptions o;
  o.path = path;
  o.collective = collective;
  return parseImport(text, ImportFormat::kAuto, o);
}

std::string errorOf(const std::string& text, const std::string& path) {
  try {
    importText(text, path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool isRow(const std::string& l) {
  size_t i = l.find_first_not_of(' ');
  return i != std::string::npos && l[i] >= '0' && l[i] <= '9';
}

// The first table of a log: its '#  size' header (and units line), rows, and footer lines.
struct Table {
  std::vector<std::string> header, rows, footer;
};
Table firstTable(const std::vector<std::string>& lines) {
  Table t;
  size_t i = 0;
  auto isHeader = [](const std::string& l) {
    return l.rfind("#", 0) == 0 && l.find("size") != std::string::npos &&
           l.find("count") != std::string::npos;
  };
  while (i < lines.size() && !isHeader(lines[i])) ++i;
  for (; i < lines.size() && !isRow(lines[i]); ++i) t.header.push_back(lines[i]);
  for (; i < lines.size() && isRow(lines[i]); ++i) t.rows.push_back(lines[i]);
  for (; i < lines.size() && lines[i].rfind("#", 0) == 0 && t.footer.size() < 4; ++i) {
    t.footer.push_back(lines[i]);
  }
  return t;
}

std::string join(const std::vector<std::vector<std::string>>& parts, const std::string& tail) {
  std::string s;
  for (const auto& p : parts) {
    for (const auto& l : p) s += l + tail + "\n";
  }
  return s;
}

// Samples whose first table is one nccl-tests result table in the current layout, with the
// collective a cut-out fragment must be given (alltoall cannot be told from allgather).
struct Sample {
  const char* file;
  const char* collective;
  bool needsName;
};
const Sample kSamples[] = {
    {"nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt", "allreduce", false},
    {"nccltests_4_h100-2node-slowpair-alltoall-sendrecv.txt", "alltoall", true},
    {"nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt", "alltoall", true},
    {"nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt", "allreduce", false},
    {"nccltests_8_h100-1node-8gpu-g8-reducescatter.txt", "reduce_scatter", false},
    {"nccltests_9_h100-1node-8gpu-g8-allreduce-nvls.txt", "allreduce", false},
};

TEST(ImportPaste, TableCutOutOfEveryLogImportsWithOrWithoutHeaderAndFooter) {
  for (const Sample& s : kSamples) {
    Table t = firstTable(sampleLines(s.file));
    ASSERT_FALSE(t.rows.empty()) << s.file;
    // The file name of a paste tells nothing: "paste.txt".
    for (const std::string& tail : {std::string(), std::string("   ")}) {
      for (int shape = 0; shape < 4; ++shape) {
        std::vector<std::vector<std::string>> parts;
        if (shape & 1) parts.push_back(t.header);
        parts.push_back(t.rows);
        if (shape & 2) parts.push_back(t.footer);
        const std::string text = join(parts, tail);
        SCOPED_TRACE(std::string(s.file) + " shape " + std::to_string(shape));
        if (s.needsName) {
          EXPECT_NE(errorOf(text, "paste.txt").find("pass --collective"), std::string::npos)
              << errorOf(text, "paste.txt");
          auto runs = importText(text, "paste.txt", std::string(s.collective));
          ASSERT_EQ(runs.size(), 1u);
          EXPECT_EQ(runs[0].results.size(), 2 * t.rows.size());
          continue;
        }
        auto runs = importText(text, "paste.txt");
        ASSERT_EQ(runs.size(), 1u);
        EXPECT_EQ(runs[0].results.size(), 2 * t.rows.size());
        EXPECT_EQ(runs[0].results[0].collective, s.collective);
      }
    }
  }
}

// busbw = algbw x 2(n-1)/n for allreduce: a row whose busbw is off (columns swapped or edited) is
// refused with its line; the same row with the right busbw imports.
TEST(ImportPaste, RowWhoseBusbwContradictsItsAlgbwIsRefused) {
  const std::string head =
      "# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n"
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x01] GPU\n"
      "#  Rank  1 Group  0 Pid 2 on h device  1 [0x02] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)       \n";
  // 2 ranks: busbw = algbw x 1. 1 MiB in 100 us = 10.49 GB/s.
  const std::string good =
      "     1048576        262144     float     sum      -1   100.00   10.49"
      "   10.49      0   100.00   10.49   10.49      0\n";
  const std::string bad =
      "     1048576        262144     float     sum      -1   100.00   10.49"
      "   20.97      0   100.00   10.49   10.49      0\n";
  EXPECT_EQ(importText(head + good, "t.log").at(0).results.size(), 2u);
  std::string e = errorOf(head + bad, "t.log");
  EXPECT_NE(e.find("t.log:7"), std::string::npos) << e;
  EXPECT_NE(e.find("busbw 20.97 is not algbw 10.49"), std::string::npos) << e;
}

}  // namespace
}  // namespace cb
