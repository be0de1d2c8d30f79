// Exports for other tools (results/export): Inspector's vocabulary, the NCCL tuner plugin's two
// CSV forms read back by a small parser, the alpha-beta fit and the simulator files. The runs are
// built here from stated numbers (synthetic, not measured), so every expected value is known.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "common/Lines.h"
#include "core/Error.h"
#include "results/export/Export.h"

namespace cb {
namespace {

std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, sep)) out.push_back(f);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

std::vector<std::string> dataLines(const std::string& text) {
  std::vector<std::string> out = test::splitLines(text);
  std::erase_if(out, [](const std::string& line) { return line.empty() || line[0] == '#'; });
  return out;
}

ResultRecord result(const std::string& coll, const std::string& variant, uint64_t size,
                    double timeUs, int nranks, double busFactor) {
  ResultRecord r;
  r.collective = coll;
  r.variant = variant;
  r.dtype = "float";
  r.op = "sum";
  r.sizeBytes = size;
  r.placement = "out";
  r.nranks = nranks;
  r.timeUs = r.medianUs = timeUs;
  r.algbw = size / timeUs * 1e-3;
  r.busbw = *r.algbw * busFactor;
  return r;
}

ExportRun runOf(std::vector<ResultRecord> results, const std::string& cls, int nodes, int world) {
  ExportRun er;
  er.run.id = 7;
  er.run.host = "node1";
  er.run.hosts = nodes == 1 ? "node1" : "node1,node2";
  er.run.worldSize = world;
  er.run.label = "lab\"el";
  er.results = std::move(results);
  er.linkClass = cls;
  er.nodes = nodes;
  er.slurmJobId = "42";
  return er;
}

// A forced-pair sweep on 8 ranks of 1 node: Tree/LL wins small sizes, Ring/Simple large ones.
std::vector<ExportRun> tunerSweep() {
  std::vector<ResultRecord> rs;
  const double f = 2.0 * 7 / 8;
  for (uint64_t size : {1024ull, 65536ull, 1048576ull, 67108864ull}) {
    const double s = static_cast<double>(size);
    rs.push_back(result("allreduce", "nccl:Tree/LL", size, 10 + s / 2000.0, 8, f));
    rs.push_back(result("allreduce", "nccl:Ring/Simple", size, 30 + s / 20000.0, 8, f));
    rs.push_back(result("allreduce", "nccl:Ring/auto", size, 1, 8, f));  // not forced: left out
    rs.push_back(result("allreduce", "nccl", size, 1, 8, f));            // NCCL's choice
  }
  return {runOf(rs, "nvlink", 1, 8)};
}

TEST(ExportInspector, NamesAndSizeBuckets) {
  EXPECT_EQ(inspectorCollectiveName("allreduce"), "AllReduce");
  EXPECT_EQ(inspectorCollectiveName("reduce_scatter"), "ReduceScatter");
  EXPECT_EQ(inspectorCollectiveName("alltoall"), "All2All");
  EXPECT_EQ(inspectorCollectiveName("latency"), "");
  EXPECT_EQ(collectiveFromInspector("AllGather"), "allgather");
  EXPECT_FALSE(collectiveFromInspector("Send"));
  // Inspector's README example: 4 GiB and more, below 5 GiB -> "4-5GB".
  EXPECT_EQ(inspectorMessageSizeBucket(4ull << 30), "4-5GB");
  EXPECT_EQ(inspectorMessageSizeBucket((9ull << 29) - 1), "4-5GB");
  EXPECT_EQ(inspectorMessageSizeBucket(64ull << 20), "64-65MB");
  EXPECT_EQ(inspectorMessageSizeBucket(1023), "1023-1024B");
  EXPECT_EQ(inspectorMessageSizeBucket(1024), "1-2KB");
  EXPECT_EQ(inspectorMessageSizeBucket(0), "0B");
}

TEST(ExportTuner, VariantNamesMapToThePluginsSpelling) {
  auto c = tunerChoiceOfVariant("nccl:CollNetDirect/LL128");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algorithm, "collnet_direct");
  EXPECT_EQ(c->protocol, "ll128");
  EXPECT_EQ(tunerChoiceOfVariant("nccl:NVLSTree/Simple")->algorithm, "nvls_tree");
  EXPECT_FALSE(tunerChoiceOfVariant("nccl:Ring/auto"));
  EXPECT_FALSE(tunerChoiceOfVariant("nccl:auto/LL"));
  EXPECT_FALSE(tunerChoiceOfVariant("nccl"));
  EXPECT_FALSE(tunerChoiceOfVariant("ring"));
}

