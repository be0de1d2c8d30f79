// Scaling of a proxy step over world sizes, and predictions past the ranks that exist.
//
// Strong scaling keeps the global batch (each of n ranks gets 1/n of it); weak scaling keeps the
// per-rank batch. Speed-up = T(1) * work(n) / (T(n) * work(1)) (work = samples per step), so
// strong: T(1) / T(n), weak: n * T(1) / T(n); efficiency = speed-up / n.
//
// Predictions use collbench's own cost model: time of a collective = alpha * messages +
// beta * bytes + gamma * reduced bytes on the critical path (the features `rankCost` gives for a
// hand-written schedule), with alpha, beta, gamma fitted by non-negative least squares on the
// calls this run measured. A DP step is then replayed in simulateDpStep with the bucket AllReduce
// times the model predicts for n ranks. Predicted rows are marked `predicted` everywhere.
//
// A library variant (mpi, nccl: not hand-written) picks its algorithm by size, so each predicted
// call takes the faster of ring and binomial tree (latency 2(n-1) against 2 lg n rounds; NCCL's
// ring and tree). Across nodes (ranks per node G < n, ranks numbered node by node) a round with a
// peer on another node takes the slower of the fitted link and the inter-node link, whose alpha
// and beta the user gives: one host's fit knows nothing of the network.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/Collective.h"
#include "training_proxies/Plan.h"

namespace cb::proxy {

enum class ScalingKind : uint8_t { kNone, kStrong, kWeak };
std::string_view scalingKindName(ScalingKind k);  // "none", "strong", "weak"
ScalingKind parseScalingKind(std::string_view name);

double speedup(ScalingKind k, double t1, double tn, int n);

// The world sizes of a scaling run on N ranks: 1, 2, 4, ... up to N, and N itself.
std::vector<int> scalingSizes(int worldSize);

struct CostFeatures {
  double messages = 0, bytes = 0, reduced = 0;
  // Rounds across nodes (ranksPerNode given), apart from the ones above.
  double remoteMessages = 0, remoteBytes = 0;
};
// Critical-path features of `coll` with nccl-tests count `count` on n ranks for the hand-written
// algorithm `algo` (rank 0's schedule); variants that are not hand-written (mpi, nccl) are
// modelled as the ring algorithm, and `modelledAs` says so. With 0 < ranksPerNode < n, ranks
// [kG, (k+1)G) share node k and rounds with a peer off rank 0's node count as remote.
CostFeatures costFeatures(Collective coll, DataType dtype, size_t count, int n,
                          const std::string& algo, std::string* modelledAs = nullptr,
                          int ranksPerNode = 0);

// The inter-node link of predictions across nodes (--inter-node-us, --inter-node-gbps).
struct InterNodeLink {
  double alpha = 0, beta = 0;  // s per message, s per byte
  bool known() const { return beta > 0; }
};

struct CostSample {
  CostFeatures f;
  double seconds = 0;
};

struct CostFit {
  double alpha = 0, beta = 0, gamma = 0;  // s, s/byte, s/byte
  int points = 0;
  double medianRelError = 0;  // |predicted - measured| / measured over the fitted points
  // The band of the residuals: measured / predicted - 1 over the fitted points, smallest and
  // largest; a prediction p is given as [p (1 + relLow), p (1 + relHigh)].
  double relLow = 0, relHigh = 0;
  bool ok = false;  // false when fewer than two usable points
  // A round across nodes takes as long as its slower link: the network's or, where the fitted
  // links of a node are slower, the node's (taken per call: exact when a call's remote rounds
  // carry like sizes, as in every schedule here).
  double predict(const CostFeatures& f, const InterNodeLink& link = {}) const {
    return alpha * f.messages + beta * f.bytes + gamma * f.reduced +
           std::max(alpha * f.remoteMessages + beta * f.remoteBytes,
                    link.alpha * f.remoteMessages + link.beta * f.remoteBytes);
  }
};
// Non-negative least squares (every subset of the three terms, the best feasible one), relative
// residuals so small and large calls weigh alike.
CostFit fitCost(const std::vector<CostSample>& samples);

// One call at n ranks: the named hand-written algorithm, or for a library variant the faster of
// ring and tree; `algo` names the one taken.
struct CallPrediction {
  double seconds = 0;
  std::string algo;
};
CallPrediction predictCall(const CostFit& fit, Collective coll, DataType dtype, size_t count, int n,
                           const std::string& algo, int ranksPerNode, const InterNodeLink& link);

struct DpStepSim {
  double step = 0, compute = 0, comm = 0, exposed = 0;
};
// One DP step: forward (sum of fwd), then backward layer by layer from the last; bucket k's
// AllReduce takes comm[k] and starts when its first layer's backward has ended and the previous
// bucket's call is done (one communication stream). Without overlap the calls start after the
// whole backward.
DpStepSim simulateDpStep(const std::vector<double>& fwd, const std::vector<double>& bwd,
                         const std::vector<Bucket>& buckets, const std::vector<double>& comm,
                         bool overlap);

// Predictions reach at most this many times the largest measured world unless asked
// (--extrapolate): beyond it the fit's alpha, fitted on a few ranks of one host, and the ring
// model decide alone.
constexpr int kMaxPredictFactor = 64;

struct ScalingRow {
  int n = 0;
  bool predicted = false;
  bool extrapolated = false;  // predicted beyond kMaxPredictFactor x the measured world
  double stepSeconds = 0;
  double stepLow = 0, stepHigh = 0;  // predicted: the band of the fit's residuals
  double commSeconds = 0;
  double exposedSeconds = 0;
  double speedup = 0, efficiency = 0;
  std::string model;  // predicted: the algorithms the calls took ("tree+ring"), and the nodes
};

}  // namespace cb::proxy
