// The scale model on the real clusters measured at several scales (tests/data/scaling, sources in
// tests/data/SOURCES-scaling.md): fitted on the smallest scales of each set, it predicts the
// largest; the error at >= 1 GiB is printed per cluster (README, docs/PREDICT.md state it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/Error.h"
#include "core/Stats.h"
#include "predict/ScaleModel.h"
#include "predict/TimeTable.h"
#include "results/import/Import.h"

namespace cb::predict {
namespace {

std::string slurp(const std::string& name) {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/tests/data/scaling/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Size and out-of-place time of each nccl-tests row: the size three columns before the
// reduction, the time right after it (or after the root column when the row has one).
std::vector<Point> rowsOf(const std::string& text, Scale s, const std::string& name) {
  std::vector<Point> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    size_t r = 0;
    while (r < w.size() && w[r] != "sum" && w[r] != "none") ++r;
    if (r < 3 || r >= w.size()) continue;
    const size_t after = w.size() - r - 1;  // 8 without a root column, 9 with one
    out.push_back(
        {s, std::stoull(w[r - 3]), std::stod(w[r + (after == 9 ? 2 : 1)]), std::nullopt, name});
  }
  return out;
}

// The out-of-place points of one file: a size_bytes,time_us table or an nccl-tests log.
std::vector<Point> pointsOf(const std::string& name, Scale s, const std::string& coll) {
  const std::string text = slurp(name);
  EXPECT_FALSE(text.empty()) << name;
  std::vector<Point> out;
  if (looksLikeTimeTable(text)) {
    for (const auto& r : parseTimeTable(text, name))
      out.push_back({s, r.bytes, r.timeUs, std::nullopt, name});
    return out;
  }
  ImportOptions o;
  o.path = name;
  o.collective = coll;
  try {
    for (const auto& run : parseImport(text, ImportFormat::kAuto, o))
      for (const auto& r : run.results)
        if (r.placement != "in" && r.ok() && r.timeKnown)
          out.push_back({s, r.sizeBytes, r.timeUs, std::nullopt, name});
  } catch (const UsageError& e) {
    // The OCI logs print a count that is not size / 4 (107374124 for 4 GiB of floats) and the
    // p4dn table has a leading instance column: the importer refuses both, rightly. Their size
    // and out-of-place time are read here instead, and the test says so.
    std::printf("[cluster] %s: importer refused (%s); size and time read from the rows\n",
                name.c_str(), e.what());
    out = rowsOf(text, s, name);
  }
  EXPECT_FALSE(out.empty()) << name;
  return out;
}

struct Cluster {
  std::string name;
  Coll coll;
  bool nvls;
  std::vector<std::pair<std::string, Scale>> fitted;
  std::pair<std::string, Scale> target;
};

struct Outcome {
  std::vector<double> errors;  // |predicted - measured| / measured busbw at >= 1 GiB
  std::vector<Algo> algos;
};

Outcome predictCluster(const Cluster& c) {
  std::vector<Point> pts;
  for (const auto& [file, scale] : c.fitted) {
    auto p = pointsOf(file, scale, std::string(collName(c.coll)));
    pts.insert(pts.end(), p.begin(), p.end());
  }
  const ScaleFit fit = fitScaleModel(c.coll, pts, {.nvls = c.nvls, .netBusbwGBps = {}});
  Outcome out;
  const Scale t = c.target.second;
  std::string line;
  for (const Point& m : pointsOf(c.target.first, t, std::string(collName(c.coll)))) {
    if (m.bytes < (uint64_t{1} << 30)) continue;
    auto p = predictAt(fit, t, m.bytes);
    EXPECT_TRUE(p) << c.name << ": " << whyNot(fit, t);
    if (!p) continue;
    const double measured =
        static_cast<double>(m.bytes) / m.timeUs / 1e3 * busFactor(c.coll, t.ranks());
    const double err = (p->busbw - measured) / measured;
    out.errors.push_back(std::abs(err));
    out.algos.push_back(p->algo);
    line += " " + std::to_string(m.bytes >> 20) + "MiB " + std::string(algoName(p->algo)) + " " +
            std::to_string(static_cast<int>(std::lround(p->busbw))) + "/" +
            std::to_string(static_cast<int>(std::lround(measured))) + " " +
            std::to_string(static_cast<int>(std::lround(err * 100))) + "%;";
  }
  std::printf("[cluster] %s -> %s: median |error| %.1f%% over %zu size(s):%s\n", c.name.c_str(),
              t.name().c_str(), out.errors.empty() ? 0.0 : medianOf(out.errors) * 100,
              out.errors.size(), line.c_str());
  return out;
}

const std::vector<Cluster>& clusters() {
  static const std::vector<Cluster> all = {
      {"gj-aion 8x H100, IB 400G",
       Coll::kAllReduce,
       true,
       {{"gj-aion-h100-ib400-2nodes.txt", {2, 8, 1}}, {"gj-aion-h100-ib400-4nodes.txt", {4, 8, 1}}},
       {"gj-aion-h100-ib400-8nodes.txt", {8, 8, 1}}},
      {"CoreWeave GB200 NVL72",
       Coll::kAllReduce,
       true,
       {{"coreweave-gb200-nvl72-18nodes.txt", {18, 4, 18}},
        {"coreweave-gb200-nvl72-36nodes.txt", {36, 4, 18}}},
       {"coreweave-gb200-nvl72-360nodes.txt", {360, 4, 18}}},
      {"OCI GB200",
       Coll::kAllReduce,
       true,
       {{"oci-gb200-1nodes.txt", {1, 4, 16}},
        {"oci-gb200-2nodes.txt", {2, 4, 16}},
        {"oci-gb200-32nodes.txt", {32, 4, 16}}},
       {"oci-gb200-48nodes.txt", {48, 4, 16}}},
      {"AWS p4dn (under-performing)",
       Coll::kAllReduce,
       false,
       {{"aws-p4dn-1nodes.txt", {1, 8, 1}},
        {"aws-p4dn-2nodes.txt", {2, 8, 1}},
        {"aws-p4dn-3nodes.txt", {3, 8, 1}}},
       {"aws-p4dn-4nodes.txt", {4, 8, 1}}},
      {"OCI GB200 alltoall",
       Coll::kAllToAll,
       true,
       {{"oci-gb200-alltoall-1nodes.txt", {1, 4, 16}},
        {"oci-gb200-alltoall-2nodes.txt", {2, 4, 16}},
        {"oci-gb200-alltoall-16nodes.txt", {16, 4, 16}},
        {"oci-gb200-alltoall-32nodes.txt", {32, 4, 16}}},
       {"oci-gb200-alltoall-48nodes.txt", {48, 4, 16}}},
  };
  return all;
}

TEST(ScaleClusters, LargestScalePredictedFromTheSmallest) {
  std::vector<double> all;
  for (const Cluster& c : clusters()) {
    Outcome o = predictCluster(c);
    ASSERT_FALSE(o.errors.empty()) << c.name;
    all.insert(all.end(), o.errors.begin(), o.errors.end());
    const double median = medianOf(o.errors);
    if (c.name == "OCI GB200") {
      // The known miss (docs/PREDICT.md): at 3 NVLink domains NCCL 2.27.3 kept the 2-domain
      // bandwidth, where the model, as NCCL's tuning, halves the tree's network term beyond 2
      // nodes (which the CoreWeave set, NCCL 2.26.2, follows). Predicted ~45% low.
      EXPECT_EQ(o.algos.front(), Algo::kNvlsTree);
      EXPECT_GT(median, 0.15);
    } else {
      EXPECT_LE(median, 0.15) << c.name;
    }
  }
  ASSERT_FALSE(all.empty());
  std::printf("[cluster] all sets: median |error| %.1f%% over %zu size(s)\n", medianOf(all) * 100,
              all.size());
  EXPECT_LE(medianOf(all), 0.15);
}

}  // namespace
}  // namespace cb::predict