TEST(ExportTuner, PerformanceDataRoundTrips) {
  const std::string csv = ncclTunerData(tunerSweep());
  std::vector<std::string> lines = dataLines(csv);
  ASSERT_EQ(lines.size(), 1u + 8u);  // header + 4 sizes x 2 forced pairs
  EXPECT_EQ(lines[0],
            "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,"
            "cost_metric,bandwidth_gbps,latency_us");
  std::map<std::string, size_t> col;
  auto header = split(lines[0]);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i]);
    ASSERT_EQ(f.size(), header.size()) << lines[i];
    EXPECT_EQ(f[col["collective"]], "allreduce");
    EXPECT_EQ(f[col["nodes"]], "1");
    EXPECT_EQ(f[col["ranks"]], "8");
    EXPECT_EQ(f[col["channels"]], "-1");
    const double size = std::stod(f[col["size_bytes"]]);
    const double lat = std::stod(f[col["latency_us"]]);
    const std::string pair = f[col["algorithm"]] + "/" + f[col["protocol"]];
    ASSERT_TRUE(pair == "tree/ll" || pair == "ring/simple") << pair;
    const double expected = pair == "tree/ll" ? 10 + size / 2000.0 : 30 + size / 20000.0;
    EXPECT_NEAR(lat, expected, 1e-9 * expected);
    EXPECT_NEAR(std::stod(f[col["bandwidth_gbps"]]), size / expected * 1e-3 * 1.75, 1e-6);
  }
}

TEST(ExportTuner, ConfigCoversEverySizeWithTheFastestPair) {
  std::vector<std::string> rows = dataLines(ncclTunerConf(tunerSweep()));
  // Tree/LL wins at 1 KiB (10.5 vs 30.1 us), Ring/Simple at 64 KiB (42.8 vs 33.3 us) and above:
  // tree/ll up to 1024, then ring/simple to the plugin's largest size (three ranges merged).
  ASSERT_EQ(rows.size(), 2u);
  auto a = split(rows[0]), b = split(rows[1]);
  ASSERT_EQ(a.size(), 10u);
  ASSERT_EQ(b.size(), 10u);
  EXPECT_EQ(rows[0], "allreduce,0,1024,tree,ll,-1,1,8,-1,-1");
  EXPECT_EQ(rows[1], "allreduce,1025,4294967295,ring,simple,-1,1,8,-1,-1");
}

TEST(ExportTuner, NoForcedColumnsIsAUsageError) {
  std::vector<ExportRun> runs{runOf({result("allreduce", "ring", 1024, 5, 2, 1)}, "numa", 1, 2)};
  EXPECT_THROW(ncclTunerData(runs), UsageError);
  EXPECT_THROW(ncclTunerConf(runs), UsageError);
}

// Exact alpha-beta data: the fit finds alpha and B with no error; noise shows as fit error.
TEST(ExportSimulators, FitRecoversAlphaAndBusBandwidth) {
  const int n = 4;
  const double f = 2.0 * (n - 1) / n;
  std::vector<ResultRecord> exact, noisy;
  int k = 0;
  for (uint64_t size = 1024; size <= (64u << 20); size *= 4, ++k) {
    const double t = 8.0 + size * f / (12.5 * 1e3);  // alpha 8 us, busbw 12.5 GB/s
    exact.push_back(result("allreduce", "ring", size, t, n, f));
    noisy.push_back(result("allreduce", "ring", size, t * (k % 2 ? 1.1 : 0.9), n, f));
  }
  std::vector<ExportRun> runs{runOf(exact, "numa", 1, n), runOf(noisy, "network", 2, n)};
  std::vector<AlphaBetaFit> fits = fitAlphaBeta(runs);
  ASSERT_EQ(fits.size(), 2u);
  const AlphaBetaFit& inner = fits[0].linkClass == "numa" ? fits[0] : fits[1];
  const AlphaBetaFit& outer = fits[0].linkClass == "numa" ? fits[1] : fits[0];
  EXPECT_NEAR(inner.alphaUs, 8.0, 1e-6);
  EXPECT_NEAR(inner.busGbps, 12.5, 1e-6);
  EXPECT_LT(inner.maxRelError, 1e-9);
  EXPECT_EQ(inner.points, 9);  // 1 KiB to 64 MiB by 4
  EXPECT_GT(outer.rmsRelError, 0.05);
  EXPECT_LE(outer.maxRelError, 0.2);

  const std::string astra = astraSimNetworkYaml(fits);
  EXPECT_NE(astra.find("topology: [ Ring, Ring ]"), std::string::npos) << astra;
  // 4 ranks on the one host of the numa run; 2 hosts for the network dimension.
  EXPECT_NE(astra.find("npus_count: [ 4, 2 ]"), std::string::npos) << astra;
  EXPECT_NE(astra.find("bandwidth: [ 12.5, "), std::string::npos) << astra;
  // alpha 8 us over 2(n-1) = 6 ring steps: 1333.33 ns per link.
  EXPECT_NE(astra.find("latency: [ 1333.33, "), std::string::npos) << astra;
  EXPECT_NE(astra.find("fit error rms 0.0% max 0.0%"), std::string::npos) << astra;

  const std::string simai = simaiBusbwYaml(fits);
  EXPECT_EQ(simai.rfind("collbench\nTP:\nallreduce,: 12.5\nallgather,: null\n", 0), 0u) << simai;
  EXPECT_NE(simai.find("DP:\nallreduce,: "), std::string::npos);
  EXPECT_NE(simai.find("PP:\nbusbw: null\n"), std::string::npos);

  const std::string csv = fitsCsv(fits);
  EXPECT_EQ(dataLines(csv).size(), 3u);
}

