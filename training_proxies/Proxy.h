// A training proxy: one training step's communication replayed on a world (local threads or MPI
// processes) with every variant collbench has, and modelled compute between the calls.
//
// How a step runs on a rank. The rank's program (an ordered list of compute, collective and
// point-to-point operations) is built from the model, the layout and the parallel forms, and
// executed by two threads, as a GPU job would run:
//   - a compute stream: a thread that "runs" each compute op by sleeping until its end time
//     (FLOPs / --tflops), leaving the CPU free like a GPU kernel would, and chains ops on their
//     target times so sleep overshoot does not accumulate;
//   - the host (the rank's main thread, the only one that calls MPI) enqueues compute without
//     waiting and issues the communication: a synchronous call (TP, PP, the
//     parameter server, sharded AllGather) waits for the stream to be idle; a DP bucket
//     AllReduce (or a sharded ReduceScatter) waits only for the backward of its own layers, so it
//     runs while the stream computes the rest of backward (--no-overlap: after all of backward).
// Every op's start and end are recorded, giving the per-rank timeline and the metrics:
//   step = end of the rank's last op (the iteration time is the max over ranks, like `run`);
//   compute = stream busy time; comm = host time inside communication calls;
//   exposed comm = communication time while the stream is idle; overlap % = 1 - exposed / comm;
//   bubble % (pipeline) = stream idle time / step time per stage, next to (p-1)/(m+p-1).
// Data is real: buffers of the modelled sizes, faulted in before timing; after timing one check
// round per distinct call verifies every element (integer patterns of bench/Verify), the pipeline
// links and the parameter server's sums.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/Registry.h"
#include "collectives/Team.h"
#include "core/Communicator.h"
#include "core/DataType.h"
#include "training_proxies/Model.h"
#include "training_proxies/Plan.h"
#include "training_proxies/Scaling.h"

namespace cb::proxy {

struct ProxyOptions;

// dp x tp x pp ranks; this rank's coordinates in each.
struct Layout {
  int dp = 1, tp = 1, pp = 1;
  int dpIdx = 0, tpIdx = 0, ppIdx = 0;
};

// A proxy mode is one row of proxyModes() (training_proxies/ProxyModes.cpp): the word of `proxy
// MODE`, its help, which layout dimension the whole world is, and the form of its stored case.
// Everything else a step does follows from the layout (dp x tp x pp), so a mode that is a new
// layout preset or case form is one row.
struct ProxyModeInfo {
  std::string_view name;
  std::string_view description;
  // &Layout::dp, tp or pp: the world is that one dimension (--scaling varies it); nullptr: the
  // layout comes from --dp/--tp/--pp (hybrid).
  int Layout::*dimension;
  // What of the options changes this mode's step traffic, as its case's form ("allreduce",
  // "1f1b-m4", "dp2xtp2xpp1"; the common suffixes are added by proxyFormText).
  std::string (*form)(const ProxyOptions& o, const Layout& l);
};
const std::vector<ProxyModeInfo>& proxyModes();

// A handle on a row of proxyModes(); the built-in rows have names.
class ProxyMode {
 public:
  static const ProxyMode kDp, kTp, kPp, kHybrid;  // rows 0-3
  constexpr explicit ProxyMode(uint8_t row) : row_(row) {}
  const ProxyModeInfo& info() const;
  bool operator==(const ProxyMode& other) const { return row_ == other.row_; }

