// collbench replay: the trace readers against the counts of tests/data/traces/SOURCES.md, the
// checks that refuse a bad trace set, a fuzz of mutated traces, and replays on thread worlds
// with every op verified.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <random>
#include <string>

#include "collectives/Team.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "core/Text.h"
#include "replay/PyLiteral.h"
#include "replay/Readers.h"
#include "replay/Replay.h"
#include "replay/ReplayReport.h"
#include "replay/TraceSet.h"

namespace cb::replay {
namespace {

std::string data(const std::string& rel) {
  return std::string(CB_SOURCE_DIR) + "/tests/data/traces/" + rel;
}

struct Totals {
  int ops = 0;
  uint64_t bytes = 0;
};
std::map<std::string, Totals> totals(const RankTrace& t) {
  std::map<std::string, Totals> out;
  for (const auto& op : t.ops) {
    auto& x = out[std::string(opKindName(op.kind))];
    ++x.ops;
    x.bytes += op.bytes();
  }
  return out;
}

TraceSet load(std::vector<std::string> traces, bool one = false, std::string kineto = "") {
  TraceSetOptions o;
  o.traces = std::move(traces);
  o.useOneTrace = one;
  o.kineto = std::move(kineto);
  return loadTraceSet(o);
}

TEST(ReplayPyLiteral, ReadsPythonPrintedValues) {
  auto v = parsePythonLiteral("[[430, 431, 0, 53120, 4, 'cuda:0'], (1,), None, True, -2.5e3]");
  ASSERT_TRUE(v.is_array());
  EXPECT_EQ(v[0][3], 53120);
  EXPECT_EQ(v[0][5], "cuda:0");
  EXPECT_EQ(v[1].size(), 1u);
  EXPECT_TRUE(v[2].is_null());
  EXPECT_EQ(v[3], true);
  EXPECT_DOUBLE_EQ(v[4].get<double>(), -2500);
  EXPECT_THROW(parsePythonLiteral("[1, 2"), std::invalid_argument);
  EXPECT_THROW(parsePythonLiteral(std::string(200, '[')), std::invalid_argument);
}

// SOURCES.md: every DLRM rank records all_to_allv x4 (1,536-24,576 B), all_to_all x1 (192 B),
// allreduce x3 (112 / 226,960 / 394,241 floats).
TEST(ReplayReaders, DlrmEtMatchesSources) {
  TraceSet s = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")});
  ASSERT_EQ(s.recordedRanks, 8);
  for (const auto& t : s.ranks) {
    auto x = totals(t);
    EXPECT_EQ(x["alltoallv"].ops, 4);
    EXPECT_EQ(x["alltoallv"].bytes, (6144u + 384 + 3392 + 6144) * 4);
    EXPECT_EQ(x["alltoall"].ops, 1);
    EXPECT_EQ(x["alltoall"].bytes, 192u);
    EXPECT_EQ(x["allreduce"].ops, 3);
    EXPECT_EQ(x["allreduce"].bytes, (394241u + 112 + 226960) * 4);
    EXPECT_EQ(t.ops.size(), 8u);
    EXPECT_EQ(t.ops[0].seq, 147);
    EXPECT_EQ(t.ops[7].seq, 154);
  }
  // Rank 0's all_to_allv of seq 150: the splits of SOURCES.md.
  const CommOp& a = s.ranks[0].ops[3];
  EXPECT_EQ(a.kind, OpKind::kAllToAllV);
  EXPECT_EQ(a.dtype, DataType::kInt32);
  EXPECT_EQ(a.inSplits, (std::vector<uint64_t>{96, 224, 288, 1664, 592, 96, 192, 240}));
  EXPECT_EQ(a.outSplits, std::vector<uint64_t>(8, 96));
  fitToWorld(s, 8, 0, 1);  // consistent: out_split[r][j] == in_split[j][r]
  EXPECT_EQ(s.groups.size(), 1u);
}

TEST(ReplayReaders, KinetoDurationsGoBesideTheEtOps) {
  TraceSet s = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")}, false,
                    data("kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz"));
  EXPECT_EQ(s.recordedWorldSize, 8);
  for (const auto& t : s.ranks) {
    for (const auto& op : t.ops) EXPECT_GT(op.recordedUs, 0) << t.file << " " << op.node;
  }
  // Rank 0's first all_to_allv ran 2146 us on the V100 (SOURCES.md: dur 131-2146 us).
  EXPECT_DOUBLE_EQ(s.ranks[0].ops[0].recordedUs, 2146);
  // The Kineto file alone reads as the same ops (all_to_allv as all_to_all: no splits there).
  RankTrace k =
      readTrace(data("kineto/param-dlrm-8rank/worker0_step_12.1694128201545.pt.trace.json.gz"));
  EXPECT_EQ(k.ops.size(), 8u);
  EXPECT_EQ(k.recordedRank, 0);
  EXPECT_EQ(totals(k)["allreduce"].ops, 3);
  EXPECT_EQ(totals(k)["alltoall"].ops, 5);
}

TEST(ReplayReaders, KinetoNewStyleReadsKernelArguments) {
  RankTrace k = readTrace(data("kineto/hta-resnet-ddp-2rank/nccl_data.json.gz"));
  auto x = totals(k);
  EXPECT_EQ(x["allreduce"].ops, 15);
  EXPECT_EQ(x["broadcast"].ops, 6);
  EXPECT_EQ(k.recordedWorldSize, 2);
  EXPECT_TRUE(k.hasDurations());
}

// ResNet DDP, ET 1.1.0 (rank 1 of 2): allreduce x15 (5 buckets x 3), broadcast x6 (root 0).
TEST(ReplayReaders, ResnetEtMatchesSources) {
  TraceSet s = load({data("pytorch-et/param-resnet-ddp-2rank/resnet_2gpu_et.json.gz")}, true);
  const RankTrace& t = s.ranks[0];
  EXPECT_EQ(t.format, "pytorch-et 1.1.0-chakra.0.0.4");
  auto x = totals(t);
  EXPECT_EQ(x["allreduce"].ops, 15);
  EXPECT_EQ(x["allreduce"].bytes, 3ull * 4 * (2049000 + 7875584 + 6563840 + 6637568 + 2431040));
  EXPECT_EQ(x["broadcast"].ops, 6);
  EXPECT_EQ(x["broadcast"].bytes, 3ull * (212480 + 424));
  for (const auto& op : t.ops) {
    if (op.kind == OpKind::kBroadcast) {
      EXPECT_EQ(op.root, 0);
    }
  }
  ASSERT_EQ(t.groups.count("0"), 1u);
  EXPECT_EQ(t.groups.at("0").size, 2);
  EXPECT_EQ(naturalWorldSize(s), 2);
}

// chakra.0.et: 7 GPU-side COMM_COLL nodes (ALL_REDUCE x5, BROADCAST x2); the 14 host-side twins
// are not ops.
TEST(ReplayReaders, ChakraResnetMatchesSources) {
  RankTrace t = readTrace(data("chakra-et/chakra-resnet-ddp/chakra.0.et.gz"));
  auto x = totals(t);
  EXPECT_EQ(x["allreduce"].ops, 5);
  EXPECT_EQ(x["allreduce"].bytes, 8196000ull + 31502336 + 26255360 + 26550272 + 9724160);
  EXPECT_EQ(x["broadcast"].ops, 2);
  EXPECT_EQ(x["broadcast"].bytes, 212480ull + 424);
  EXPECT_EQ(t.ops.size(), 7u);
  EXPECT_EQ(t.ops[1].dtype, DataType::kInt64);  // 53 x 8 B from the node's input types
  for (const auto& op : t.ops) EXPECT_GT(op.recordedUs, 0);
}

TEST(ReplayReaders, AstraSimMicrobenchmarks) {
  for (const char* k : {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"}) {
    TraceSet s = load(
        {data(std::string("chakra-et/astra-sim-microbench-4npus/") + k + "/" + k + ".{rank}.et")});
    ASSERT_EQ(s.recordedRanks, 4) << k;
    for (const auto& t : s.ranks) {
      ASSERT_EQ(t.ops.size(), 1u);
      EXPECT_EQ(t.ops[0].bytes(), 1048576u);
    }
    fitToWorld(s, 4, 0, 1);
  }
}

TEST(ReplayReaders, CustomRingIsSendsAndReceivesInBatches) {
  TraceSet s =
      load({data("chakra-et/astra-sim-custom-ring-allreduce-8npus/custom_allreduce.{rank}.et")});
  ASSERT_EQ(s.recordedRanks, 8);
  for (int r = 0; r < 8; ++r) {
    auto x = totals(s.ranks[r]);
    EXPECT_EQ(x["send"].ops, 14);
    EXPECT_EQ(x["recv"].ops, 14);
    EXPECT_EQ(x["send"].bytes, 14u * 131072);
    EXPECT_EQ(s.ranks[r].ops[0].peer, (r + 1) % 8);
    EXPECT_EQ(s.ranks[r].ops[1].peer, (r + 7) % 8);
    EXPECT_TRUE(s.ranks[r].ops[1].withPrevious);
    EXPECT_FALSE(s.ranks[r].ops[2].withPrevious);  // a compute node between
  }
  fitToWorld(s, 8, 0, 1);
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ReplayBadTraces, OneLineNamingFileAndNode) {
  std::string et =
      readTraceBytes(data("chakra-et/astra-sim-custom-ring-allreduce-8npus/custom_allreduce.0.et"));
  std::string e = errorOf([&] { parseTrace("ring.et", et.substr(0, et.size() - 7)); });
  EXPECT_NE(e.find("ring.et"), std::string::npos) << e;
  EXPECT_NE(e.find("record"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  e = errorOf([&] { parseTrace("x.json", R"J({"schema": "2.0", "nodes": []})J"); });
  EXPECT_NE(e.find("schema '2.0'"), std::string::npos) << e;
  e = errorOf([&] {
    parseTrace("x.json",
               R"J({"schema": "1.0.1", "nodes": [{"name": "record_param_comms", "id": 7,
               "inputs": [[1, 2, 0, 10, 4, "cuda:0"], 1, 5, 0, "gather", [], []],
               "input_types": ["Tensor(float)"]}]})J");
  });
  EXPECT_NE(e.find("node 7"), std::string::npos) << e;
  // 8 rank traces on 3 ranks.
  TraceSet s = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")});
  e = errorOf([&] { fitToWorld(s, 3, 0, 1); });
  EXPECT_NE(e.find("8 rank traces for a world of 3"), std::string::npos) << e;
  // Ranks that disagree on an op's size.
  TraceSet bad = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")});
  bad.ranks[5].ops[4].count += 1;
  e = errorOf([&] { fitToWorld(bad, 8, 0, 1); });
  EXPECT_NE(e.find("rank 5's op 4"), std::string::npos) << e;
  // Ranks that disagree on the number of ops.
  TraceSet fewer = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")});
  fewer.ranks[2].ops.pop_back();
  e = errorOf([&] { fitToWorld(fewer, 8, 0, 1); });
  EXPECT_NE(e.find("rank 2 has 7 ops"), std::string::npos) << e;
}

TEST(ReplayBadTraces, ShrinkSaysHow) {
  TraceSet s = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")});
  fitToWorld(s, 4, 4, 1);
  ASSERT_EQ(s.ranks.size(), 4u);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes.back().find("--ranks 4"), std::string::npos);
  for (const auto& t : s.ranks) {
    for (const auto& op : t.ops) {
      if (op.kind == OpKind::kAllToAllV) {
        EXPECT_EQ(op.inSplits.size(), 4u);
      }
      if (op.kind == OpKind::kAllToAll) {
        EXPECT_EQ(op.count, 12u);  // 24 over 8 ranks: 3 per peer, 4 peers kept
      }
    }
  }
}