// Two rank threads on a loaded 2-core machine (a CI run): the small sizes came out slower than
// one another, the larger ones at milliseconds. Fitted as measured, the slope is negative and
// the row was dropped; over the lower envelope (no size slower than a larger one was) the fit is
// kept, and its error, against the points as measured, says how poor it is.
TEST(ExportSimulators, NoisySmallSizesDoNotDropTheFit) {
  const int n = 2;
  const std::vector<std::pair<uint64_t, double>> seen{{1024, 12.19},     {4096, 10.81},
                                                      {16384, 7.55},     {65536, 1707.68},
                                                      {262144, 4803.67}, {1048576, 2948.02}};
  std::vector<ResultRecord> rs;
  for (auto [size, t] : seen) rs.push_back(result("allreduce", "ring", size, t, n, 1.0));
  std::vector<std::string> leftOut;
  std::vector<AlphaBetaFit> fits = fitAlphaBeta({runOf(rs, "core-group", 1, n)}, &leftOut);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_TRUE(leftOut.empty());
  EXPECT_GT(fits[0].busGbps, 0);
  EXPECT_GT(fits[0].rmsRelError, 0.3);
}

TEST(ExportSimulators, ATimeThatDoesNotGrowIsLeftOutAndNamed) {
  const int n = 2;
  std::vector<ResultRecord> flat, good;
  for (uint64_t size = 1024; size <= (1u << 20); size *= 4) {
    flat.push_back(result("allgather", "ring", size, 4000, n, 0.5));
    good.push_back(result("allreduce", "ring", size, 4.0 + size / (10.0 * 1e3), n, 1.0));
  }
  std::vector<std::string> leftOut;
  std::vector<AlphaBetaFit> fits =
      fitAlphaBeta({runOf(flat, "core-group", 1, n), runOf(good, "core-group", 1, n)}, &leftOut);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].collective, "allreduce");
  ASSERT_EQ(leftOut.size(), 1u);
  EXPECT_EQ(leftOut[0],
            "allgather ring on 2 ranks (core-group): left out, its time does not grow with size "
            "(1024..1048576 B)");
}

TEST(ExportSimulators, OnlyFlatTimesSayWhyNothingIsFitted) {
  std::vector<ResultRecord> flat;
  for (uint64_t size = 1024; size <= 4096; size *= 2) {
    flat.push_back(result("allgather", "ring", size, 4000, 2, 0.5));
  }
  try {
    fitAlphaBeta({runOf(flat, "core-group", 1, 2)});
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "export: nothing to fit: allgather ring on 2 ranks (core-group): left out, its "
                 "time does not grow with size (1024..4096 B)");
  }
}

TEST(ExportSimulators, OneSizeIsNothingToFit) {
  std::vector<ExportRun> runs{runOf({result("allreduce", "ring", 1024, 5, 2, 1)}, "numa", 1, 2)};
  EXPECT_THROW(fitAlphaBeta(runs), UsageError);
}

TEST(ExportPrometheus, InspectorLabelsAndEscaping) {
  std::vector<ExportRun> runs = tunerSweep();
  runs[0].results.push_back(result("allreduce", "ring", 64u << 20, 1000, 8, 1.75));
  runs[0].results.back().status = ResultStatus::kUnsupported;  // left out
  const std::string text = prometheusText(runs);
  EXPECT_NE(text.find("# TYPE collbench_bus_bandwidth_gbs gauge\n"), std::string::npos);
  EXPECT_NE(
      text.find("collective=\"AllReduce\",message_size=\"64-65MB\",algo_proto=\"ring_simple\""),
      std::string::npos);
  EXPECT_NE(text.find("slurm_job_id=\"42\",node=\"node1\",n_nodes=\"1\",nranks=\"8\""),
            std::string::npos);
  EXPECT_NE(text.find("label=\"lab\\\"el\""), std::string::npos);
  EXPECT_NE(text.find("stat=\"median\"}"), std::string::npos);
  EXPECT_EQ(text.find("variant=\"ring\""), std::string::npos);
}

}  // namespace
}  // namespace cb
