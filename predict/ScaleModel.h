// The scale model (docs/PREDICT.md): NCCL's cost structure (src/graph/tuning.cc, read, not copied)
// with its constants replaced by figures fitted to measured points by least squares on time.
//
// A point is one size measured at one scale. Per algorithm the time is a sum of terms, each a
// coefficient (fitted, never negative) times a column that depends on the scale and the size:
// latency per step (intra- and inter-node steps counted as NCCL counts them) and bytes per
// bandwidth (one coefficient on NVLink, one when the network is crossed). The algorithm a point
// ran is what `--nccl-choice` recorded, or else the rule below; the algorithm predicted at a
// target is the fastest the fitted model allows there (NCCL's own rule over its cost model).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb::predict {

enum class Algo { kRing, kTree, kNvls, kNvlsTree, kP2p };
std::string_view algoName(Algo a);  // "Ring", "Tree", "NVLS", "NVLSTree", "P2P"
// NCCL's names as its TUNING lines print them, any case; nullopt for others (CollNet, PAT).
std::optional<Algo> parseAlgo(std::string_view name);
// "NCCL ran Ring/Simple" (a point's note under --nccl-choice) -> Ring; nullopt without one.
std::optional<Algo> algoFromNote(std::string_view message);

enum class Coll { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
std::string_view collName(Coll c);  // collbench's names: "allreduce", ...
std::optional<Coll> parseColl(std::string_view name);

// Where the ranks run. NCCL's "node" is an NVLink domain: with multi-node NVLink (GB200 NVL72)
// several hosts form one, so `domainNodes` hosts count as one node of the model.
struct Scale {
  int nodes = 1;
  int gpusPerNode = 1;
  int domainNodes = 1;
  int ranks() const { return nodes * gpusPerNode; }
  int ncclNodes() const { return (nodes + domainNodes - 1) / domainNodes; }
  int perNcclNode() const { return ranks() / ncclNodes(); }
  std::string name() const;  // "4x8", "32x4 (2 NVLink domains)"
};

struct Point {
  Scale scale;
  uint64_t bytes = 0;  // nccl-tests' size S
  double timeUs = 0;
  std::optional<Algo> recorded;  // what NCCL said it ran
  std::string source;            // file or run, for the output
};

struct ClusterTraits {
  bool nvls = false;  // NVSwitch with NVLS: NVLS inside a node, NVLSTree across nodes
  // The ring's busbw over the network (NICs x rate of a node, GB/s) when no measured scale above
  // 2 nodes gives it.
  std::optional<double> netBusbwGBps;
};

struct Term {
  std::string name;  // "per intra-node step", ...
  bool bandwidth = false;
  double coef = 0;  // us per step, or us per byte of the column
};

struct FittedAlgo {
  Algo algo = Algo::kRing;
  std::vector<Term> terms;                    // every term the algorithm has; unused ones coef 0
  std::vector<size_t> points;                 // into ScaleFit::points
  std::vector<double> residuals;              // (measured - fitted) / fitted, per point
  double lo = 0, hi = 0;                      // min and max residual (0 included)
  bool intraKnown = false, netKnown = false;  // which bandwidths the points (or traits) gave
  bool netGiven = false;                      // the network term is --net-busbw, not fitted
};

struct ScaleFit {
  Coll coll = Coll::kAllReduce;
  ClusterTraits traits;
  std::vector<Point> points;
  std::vector<std::optional<Algo>> labels;  // per point; nullopt: excluded
  std::vector<std::string> why;             // per point: how its algorithm was known, or why out
  std::vector<FittedAlgo> algos;
  const FittedAlgo* find(Algo a) const;
};

// The algorithm a point ran when nothing recorded it: allreduce on one node NVLS (with NVSwitch)
// or Ring, on 2 nodes NVLSTree or Tree (NCCL's tuning doubles the tree's network bandwidth at
// nNodes <= 2: the 2-node aberration), above 2 nodes Ring; allgather and reduce_scatter NVLS on
// one NVSwitch node, else Ring; alltoall point-to-point.
Algo assumedAlgo(Coll c, const Scale& s, bool nvls);

// Fits every algorithm that has points. Throws UsageError when no point can be fitted.
ScaleFit fitScaleModel(Coll c, std::vector<Point> points, const ClusterTraits& traits);

struct AlgoTime {
  Algo algo;
  double timeUs;
};

struct Prediction {
  uint64_t bytes = 0;
  Algo algo = Algo::kRing;
  double timeUs = 0, timeLo = 0, timeHi = 0;          // band from the algorithm's residuals
  double algbw = 0, busbw = 0, busLo = 0, busHi = 0;  // GB/s
  std::vector<AlgoTime> candidates;                   // every algorithm the model allows here
};

// The model's time of one algorithm at a scale and size; nullopt when the algorithm does not
// apply there or a term it needs was never fitted.
std::optional<double> algoTimeUs(const FittedAlgo& f, Coll c, const Scale& s, uint64_t bytes);
// The fastest allowed algorithm; nullopt when none is (whyNot() says what is missing).
std::optional<Prediction> predictAt(const ScaleFit& fit, const Scale& target, uint64_t bytes);
std::string whyNot(const ScaleFit& fit, const Scale& target);

// nccl-tests' busbw factor of the model's collectives.
double busFactor(Coll c, int nranks);

}  // namespace cb::predict