TEST(ReplayBadTraces, OpsFilterAndScaleSize) {
  TraceSetOptions o;
  o.traces = {data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")};
  o.kineto = data("kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz");
  o.ops = {OpKind::kAllReduce};
  TraceSet s = loadTraceSet(o);
  fitToWorld(s, 8, 0, 0.5);
  for (const auto& t : s.ranks) {
    ASSERT_EQ(t.ops.size(), 3u);
    EXPECT_EQ(t.ops[0].count, 197121u);  // 394241 / 2, rounded
    EXPECT_EQ(t.ops[0].recordedUs, -1);  // not a duration of this size
  }
  EXPECT_EQ(s.notes.size(), 2u);
}

// Mutated traces: every outcome is a parsed trace or a UsageError, never a crash or another
// exception.
TEST(ReplayFuzz, MutatedTracesNeverCrash) {
  std::mt19937_64 rng(2024);
  const std::vector<std::string> seeds{
      readTraceBytes(data("chakra-et/astra-sim-custom-ring-allreduce-8npus/custom_allreduce.3.et")),
      readTraceBytes(data("chakra-et/astra-sim-microbench-4npus/all_to_all/all_to_all.1.et")),
      R"J({"schema": "1.1.0-chakra.0.0.4", "nodes": [{"id": 4, "name": "## process_group:init ##",
        "inputs": {"values": ["[{\"pg_name\": \"0\", \"ranks\": [], \"group_size\": 2}]"],
        "types": ["String"]}}, {"id": 9, "name": "record_param_comms", "inputs": {"values":
        [[[1, 2, 0, 16, 4, "cuda:0"]], 3, ["0", "default_pg"], 0, "all_to_allv", [8, 8], [8, 8],
        0, 1, 2], "types": ["GenericList[Tensor(float)]"]}}]})J",
      R"J({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce",
        "tid": 1, "ts": 10, "dur": 5, "args": {"Input Dims": [[16]], "Input type": ["float"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 12,
        "dur": 1, "args": {"correlation": 7}}, {"ph": "X", "cat": "kernel", "name":
        "ncclKernel_AllReduce", "ts": 20, "dur": 3, "args": {"correlation": 7}}],
        "distributedInfo": {"rank": 0, "world_size": 2}})J"};
  int parsed = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string b = seeds[i % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = rng() % b.size();
      switch (rng() % 4) {
        case 0: b[at] = static_cast<char>(rng()); break;
        case 1: b.resize(at); break;
        case 2: b.insert(at, 1, static_cast<char>(rng())); break;
        default: b[at] = "0123456789[]{},:-\"'"[rng() % 19];
      }
      if (b.empty()) b.assign(1, 'x');
    }
    try {
      parseTrace("fuzz", b);
      ++parsed;
    } catch (const UsageError&) {
      ++refused;
    }
  }
  EXPECT_EQ(parsed + refused, 3000);
  EXPECT_GT(refused, 0);
}

