#include "cli/ReplayPredict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/PredictInputs.h"
#include "core/Error.h"
#include "predict/ScaleModel.h"

namespace cb::cli {
namespace {

using predict::Coll;
using replay::OpKind;

std::optional<Coll> modelled(OpKind k) {
  switch (k) {
    case OpKind::kAllReduce: return Coll::kAllReduce;
    case OpKind::kAllGather: return Coll::kAllGather;
    case OpKind::kReduceScatter: return Coll::kReduceScatter;
    case OpKind::kAllToAll:
    case OpKind::kAllToAllV: return Coll::kAllToAll;  // v: as even, at its send buffer's size
    default: return std::nullopt;
  }
}

struct KindRow {
  int from = 0, to = 0;
  size_t calls = 0;
  uint64_t bytes = 0;
  double recordedUs = 0, predictedUs = 0;
  bool kept = false;  // not modelled: the recorded time kept
};

}  // namespace

void ScalePredictFlags::add(CLI::App* sub) {
  sub->add_option("--predict-ranks", ranks,
                  "Predict the step at this many ranks from the scale model (no replay; "
                  "docs/PREDICT.md)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--fit", fits,
                  "--predict-ranks: COLL=NODESxGPUS:FILE, a log or size_bytes,time_us table of "
                  "COLL at that scale to fit (repeat; one per collective the trace has at least)");
  sub->add_option("--gpus-per-node", gpusPerNode,
                  "--predict-ranks: GPUs per node (default: the first --fit's)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--domain-nodes", domainNodes, "--predict-ranks: nodes per NVLink domain")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--nvls", nvls, "--predict-ranks: the nodes have NVSwitch with NVLS");
  sub->add_option("--net-busbw", netBusbw,
                  "--predict-ranks: the ring's network busbw in GB/s, when no fitted scale above "
                  "2 nodes gives it")
      ->check(CLI::PositiveNumber);
}

ScaleModels loadScaleModels(const ScalePredictFlags& f, std::string_view where) {
  if (f.fits.empty()) {
    throw UsageError(fmt::format("{}: give --fit COLL=NODESxGPUS:FILE for the model", where));
  }
  std::map<Coll, std::vector<predict::Point>> points;
  ScaleModels m;
  m.gpusPerNode = f.gpusPerNode;
  m.domainNodes = f.domainNodes;
  for (const std::string& spec : f.fits) {
    const size_t eq = spec.find('=');
    const auto coll =
        eq == std::string::npos ? std::nullopt : predict::parseColl(spec.substr(0, eq));
    if (!coll) {
      throw UsageError(
          fmt::format("{}: --fit '{}' is not COLL=NODESxGPUS:FILE (COLL: allreduce, allgather, "
                      "reduce_scatter or alltoall)",
                      where, spec));
    }
    auto [scale, file] = splitScale(spec.substr(eq + 1), f.domainNodes, false, "--fit");
    readPoints(file, *scale, *coll, points[*coll]);
    if (m.gpusPerNode == 0) m.gpusPerNode = scale->gpusPerNode;
  }
  predict::ClusterTraits traits;
  traits.nvls = f.nvls;
  if (f.netBusbw > 0) traits.netBusbwGBps = f.netBusbw;
  for (auto& [coll, pts] : points) m.fits.emplace(coll, predict::fitScaleModel(coll, pts, traits));
  return m;
}

predict::Scale ScaleModels::scaleOf(int k) const {
  predict::Scale s;
  s.gpusPerNode = std::min(k, gpusPerNode);
  s.nodes = (k + s.gpusPerNode - 1) / s.gpusPerNode;
  s.domainNodes = domainNodes;
  return s;
}

std::optional<double> ScaleModels::callUs(std::string_view coll, int k, uint64_t bytes,
                                          std::string_view where) const {
  const auto c = coll == "alltoallv" ? std::optional(Coll::kAllToAll) : predict::parseColl(coll);
  if (!c || k < 2) return std::nullopt;
  auto fit = fits.find(*c);
  if (fit == fits.end()) {
    throw UsageError(fmt::format("{}: the step has {} calls: give --fit {}=NODESxGPUS:FILE", where,
                                 coll, predict::collName(*c)));
  }
  auto p = predict::predictAt(fit->second, scaleOf(k), std::max<uint64_t>(bytes, 1));
  if (!p) throw UsageError(fmt::format("{}: {}", where, predict::whyNot(fit->second, scaleOf(k))));
  return p->timeUs;
}

int predictReplayStep(const replay::TraceSet& set, int world, const ScalePredictFlags& f) {
  const ScaleModels models = loadScaleModels(f, "replay --predict-ranks");
  const auto& fits = models.fits;
  auto scaleOf = [&](int k) { return models.scaleOf(k); };
  std::map<std::string, KindRow> rows;  // rank 0's ops per kind
  double stepUs = -1, commUs = 0, computeUs = 0;
  int slowest = 0;
  for (size_t r = 0; r < set.ranks.size(); ++r) {
    double compute = 0, comm = 0;
    for (const replay::CommOp& op : set.ranks[r].ops) {
      compute += op.gapUs;
      auto g = set.groups.find(op.group);
      const int k = g != set.groups.end() && !g->second.members.empty()
                        ? static_cast<int>(g->second.members.size())
                        : world;
      const int k2 = k == world ? f.ranks : k;  // the world's groups grow; the others stay
      KindRow& row = rows[std::string(replay::opKindName(op.kind))];
      double t = std::max(op.recordedUs, 0.0);
      const auto coll = modelled(op.kind);
      // nccl-tests' size S: an allgather's is the whole output, every other the buffer.
      uint64_t bytes = op.bytes();
      if (coll == Coll::kAllGather) bytes *= static_cast<uint64_t>(k2);
      if (auto predicted =
              coll ? models.callUs(predict::collName(*coll), k2, bytes, "replay --predict-ranks")
                   : std::nullopt) {
        t = *predicted;
      } else if (r == 0) {
        row.kept = true;
      }
      comm += t;
      if (r == 0) {
        row.from = k;
        row.to = k2;
        ++row.calls;
        row.bytes += op.bytes();
        row.recordedUs += std::max(op.recordedUs, 0.0);
        row.predictedUs += t;
      }
    }
    if (compute + comm > stepUs) {
      stepUs = compute + comm;
      commUs = comm;
      computeUs = compute;
      slowest = static_cast<int>(r);
    }
  }
  fmt::print("# replay predicted at {} ranks ({} nodes of {}) from the trace's {}\n", f.ranks,
             scaleOf(f.ranks).nodes, scaleOf(f.ranks).gpusPerNode, world);
  for (const auto& [coll, fit] : fits) {
    fmt::print("# fit {}:", predict::collName(coll));
    for (const auto& a : fit.algos) {
      fmt::print(" {} ({} points, residuals {:+.1f}% .. {:+.1f}%)", predict::algoName(a.algo),
                 a.points.size(), a.lo * 100, a.hi * 100);
    }
    fmt::print("\n");
  }
  fmt::print("{:<12} {:>11} {:>6} {:>12} {:>14} {:>15}\n", "op (rank 0)", "group", "calls", "bytes",
             "recorded_us", "predicted_us");
  for (const auto& [kind, row] : rows) {
    fmt::print("{:<12} {:>11} {:>6} {:>12} {:>14.1f} {:>15.1f}{}\n", kind,
               fmt::format("{}->{}", row.from, row.to), row.calls, row.bytes, row.recordedUs,
               row.predictedUs, row.kept ? "  (not modelled: recorded kept)" : "");
  }
  fmt::print(
      "# step at {} ranks: {:.1f} us (rank {}): compute {:.1f} us as recorded, communication "
      "{:.1f} us = {:.1f}% of the step (no overlap assumed)\n",
      f.ranks, stepUs, slowest, computeUs, commUs, stepUs > 0 ? commUs / stepUs * 100 : 0.0);
  return 0;
}

}  // namespace cb::cli