 private:
  uint8_t row_;
};
inline constexpr ProxyMode ProxyMode::kDp{0};
inline constexpr ProxyMode ProxyMode::kTp{1};
inline constexpr ProxyMode ProxyMode::kPp{2};
inline constexpr ProxyMode ProxyMode::kHybrid{3};

// The step after backward: none, or an optimizer whose update is modelled as memory traffic per
// parameter it updates (SGD: read weight and gradient, write weight = 12 B; Adam: read weight,
// gradient and the two moments, write weight and moments = 28 B, fp32) at --mem-gbps.
enum class OptimizerKind : uint8_t { kNone, kSgd, kAdam };
std::string_view optimizerName(OptimizerKind k);  // "none", "sgd", "adam"
OptimizerKind parseOptimizer(std::string_view name);
std::string_view proxyModeName(ProxyMode m);      // the row's name: "dp", "tp", "pp", "hybrid"
ProxyMode parseProxyMode(std::string_view name);  // UsageError naming the modes
std::string proxyModeHelp();                      // "dp (data parallel), tp (...), ..."

struct ProxyOptions {
  ProxyMode mode = ProxyMode::kDp;
  Model model;
  double batch = 1;  // samples per micro-batch per data-parallel rank
  DataType gradType = DataType::kFloat;
  DataType actType = DataType::kBFloat16;
  double tflops = 100;         // per rank
  double computeScale = 1;     // --compute: 0 = communication only
  int dp = 0, tp = 0, pp = 0;  // hybrid layout (0: the rest of the world)
  // Dimensions from innermost (consecutive ranks) to outermost; TP innermost keeps it in a host.
  std::vector<std::string> layoutOrder{"tp", "pp", "dp"};
  DpKind dpKind = DpKind::kAllReduce;
  uint64_t bucketCapBytes = kDefaultBucketCapBytes;
  uint64_t firstBucketBytes = kDefaultFirstBucketBytes;
  bool overlap = true;
  int servers = 1;
  TpKind tpKind = TpKind::kMegatron;
  PpSchedule schedule = PpSchedule::k1F1B;
  // Micro-batches per step: pipeline micro-batches, or without a pipeline gradient accumulation
  // (forward and backward m times, the DP gradients reduced once, after the last: DDP's no_sync).
  // 0: 4 with a pipeline, else 1.
  int microBatches = 0;
  OptimizerKind optimizer = OptimizerKind::kNone;
  double memGbps = 2000;  // memory bandwidth of the modelled optimizer step, GB/s
  // ZeRO stage (Rajbhandari et al. 2020): 0 plain DDP; 1 optimizer states sharded (gradients
  // all-reduced per bucket, each rank updates its 1/d, the parameters all-gathered per bucket
  // after the step); 2 gradients too (reduce-scatter per bucket instead: Megatron's distributed
  // optimizer); 3 parameters too (dpKind kSharded: FSDP).
  int zero = 0;
  std::vector<double> stageWeights;  // empty: uniform
  int steps = 10, warmup = 2;
  int checkRounds = 1;
  double timeoutSeconds = 300;
  std::string algo;  // registry variant for the collectives ("" = mpi under MPI, else ring)
  VariantOptions variant;
  const Registry* registry = nullptr;  // null: Registry::builtin()
  ScalingKind scaling = ScalingKind::kNone;
  // Predicted DP rows up to this many ranks (0: 1024, or kMaxPredictFactor x the world if less);
  // beyond kMaxPredictFactor x the world only with `extrapolate`.
  int predictTo = 0;
  bool extrapolate = false;
  // Predictions across nodes: ranks per node (0: one node) and the inter-node link.
  int predictRanksPerNode = 0;
  InterNodeLink interNode;
};

// The layout of `worldSize` ranks and this rank's coordinates. Throws UsageError when the
// product does not equal the ranks or a dimension does not fit the model.
Layout resolveLayout(const ProxyOptions& o, int worldSize, int rank);
// Every check that needs the world size (layout, servers, heads divisible by TP, stages <=
// layers); throws UsageError. Called on every rank before anything is measured.
void validateProxy(const ProxyOptions& o, int worldSize);
// The optimizer of the step: --optimizer, or Adam when ZeRO is asked for without one.
OptimizerKind optimizerFor(const ProxyOptions& o);
// ZeRO-3: --zero 3 or --dp-kind sharded.
bool shardedParams(const ProxyOptions& o);
// The parameter server (--dp-kind ps) of a mode whose world is the data-parallel dimension.
bool parameterServer(const ProxyOptions& o);
// Micro-batches of a step for this layout (ProxyOptions::microBatches, resolved).
int microBatchesFor(const ProxyOptions& o, const Layout& l);
// The variant of `coll` for the step's variant `algo`: `algo`, or for the DDP buffers' broadcast
// (which ring and the other all-reduce algorithms lack) the binomial tree.
std::string algoFor(const ProxyOptions& o, Collective coll, const std::string& algo);
// The variant name used for collectives ("mpi" under MPI, "ring" elsewhere unless given).
std::string effectiveAlgo(const ProxyOptions& o, WorldKind kind);
// The variant exists for every collective the step needs; throws UsageError naming it.
void validateVariant(const ProxyOptions& o, WorldKind kind, int worldSize);

struct TimelineEvent {
  std::string name;
  char lane = 'c';            // 'c' compute stream, 'm' communication (host)
  double start = 0, end = 0;  // seconds from the step's start
};

// One kind of call in the step (same group, collective and size): its median time and
// bandwidths.
struct CallStat {
  std::string group;   // "dp", "tp", "pp", "emb", "mp", "world", "ps", "sharded"
  std::string coll;    // "allreduce", ..., "send", "recv", "push", "pull"
  uint64_t bytes = 0;  // S of nccl-tests' convention (message size for point-to-point)
  int nranks = 0;
  DataType dtype = DataType::kUint8;  // uint8 for point-to-point messages
  int callsPerStep = 0;
  double seconds = 0;  // median over calls and steps
  double algbw = 0, busbw = 0;
  // The busbw bound of the group's ranks (GB/s; 0: none known) and what sets it (ProxyPeak.h).
  double peak = 0;
  std::string peakLimit;
};

// The calls of one step on `rank` of `worldSize` ranks, from the program the run executes, built
// without a world or buffers (full-size models too): group, call, bytes (nccl-tests S; for the
// pipeline, one message), ranks and calls (messages) per step, in the order the step first issues
// them. Throws UsageError like validateProxy.
std::vector<CallStat> planStep(const ProxyOptions& o, int worldSize, int rank);

struct ProxyRun {
  int n = 0;  // ranks in this run
  Layout layout;
  double batchPerRank = 0;
  int steps = 0;
  std::vector<double> stepSamples;                        // per step, max over ranks (seconds)
  std::vector<double> rankSteps;                          // n x steps, rank-major
  double step = 0, stepMin = 0, stepMax = 0, stepCv = 0;  // over steps
  double compute = 0, comm = 0, exposed = 0;              // medians, max over ranks
  double overlapPct = 0;
  // Pipeline, per stage, fractions of the step (medians over steps): idle = 1 - compute / step =
  // bubble (in pipeline exchanges, waiting for the peer to post its side: the dependency was not
  // ready) + transfer (the rest of those exchanges) + exposed collectives + other (host gaps
  // between ops: handing work to the compute thread, waking up).
  std::vector<double> idlePerStage, bubblePerStage, transferPerStage, exposedPerStage,
      otherPerStage;
  // Per stage: bubble / (bubble + compute), the quantity (p-1)/(m+p-1) describes (a schedule with
  // free transfers and no host gaps).
  std::vector<double> scheduleBubblePerStage;
  double bubbleIdeal = 0;
  double transfer = 0;  // pipeline transfer time within `exposed` (median, max over ranks)
  double samplesPerSecond = 0, tokensPerSecond = 0;
  uint64_t commBytesPerStep = 0;  // bytes rank 0 hands to communication calls per step
  // Seconds per step rank 0's calls would take at their bounds (-1: a call has none; ProxyPeak).
  double commAtPeak = -1;
  std::vector<CallStat> calls;
  std::vector<std::vector<TimelineEvent>> timeline;  // per rank, the median step
  int64_t wrong = -1;
};

struct ProxyResult {
  std::vector<ProxyRun> runs;       // one, or one per scaling size
  std::vector<ScalingRow> scaling;  // measured and predicted rows (predicted marked)
  CostFit fit;
  std::string fitModelledAs;  // the algorithm whose schedule gives the cost features
  std::string algo;           // variant used
  std::string transport;      // "" for vendor variants
};

// Collective over `world`. Rank 0 gets the complete result (other ranks: partial). Throws
// UsageError (identically on every rank) for options the world can't run. The DP, TP and PP
// groups (and the scaling sizes) are sub-teams of `world` (Team::split), each with its own
// transports, set up once per run.
ProxyResult runProxy(Team& world, const ProxyOptions& o);

// The JSON document stored with a proxy run and written by --json: options, metrics per run,
// calls, timeline, scaling, fit. Format "collbench-proxy", version 2.
std::string proxyJson(const ProxyOptions& o, const ProxyResult& r);

}  // namespace cb::proxy
