// Issue 46 item 0: every published log of tests/data/refdata/logs (copied with its source line,
// tests/data/refdata/SOURCES.md) imports as a new user would paste it: lines that lost their '#',
// code fences, command lines, NAME=value lines, NCCL's banner, rccl-tests' banners, '...' cuts
// and srun's "0: " labels are skipped with one note per kind; each log names its node type where
// its device lines name the GPU, and every verdict says how the figure stands for its kind (or
// that there is no reference). A row whose numbers disagree is still refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/PeakJudge.h"
#include "common/Lines.h"
#include "core/Error.h"
#include "results/import/Import.h"
#include "results/import/ImportPeak.h"

namespace cb {
namespace {

const std::string kDir = std::string(CB_SOURCE_DIR) + "/tests/data/refdata/logs/";

using test::readText;

std::vector<ImportedRun> importLog(const std::string& text, const std::string& path) {
  ImportOptions o;
  o.path = path;
  auto runs = parseImport(text, ImportFormat::kAuto, o);
  for (auto& r : runs) judgeImport(r, nullptr, "");
  return runs;
}

bool anyNote(const ImportedRun& run, const std::string& part) {
  for (const auto& n : run.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

struct Expected {
  std::string collective;
  std::string nodeKind;  // "" when the device lines name no GPU the table knows
};

// What a reader of each log sees at a glance: its collective and, where the device lines name
// the GPU, its node type.
const std::map<std::string, Expected> kLogs = {
    {"aws-p4de-2nodes-allreduce.txt", {"allreduce", ""}},
    {"aws-p5-2nodes-allreduce.txt", {"allreduce", ""}},
    {"aws-p5-2nodes-eks-allreduce-nccl2.18.5.txt", {"allreduce", ""}},
    {"aws-p5-awsbatch-allreduce-nodes-unknown.txt", {"allreduce", ""}},
    {"aws-p5en-topoaware-allreduce-nodes-unknown.txt", {"allreduce", ""}},
    // "NVIDIA Graphics Device": the driver did not name the GB200.
    {"coreweave-gb200-nvl72-1rack.txt", {"allreduce", ""}},
    {"coreweave-gb200-nvl72-20racks.txt", {"allreduce", "4x GB200, node count unknown"}},
    {"coreweave-gb200-nvl72-2racks.txt", {"allreduce", ""}},
    {"coreweave-h100-64gpu-sharp-example.txt", {"allreduce", ""}},
    {"dstack-gcp-a3mega-2nodes-allgather.txt", {"allgather", ""}},
    {"dstack-gcp-a4-b200-2nodes-allreduce.txt", {"allreduce", ""}},
    {"dstack-lambda-b200-2nodes-allreduce.txt", {"allreduce", ""}},
    {"nccl-tests-issue322-h100-128nodes-ring.txt", {"allreduce", ""}},
    {"oci-a100-40gb-b4.8-2nodes-allreduce.txt", {"allreduce", "8x A100 SXM4 40GB, 2 nodes"}},
    {"oci-gb200-v3.4-32nodes-allreduce-oke.txt", {"allreduce", "4x GB200, 32 nodes"}},
    // rccl-tests prints no GPU name on its device lines here.
    {"oci-mi300x-2nodes-allreduce.txt", {"allreduce", ""}},
    {"rocm-blog-mi300x-1node-allreduce.txt", {"allreduce", "8x MI300X, 1 node"}},
    {"superbench-a100-40gb-1node-allgather.txt", {"allgather", "8x A100 SXM4 40GB, 1 node"}},
    {"superbench-a100-40gb-1node-allreduce.txt", {"allreduce", "8x A100 SXM4 40GB, 1 node"}},
    {"superbench-a100-40gb-1node-alltoall.txt", {"alltoall", "8x A100 SXM4 40GB, 1 node"}},
    {"superbench-a100-40gb-1node-broadcast.txt", {"broadcast", "8x A100 SXM4 40GB, 1 node"}},
    {"superbench-a100-40gb-1node-reduce.txt", {"reduce", "8x A100 SXM4 40GB, 1 node"}},
    {"superbench-a100-40gb-1node-reducescatter.txt",
     {"reduce_scatter", "8x A100 SXM4 40GB, 1 node"}},
};

TEST(ImportPublished, EveryPublishedLogImportsWithItsNodeType) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    ++files;
    auto it = kLogs.find(name);
    ASSERT_NE(it, kLogs.end()) << "a log without an expectation: " << name;
    SCOPED_TRACE(name);
    std::vector<ImportedRun> runs;
    ASSERT_NO_THROW(runs = importLog(readText(entry.path().string()), entry.path().string()));
    ASSERT_EQ(runs.size(), 1u);
    const ImportedRun& run = runs.front();
    ASSERT_FALSE(run.results.empty());
    EXPECT_EQ(run.results.front().collective, it->second.collective);
    const NodeKind kind = logNodeKind(run);
    EXPECT_EQ(kind.known() ? kind.label() : "", it->second.nodeKind);
    // Every verdict says how the figure stands for its kind, or that there is no reference.
    auto env = nlohmann::json::parse(run.run.environmentJson);
    ASSERT_TRUE(env["peak"]["verdicts"].is_array());
    for (const auto& v : env["peak"]["verdicts"]) {
      const std::string line = v["line"].get<std::string>();
      EXPECT_NE(line.find("for its kind"), std::string::npos) << line;
      if (!kind.known()) {
        EXPECT_NE(line.find("no reference"), std::string::npos) << line;
      }
    }
  }
  EXPECT_EQ(files, kLogs.size());
}

// One note per kind of line skipped, naming how many and the first.
TEST(ImportPublished, SkippedLinesAreNotedByKind) {
  auto oci = importLog(readText(kDir + "oci-a100-40gb-b4.8-2nodes-allreduce.txt"), "oci.txt");
  EXPECT_TRUE(anyNote(oci[0], "skipped 4 NAME=value line(s)")) << oci[0].notes.front();
  EXPECT_TRUE(anyNote(oci[0], "skipped 1 command line(s)"));
  EXPECT_TRUE(anyNote(oci[0], "NCCL version banner"));
  EXPECT_EQ(oci[0].run.ncclVersion, "2.29.3");
  EXPECT_EQ(oci[0].run.worldSize, 16);  // ranks 0, 7, 8, 15 listed: from busbw/algbw
  EXPECT_TRUE(anyNote(oci[0], "a cut list"));

  // "Rank 1439" alone is not a world of one rank (read so before: a one-GPU algbw bound, "low").
  auto racks = importLog(readText(kDir + "coreweave-gb200-nvl72-20racks.txt"), "r.txt");
  EXPECT_EQ(racks[0].run.worldSize, 0);
  EXPECT_TRUE(
      anyNote(racks[0], "no bound known for this hardware (the device lines are a cut list"));

  auto rocm = importLog(readText(kDir + "rocm-blog-mi300x-1node-allreduce.txt"), "rocm.txt");
  EXPECT_TRUE(anyNote(rocm[0], "rccl-tests output is read as the nccl-tests format"));
  EXPECT_TRUE(anyNote(rocm[0], "library: RCCL 2.22.3"));
  EXPECT_EQ(rocm[0].run.worldSize, 8);

  auto dstack = importLog(readText(kDir + "dstack-lambda-b200-2nodes-allreduce.txt"), "l.txt");
  EXPECT_TRUE(anyNote(dstack[0], "without their '#' mark"));
  EXPECT_EQ(dstack[0].run.status, RunStatus::kOk);  // its footer was read

  auto cut = importLog(readText(kDir + "aws-p5en-topoaware-allreduce-nodes-unknown.txt"), "c.txt");
  EXPECT_TRUE(anyNote(cut[0], "'...' line(s) where the publisher cut lines"));

  auto srun = importLog(readText(kDir + "aws-p4de-2nodes-allreduce.txt"), "p4de.txt");
  EXPECT_TRUE(anyNote(srun[0], "srun --label"));
}

// A log without device lines takes its node type from --topology: the recorded machine's GPUs,
// and the world size / their count for the nodes.
TEST(ImportPublished, NodeTypeFromARecordedMachineWhenTheLogNamesNoDevices) {
  MachineTopology h100;
  h100.host = "p5";
  for (int g = 0; g < 8; ++g) {
    Gpu gpu;
    gpu.model = "NVIDIA H100 80GB HBM3";
    h100.gpus.push_back(gpu);
  }
  ImportOptions o;
  o.path = "aws-p5-2nodes-allreduce.txt";
  auto runs = parseImport(readText(kDir + o.path), ImportFormat::kAuto, o);
  ASSERT_EQ(runs.size(), 1u);
  judgeImport(runs[0], &h100, "p5.json");
  EXPECT_TRUE(anyNote(runs[0], "node type (topology p5.json): 8x H100, 2 nodes"));
  EXPECT_TRUE(anyNote(runs[0], "for its kind: published 8x H100, 2 nodes allreduce figures at"));
}

// Pasted or not, a row that looks like a table row but whose numbers disagree is refused.
TEST(ImportPublished, RowWhoseNumbersDisagreeIsStillRefused) {
  std::string text = readText(kDir + "dstack-lambda-b200-2nodes-allreduce.txt");
  // The 8 B row's out-of-place time 36.50 us becomes 3.65 us: algbw no longer size / time.
  const std::string row = "1073741824     268435456     float     sum      -1";
  const size_t at = text.find(row);
  ASSERT_NE(at, std::string::npos);
  const size_t eol = text.find('\n', at);
  std::string line = text.substr(at, eol - at);
  std::istringstream tok(line);
  std::vector<std::string> f;
  for (std::string t; tok >> t;) f.push_back(t);
  ASSERT_GE(f.size(), 9u);
  std::string edited = line;
  edited.replace(edited.find(f[6]), f[6].size(), "9" + f[6]);  // algbw off by far
  text.replace(at, line.size(), edited);
  ImportOptions o;
  o.path = "edited.txt";
  try {
    parseImport(text, ImportFormat::kAuto, o);
    FAIL() << "an edited row imported";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("edited.txt:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("algbw"), std::string::npos) << e.what();
  }
  // Lines that are neither nccl-tests output nor a known pasted kind still fail.
  o.path = "garbage.txt";
  std::string garbage = readText(kDir + "dstack-lambda-b200-2nodes-allreduce.txt");
  garbage.insert(garbage.find("        size"), "this is not a result row\n");
  EXPECT_THROW(parseImport(garbage, ImportFormat::kAuto, o), UsageError);
}

}  // namespace
}  // namespace cb