// The same on real traces (fewer rounds: each is a whole file).
TEST(ReplayFuzz, MutatedRealTracesNeverCrash) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> seeds{
      readTraceBytes(data("pytorch-et/param-dlrm-8rank/dlrm_eg_2.json.gz")),
      readTraceBytes(
          data("kineto/param-dlrm-8rank/worker5_step_12.1694128201549.pt.trace.json.gz")),
      readTraceBytes(data("chakra-et/chakra-resnet-ddp/chakra.0.et.gz")).substr(0, 400000)};
  int outcomes = 0;
  for (int i = 0; i < 90; ++i) {
    std::string b = seeds[i % seeds.size()];
    for (int k = 0; k < 8; ++k) {
      const size_t at = rng() % b.size();
      if (rng() % 8 == 0) {
        b.resize(at);
      } else {
        b[at] = "0123456789[]{},:-\"'x"[rng() % 20];
      }
      if (b.empty()) b.assign(1, 'x');
    }
    try {
      parseTrace("fuzz", b);
    } catch (const UsageError&) {
    }
    ++outcomes;
  }
  EXPECT_EQ(outcomes, 90);
}

// Replays on a thread world: every op verified once, times gathered on rank 0.
ReplaySummary replayLocal(TraceSet s, int n, const std::string& algos, int64_t& wrong,
                          double gapScale = 0) {
  fitToWorld(s, n, s.oneTrace ? 0 : (n < s.recordedRanks ? n : 0), 1);
  ReplayOptions o;
  o.algos = cb::splitList(algos);
  o.iterations = 2;
  o.warmup = 1;
  o.gapScale = gapScale;
  o.timeoutSeconds = 120;
  ReplaySummary sum;
  std::mutex m;
  LocalWorld::run(n, [&](Communicator& comm) {
    Team team(comm);
    ReplayEngine engine(team, s, o);
    ReplayTimes t = engine.run();
    if (comm.rank() == 0) {
      std::lock_guard<std::mutex> lock(m);
      wrong = t.wrong;
      sum = summarizeReplay(s, t, Statistic::kMedian);
    }
  });
  return sum;
}

