// `collbench predict`: fits the scale model (predict/ScaleModel.h, docs/PREDICT.md) to points
// measured at small scale (logs, published tables or stored runs) and prints, per size, what a
// bigger target should give: time, algbw, busbw with the band of the fit's residuals, the
// algorithm it assumes, and the measured figure beside it where one is given.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/Command.h"
#include "cli/PredictInputs.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Stats.h"
#include "predict/ScaleModel.h"
#include "predict/TimeTable.h"
#include "results/PredictedShare.h"
#include "results/Store.h"
#include "results/export/Export.h"
#include "results/import/Import.h"

namespace cb::cli {
namespace {

using predict::Algo;
using predict::Coll;
using predict::Point;
using predict::Scale;

struct PredictArgs {
  std::string collective = "allreduce";
  std::vector<std::string> logs, runs, measured;
  std::string label, db = "collbench.db", json;
  std::string saveLabel = "prediction";
  std::string astraSim, simaiBusbw;  // the fit as the simulators' networks
  bool noDb = false;
  int nodes = 0, gpusPerNode = 0, ranks = 0, domainNodes = 1;
  bool nvls = false;
  double netBusbw = 0;
};

// Sizes at and above this are the ones the error summary counts (the yardstick: a
// cluster's bandwidth, not its latency).
constexpr uint64_t kLargeBytes = uint64_t{1} << 30;

std::string gbps(double usPerByte) { return fmt::format("{:.1f} GB/s", 1.0 / (usPerByte * 1e3)); }

std::string describeFit(const predict::FittedAlgo& f, const std::vector<Point>& points) {
  std::set<std::string> scales;
  for (size_t i : f.points) scales.insert(points[i].scale.name());
  std::string terms;
  for (const auto& t : f.terms) {
    if (t.coef == 0) continue;
    terms += fmt::format("{}{} {}", terms.empty() ? "" : ", ", t.name,
                         t.bandwidth ? gbps(t.coef) : fmt::format("{:.2f} us", t.coef));
  }
  if (f.netGiven) terms += " (network term given by --net-busbw)";
  std::string where;
  for (const auto& s : scales) where += (where.empty() ? "" : ", ") + s;
  return fmt::format("{}: {} point(s) at {}: {}; residuals {:+.1f}% .. {:+.1f}%",
                     predict::algoName(f.algo), f.points.size(), where.empty() ? "-" : where, terms,
                     f.lo * 100, f.hi * 100);
}

// The fit at a scale as the exporters' alpha-beta form (results/export, docs/EXPORT.md): alpha
// the model's time of the algorithm it picks at `largest` bytes taken at 1 byte, busbw what the
// rest of that time carries; the fit's points, sizes and residuals as its error.
std::optional<AlphaBetaFit> simulatorFit(const predict::ScaleFit& fit, const Scale& s,
                                         uint64_t largest, const std::string& linkClass) {
  auto p = predict::predictAt(fit, s, largest);
  if (!p) return std::nullopt;
  const predict::FittedAlgo* algo = fit.find(p->algo);
  auto alpha = predict::algoTimeUs(*algo, fit.coll, s, 1);
  if (!alpha || !(p->timeUs > *alpha)) return std::nullopt;
  AlphaBetaFit f;
  f.linkClass = linkClass;
  f.collective = std::string(predict::collName(fit.coll));
  f.variant = fmt::format("predict:{}", predict::algoName(p->algo));
  f.nranks = s.ranks();
  f.nodes = s.ncclNodes();
  f.points = static_cast<int>(algo->points.size());
  f.minBytes = f.maxBytes = largest;
  for (size_t i : algo->points) {
    f.minBytes = std::min<uint64_t>(f.minBytes, fit.points[i].bytes);
    f.maxBytes = std::max<uint64_t>(f.maxBytes, fit.points[i].bytes);
  }
  f.alphaUs = *alpha;
  f.busGbps = static_cast<double>(largest) * predict::busFactor(fit.coll, s.ranks()) /
              (p->timeUs - *alpha) / 1e3;
  double sq = 0;
  for (double r : algo->residuals) {
    sq += r * r;
    f.maxRelError = std::max(f.maxRelError, std::abs(r));
  }
  f.rmsRelError = algo->residuals.empty() ? 0 : std::sqrt(sq / algo->residuals.size());
  return f;
}

// A prediction is a run of source "predict" at the target's world size: `run` and `import` at
// that size say how they compare (results/PredictedShare.h); compare and gate read it as any run.
void storePrediction(const PredictArgs& a, const Scale& target, const nlohmann::json& doc,
                     std::vector<ResultRecord>& results) {
  Store store = Store::open(a.db);
  RunRecord run;
  run.label = a.saveLabel;
  run.source = kPredictionSource;
  run.commandLine = fmt::format("predict {} at {}", a.collective, target.name());
  run.worldSize = target.ranks();
  run.worldKind = "predicted";
  run.status = RunStatus::kRunning;
  run.environmentJson = doc.dump();
  const int64_t id = store.beginRun(run);
  try {
    for (auto& r : results) r.runId = id;
    store.addResults(results);
    store.finishRun(id, RunStatus::kOk);
  } catch (...) {
    try {
      store.finishRun(id, RunStatus::kInterrupted);
    } catch (const Error&) {
    }
    throw;
  }
  fmt::print("# stored as prediction run {} ({} ranks, label {}) in {}\n", id, target.ranks(),
             a.saveLabel, a.db);
}

int runPredict(const PredictArgs& a) {
  // Every flag is checked before a file is read or the database opened.
  const auto coll = predict::parseColl(a.collective);
  if (!coll) {
    throw UsageError(fmt::format(
        "predict: collective '{}' is not one of allreduce, allgather, reduce_scatter, alltoall",
        a.collective));
  }
  if (a.logs.empty() && a.runs.empty() && a.label.empty()) {
    throw UsageError("predict: nothing to fit: give --log SCALE:FILE, --run ID or --label");
  }
  if (a.domainNodes < 1) throw UsageError("predict: --domain-nodes must be 1 or more");
  if (a.netBusbw < 0) throw UsageError("predict: --net-busbw must be positive");
  if (!a.json.empty()) checkOutputPath(a.json, "--json");
  if (!a.astraSim.empty()) checkOutputPath(a.astraSim, "--astra-sim");
  if (!a.simaiBusbw.empty()) checkOutputPath(a.simaiBusbw, "--simai-busbw");
  struct Source {
    std::optional<Scale> scale;
    std::string what;
  };
  std::vector<Source> logs, runs;
  for (const auto& l : a.logs) {
    auto [s, f] = splitScale(l, a.domainNodes, false, "--log");
    logs.push_back({s, f});
  }
  for (const auto& r : a.runs) {
    auto [s, id] = splitScale(r, a.domainNodes, true, "--run");
    (void)parsePositive(id, "run id");
    runs.push_back({s, id});
  }
  int gpn = a.gpusPerNode;
  if (gpn == 0 && !logs.empty()) gpn = logs.front().scale->gpusPerNode;
  if (gpn == 0 && !runs.empty() && runs.front().scale) gpn = runs.front().scale->gpusPerNode;
  if (a.nodes == 0 && a.ranks == 0) {
    throw UsageError("predict: no target: give --nodes N (and --gpus-per-node) or --ranks");
  }
  if (a.nodes > 0 && a.ranks > 0) throw UsageError("predict: give --nodes or --ranks, not both");
  if (gpn == 0) throw UsageError("predict: give --gpus-per-node for the target");
  Scale target;
  target.gpusPerNode = gpn;
  target.domainNodes = a.domainNodes;
  target.nodes = a.nodes;
  if (a.ranks > 0) {
    if (a.ranks % gpn != 0) {
      throw UsageError(
          fmt::format("predict: --ranks {} is not a whole number of {}-GPU nodes", a.ranks, gpn));
    }
    target.nodes = a.ranks / gpn;
  }
  if (target.ranks() % target.ncclNodes() != 0) {
    throw UsageError(fmt::format("predict: {} nodes do not split into NVLink domains of {}",
                                 target.nodes, a.domainNodes));
  }

  std::vector<Point> points;
  for (const auto& l : logs) readPoints(l.what, *l.scale, *coll, points);
  std::vector<Point> measured;
  for (const auto& m : a.measured) readPoints(m, target, *coll, measured);
  if (!runs.empty() || !a.label.empty()) {
    Store store = Store::open(a.db, false);
    std::vector<std::pair<std::optional<Scale>, RunRecord>> picked;
    for (const auto& r : runs) {
      const int64_t id = parsePositive(r.what, "run id");
      auto run = store.findRun(id);
      if (!run) throw UsageError(fmt::format("predict: no run {} in {}", id, a.db));
      picked.emplace_back(r.scale, *run);
    }
    if (!a.label.empty()) {
      RunFilter f;
      f.label = a.label;
      for (auto& run : store.listRuns(f)) picked.emplace_back(std::nullopt, run);
      if (picked.size() == runs.size()) {
        throw UsageError(fmt::format("predict: no run labelled '{}' in {}", a.label, a.db));
      }
    }
    for (auto& [scale, run] : picked) {
      const std::string source = fmt::format("run {}", run.id);
      Scale s;
      if (scale) {
        s = *scale;
      } else {
        const int hosts =
            run.hosts.empty()
                ? 0
                : 1 + static_cast<int>(std::count(run.hosts.begin(), run.hosts.end(), ','));
        // An imported log names the hosts of the device lines it shows, which publishers cut.
        if (run.worldKind == "imported") {
          throw UsageError(
              fmt::format("predict: {} was imported: its log's host list may be cut; give --run "
                          "NODESxGPUS:{}",
                          source, run.id));
        }
        if (hosts == 0 || run.worldSize <= 0 || run.worldSize % hosts != 0) {
          throw UsageError(
              fmt::format("predict: {}: its record does not say its nodes and GPUs: give --run "
                          "NODESxGPUS:{}",
                          source, run.id));
        }
        s = {hosts, run.worldSize / hosts, a.domainNodes};
      }
      addResults(store.results(run.id), *coll, s, source, points);
    }
  }

  predict::ClusterTraits traits;
  traits.nvls = a.nvls;
  if (a.netBusbw > 0) traits.netBusbwGBps = a.netBusbw;
  const predict::ScaleFit fit = predict::fitScaleModel(*coll, points, traits);

  // The rule, checked where the fit's own points say which algorithm ran.
  size_t agree = 0, judged = 0, recordedAgree = 0, recorded = 0;
  std::vector<std::string> disagreements;
  for (size_t i = 0; i < fit.points.size(); ++i) {
    if (!fit.labels[i]) continue;
    const Point& p = fit.points[i];
    auto pick = predict::predictAt(fit, p.scale, p.bytes);
    const bool same = pick && pick->algo == *fit.labels[i];
    ++judged;
    agree += same;
    if (p.recorded) {
      ++recorded;
      recordedAgree += same;
    }
    if (!same && disagreements.size() < 5) {
      disagreements.push_back(fmt::format("{} at {} {}: ran {} ({}), the rule picks {}", p.source,
                                          p.scale.name(), formatSize(p.bytes),
                                          predict::algoName(*fit.labels[i]), fit.why[i],
                                          pick ? predict::algoName(pick->algo) : "nothing"));
    }
  }

  std::set<uint64_t> sizes;
  for (const auto& p : points) sizes.insert(p.bytes);
  std::map<uint64_t, double> measuredAt;
  for (const auto& m : measured) {
    sizes.insert(m.bytes);
    measuredAt[m.bytes] = m.timeUs;
  }

  fmt::print("# predict {} at {} ({} ranks, {} NCCL node{}) from {} point(s)\n",
             predict::collName(*coll), target.name(), target.ranks(), target.ncclNodes(),
             target.ncclNodes() == 1 ? "" : "s", points.size());
  for (const auto& f : fit.algos) fmt::print("# fit {}\n", describeFit(f, fit.points));
  for (size_t i = 0; i < fit.points.size(); ++i) {
    if (!fit.labels[i]) {
      fmt::print("# not fitted: {} {}: {}\n", fit.points[i].source, formatSize(fit.points[i].bytes),
                 fit.why[i]);
    }
  }
  fmt::print(
      "# rule: the algorithm at each size is the fastest the fit allows there (NCCL's rule over "
      "its cost model); at the fitted points it is the one that ran at {} of {}",
      agree, judged);
  if (recorded > 0) {
    fmt::print(" ({} of {} recorded by --nccl-choice)", recordedAgree, recorded);
  }
  fmt::print("\n");
  for (const auto& d : disagreements) fmt::print("#   differs: {}\n", d);

  nlohmann::json doc;
  doc["format"] = "collbench-predict";
  doc["version"] = 1;
  doc["collective"] = predict::collName(*coll);
  doc["target"] = {{"nodes", target.nodes},
                   {"gpus_per_node", target.gpusPerNode},
                   {"domain_nodes", target.domainNodes},
                   {"ranks", target.ranks()},
                   {"nccl_nodes", target.ncclNodes()}};
  doc["fit"] = nlohmann::json::array();
  for (const auto& f : fit.algos) {
    nlohmann::json terms = nlohmann::json::array();
    for (const auto& t : f.terms) {
      terms.push_back({{"name", t.name},
                       {"kind", t.bandwidth ? "bandwidth" : "latency"},
                       {"coef_us", t.coef},
                       {"gbps", t.bandwidth && t.coef > 0 ? nlohmann::json(1.0 / (t.coef * 1e3))
                                                          : nlohmann::json(nullptr)}});
    }
    doc["fit"].push_back({{"algo", predict::algoName(f.algo)},
                          {"points", f.points.size()},
                          {"terms", terms},
                          {"residual_lo", f.lo},
                          {"residual_hi", f.hi},
                          {"net_given", f.netGiven}});
  }
  doc["rule"] = {
      {"agree", agree}, {"of", judged}, {"recorded_agree", recordedAgree}, {"recorded", recorded}};
  doc["sizes"] = nlohmann::json::array();

  const auto factor = predict::busFactor(*coll, target.ranks());
  fmt::print("{:>12} {:>9} {:>11} {:>8} {:>8} {:>17} {:>10} {:>8}\n", "size(B)", "algo", "time(us)",
             "algbw", "busbw", "busbw band", "measured", "diff");
  std::vector<double> largeErrors;
  std::vector<ResultRecord> stored;
  bool any = false;
  for (uint64_t bytes : sizes) {
    auto p = predict::predictAt(fit, target, bytes);
    if (!p) continue;
    any = true;
    nlohmann::json row = {{"bytes", bytes},          {"algo", predict::algoName(p->algo)},
                          {"time_us", p->timeUs},    {"time_lo_us", p->timeLo},
                          {"time_hi_us", p->timeHi}, {"algbw", p->algbw},
                          {"busbw", p->busbw},       {"busbw_lo", p->busLo},
                          {"busbw_hi", p->busHi}};
    for (const auto& c : p->candidates)
      row["candidates_us"][std::string(predict::algoName(c.algo))] = c.timeUs;
    std::string meas = "-", diff = "-";
    if (auto m = measuredAt.find(bytes); m != measuredAt.end()) {
      const double mb = static_cast<double>(bytes) / m->second / 1e3 * factor;
      const double err = (p->busbw - mb) / mb;
      meas = fmt::format("{:.2f}", mb);
      diff = fmt::format("{:+.1f}%", err * 100);
      row["measured_busbw"] = mb;
      row["error"] = err;
      if (bytes >= kLargeBytes) largeErrors.push_back(std::abs(err));
    }
    fmt::print("{:>12} {:>9} {:>11.1f} {:>8.2f} {:>8.2f} {:>17} {:>10} {:>8}\n", bytes,
               predict::algoName(p->algo), p->timeUs, p->algbw, p->busbw,
               fmt::format("{:.1f}-{:.1f}", p->busLo, p->busHi), meas, diff);
    doc["sizes"].push_back(row);
    ResultRecord r;
    r.collective = std::string(predict::collName(*coll));
    r.variant = fmt::format("predict:{}", predict::algoName(p->algo));
    r.sizeBytes = bytes;
    r.placement = "out";
    r.nranks = target.ranks();
    r.timeUs = r.medianUs = p->timeUs;
    r.statistic = "predicted";
    r.minUs = p->timeLo;  // the band of the fit's residuals
    r.maxUs = p->timeHi;
    r.algbw = p->algbw;
    r.busbw = p->busbw;
    r.message = fmt::format("predicted {}; busbw band {:.1f}-{:.1f} GB/s",
                            predict::algoName(p->algo), p->busLo, p->busHi);
    stored.push_back(std::move(r));
  }
  if (!any) throw UsageError("predict: " + predict::whyNot(fit, target));
  if (!largeErrors.empty()) {
    const double med = medianOf(largeErrors);
    fmt::print("# median |error| at >= 1 GiB: {:.1f}% over {} size(s)\n", med * 100,
               largeErrors.size());
    doc["median_abs_error_ge_1GiB"] = med;
  }
  if (!a.json.empty()) writeOutputFile(a.json, doc.dump(2) + "\n", "--json");
  if (!a.astraSim.empty() || !a.simaiBusbw.empty()) {
    std::vector<AlphaBetaFit> nets;
    Scale node = target;
    node.nodes = std::min(target.nodes, target.domainNodes);  // one NVLink domain
    const uint64_t largest = *sizes.rbegin();
    if (auto f = simulatorFit(fit, node, largest, "nvlink")) nets.push_back(*f);
    if (target.ncclNodes() > 1) {
      if (auto f = simulatorFit(fit, target, largest, "network")) nets.push_back(*f);
    }
    if (nets.empty()) throw UsageError("predict: the fit gives no network for the simulators");
    if (!a.astraSim.empty()) writeOutputFile(a.astraSim, astraSimNetworkYaml(nets), "--astra-sim");
    if (!a.simaiBusbw.empty()) {
      writeOutputFile(a.simaiBusbw, simaiBusbwYaml(nets), "--simai-busbw");
    }
  }
  if (!a.noDb) storePrediction(a, target, doc, stored);
  return 0;
}

}  // namespace

void setupPredictCommand(CLI::App* sub, Action& action) {
  auto args = std::make_shared<PredictArgs>();
  sub->add_option("collective", args->collective,
                  "allreduce, allgather, reduce_scatter or alltoall")
      ->capture_default_str();
  sub->add_option("--log", args->logs,
                  "NODESxGPUS:FILE, a log (nccl-tests, OSU, IMB) or a size_bytes,time_us table "
                  "measured at that scale, to fit (repeat)");
  sub->add_option("--run", args->runs,
                  "[NODESxGPUS:]ID, a stored run to fit (its scale from its hosts unless given)");
  sub->add_option("--label", args->label, "Fit every stored run with this label");
  addDbOption(sub, args->db);
  sub->add_option("--nodes", args->nodes, "Target: nodes")->check(CLI::PositiveNumber);
  sub->add_option("--gpus-per-node", args->gpusPerNode,
                  "Target: GPUs (ranks) per node (default: the first input's)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--ranks", args->ranks, "Target: ranks, instead of --nodes")
      ->check(CLI::PositiveNumber);
  sub->add_option("--domain-nodes", args->domainNodes,
                  "Nodes per NVLink domain (multi-node NVLink, such as 18 trays of a GB200 "
                  "NVL72): NCCL counts a domain as one node")
      ->capture_default_str();
  sub->add_flag("--nvls", args->nvls,
                "The nodes have NVSwitch with NVLS: assume NVLS on one node and NVLSTree on two "
                "where no --nccl-choice recorded the algorithm");
  sub->add_option("--net-busbw", args->netBusbw,
                  "The ring's busbw over the network in GB/s (NICs x rate of a node), when no "
                  "measured scale above 2 nodes gives it");
  sub->add_option("--measured", args->measured,
                  "FILE measured at the target scale, shown beside the prediction (not fitted)");
  sub->add_option("--json", args->json, "Write the fit and the prediction as JSON");
  sub->add_option("--astra-sim", args->astraSim,
                  "Write the fit at the target as ASTRA-sim's analytical network YAML (a node's "
                  "NVLink dimension, the network's)");
  sub->add_option("--simai-busbw", args->simaiBusbw,
                  "Write the fit at the target as SimAI's busbw.yaml");
  sub->add_flag("--no-db", args->noDb, "Do not store the prediction");
  sub->add_option("--save-label", args->saveLabel, "Label of the stored prediction")
      ->capture_default_str();
  runOnParse(sub, action, args, runPredict);
}

}  // namespace cb::cli