TEST(ReplayLocal, DlrmOnEightThreadsHonoursSplits) {
  TraceSet s = load({data("pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz")}, false,
                    data("kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz"));
  int64_t wrong = -1;
  ReplaySummary sum = replayLocal(s, 8, "ring", wrong);
  EXPECT_EQ(wrong, 0);
  int a2av = 0;
  for (const auto& r : sum.rows) {
    if (r.kind == OpKind::kAllToAllV) a2av += r.instances;
    EXPECT_GT(r.recordedUs, 0);
    EXPECT_EQ(r.samples.size(), static_cast<size_t>(r.instances) * 2);
  }
  EXPECT_EQ(a2av, 4);
  EXPECT_EQ(sum.commSamples.size(), 2u);
}

TEST(ReplayLocal, RingOfSendsAndReceivesOnEight) {
  int64_t wrong = -1;
  replayLocal(
      load({data("chakra-et/astra-sim-custom-ring-allreduce-8npus/custom_allreduce.{rank}.et")}), 8,
      "ring", wrong, 1);
  EXPECT_EQ(wrong, 0);
}

TEST(ReplayLocal, AstraSimOnFour) {
  for (const char* k : {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"}) {
    int64_t wrong = -1;
    replayLocal(load({data(std::string("chakra-et/astra-sim-microbench-4npus/") + k + "/" + k +
                           ".{rank}.et")}),
                4, "ring", wrong);
    EXPECT_EQ(wrong, 0) << k;
  }
}

TEST(ReplayLocal, ChakraAndResnetOnTwo) {
  int64_t wrong = -1;
  auto sum = replayLocal(load({data("chakra-et/chakra-resnet-ddp/chakra.0.et.gz")}, true), 2,
                         "ring,binomial", wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(sum.recordedCommUs, 0);
  wrong = -1;
  replayLocal(load({data("pytorch-et/param-resnet-ddp-2rank/resnet_2gpu_et.json.gz")}, true), 2,
              "ring,binomial", wrong);
  EXPECT_EQ(wrong, 0);
}

// A device variant's op time is its own (CUDA-event) time, not the host's clock around the
// blocking call, as `run` takes it. Here a ring allreduce whose calls report 250 us each.
class DeviceTimed final : public PreparedCollective {
 public:
  explicit DeviceTimed(std::unique_ptr<PreparedCollective> inner) : inner_(std::move(inner)) {}
  void run(const void* send, void* recv, Deadline d) override { inner_->run(send, recv, d); }
  std::optional<double> lastDeviceSeconds() const override { return 250e-6; }

 private:
  std::unique_ptr<PreparedCollective> inner_;
};

TEST(ReplayLocal, ADeviceCallIsTimedByTheDevice) {
  Registry r = Registry::builtin();
  VariantInfo v = *Registry::builtin().find(Collective::kAllReduce, "ring");
  v.name = "devtimed";
  v.backend = "test";
  const auto inner = v.prepare;
  v.prepare = [inner](Team& team, const CollArgs& args, const VariantOptions& vo) {
    return std::make_unique<DeviceTimed>(inner(team, args, vo));
  };
  r.add(v);
  TraceSet s = load({data("pytorch-et/param-resnet-ddp-2rank/resnet_2gpu_et.json.gz")}, true);
  fitToWorld(s, 2, 0, 1);
  ReplayOptions o;
  o.algos = {"devtimed", "binomial"};
  o.registry = &r;
  o.iterations = 2;
  o.warmup = 0;
  o.timeoutSeconds = 120;
  o.variant.schedule.transport = "local";
  ReplaySummary sum;
  int64_t wrong = -1;
  LocalWorld::run(2, [&](Communicator& comm) {
    Team team(comm);
    ReplayEngine engine(team, s, o);
    ReplayTimes t = engine.run();
    if (comm.rank() == 0) {
      wrong = t.wrong;
      sum = summarizeReplay(s, t, Statistic::kMedian);
    }
  });
  EXPECT_EQ(wrong, 0);
  int allreduces = 0;
  for (const auto& row : sum.rows) {
    if (row.kind != OpKind::kAllReduce) continue;
    ++allreduces;
    for (double sample : row.samples) EXPECT_DOUBLE_EQ(sample, 250e-6);
  }
  EXPECT_GT(allreduces, 0);
}

// A Kineto trace set alone replays too (all_to_allv as even all_to_all: Kineto has no splits).
TEST(ReplayLocal, KinetoAloneOnEight) {
  TraceSet s = load({data("kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz")});
  ASSERT_EQ(s.recordedRanks, 8);
  EXPECT_EQ(totals(s.ranks[3])["alltoall"].ops, 5);
  int64_t wrong = -1;
  ReplaySummary sum = replayLocal(s, 8, "ring", wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(sum.recordedCommUs, 0);
}

// Process groups become sub-teams: ranks {0,1} and {2,3} each run their group's ops (a 1.1.0 ET
// written here: the fixtures only use the world group).
TEST(ReplayLocal, ProcessGroupsRunOnSubTeams) {
  TraceSet s;
  s.name = "groups";
  for (int r = 0; r < 4; ++r) {
    const std::string g = r < 2 ? "1" : "2";
    const int peer = r ^ 1;
    std::string json = R"J({"schema": "1.1.0-chakra.0.0.4", "nodes": [
      {"id": 2, "name": "## process_group:init ##", "inputs": {"values": ["[{\"pg_name\": \"0\", \"ranks\": [], \"group_size\": 4}, {\"pg_name\": \"1\", \"ranks\": [0, 1], \"group_size\": 2}, {\"pg_name\": \"2\", \"ranks\": [2, 3], \"group_size\": 2}]"], "types": ["String"]}},
      {"id": 10, "name": "record_param_comms", "inputs": {"values": [[[1, 1, 0, 1000, 4,
       "cpu"]], 1, ["G", ""], 0, "allreduce", [], [], 0, 1, 2], "types":
       ["GenericList[Tensor(float)]"]}},
      {"id": 11, "name": "record_param_comms", "inputs": {"values": [[[1, 1, 0, 300, 8,
       "cpu"]], 2, ["G", ""], 1, "broadcast", [], [], 0, 1, 2], "types":
       ["GenericList[Tensor(long)]"]}},
      {"id": 12, "name": "record_param_comms", "inputs": {"values": [[[1, 1, 0, 24, 4, "cpu"]],
       3, ["G", ""], 0, "all_to_allv", [SPLITS], [SPLITS], 0, 1, 2], "types":
       ["GenericList[Tensor(int)]"]}},
      {"id": 13, "name": "record_param_comms", "inputs": {"values": [[[1, 1, 0, 64, 4, "cpu"]],
       4, ["0", ""], 0, "allreduce", [], [], 0, 1, 4], "types":
       ["GenericList[Tensor(float)]"]}},
      {"id": 14, "name": "record_param_comms", "inputs": {"values": [[[1, 1, 0, 5, 4, "cpu"]],
       5, ["0", ""], PEER, "send", [], [], 0, 1, 4], "types": ["GenericList[Tensor(float)]"]}},
      {"id": 15, "name": "record_param_comms", "inputs": {"values": [[[1, 1, 0, 5, 4, "cpu"]],
       6, ["0", ""], PEER, "recv", [], [], 0, 1, 4], "types": ["GenericList[Tensor(float)]"]}}
    ]})J";
    for (auto [from, to] : {std::pair<std::string, std::string>{"\"G\"", "\"" + g + "\""},
                            {"SPLITS", "12, 12"},
                            {"PEER", std::to_string(peer)}}) {
      for (size_t at = json.find(from); at != std::string::npos; at = json.find(from, at)) {
        json.replace(at, from.size(), to);
      }
    }
    s.ranks.push_back(parseTrace("groups." + std::to_string(r), json));
  }
  s.recordedRanks = 4;
  EXPECT_TRUE(s.ranks[1].ops[5].withPrevious);  // the recv goes with the send before it
  int64_t wrong = -1;
  ReplaySummary sum = replayLocal(s, 4, "ring,binomial", wrong);
  EXPECT_EQ(wrong, 0);
  int sub = 0;
  for (const auto& r : sum.rows) {
    if (r.group == "1" || r.group == "2") {
      EXPECT_EQ(r.nranks, 2) << opKindName(r.kind);
      ++sub;
    }
    if (r.group.empty() && r.kind == OpKind::kAllReduce) {
      EXPECT_EQ(r.nranks, 4);
    }
  }
  EXPECT_EQ(sub, 6);  // 3 op kinds x 2 groups
}

}  // namespace
}  // namespace cb::replay
