// Pure plans of a training step's communication, tested without timing:
//
// - DDP buckets (PyTorch's DistributedDataParallel): gradients are grouped in REVERSE order of the
//   parameters (backward produces the last layer's gradients first); a bucket closes as soon as
//   its size reaches the cap, the first bucket with its own smaller cap (defaults 25 MiB and
//   1 MiB) so communication starts early. A bucket may exceed the cap by its last tensor (as in
//   PyTorch). Its AllReduce can start when the backward of the EARLIEST layer it holds ends.
// - Pipeline orders per stage: GPipe (all forwards, then all backwards), 1F1B (p - s - 1
//   warm-up forwards, then one forward one backward, then the cool-down backwards; Narayanan et
//   al. 2021) and an asynchronous schedule without flush (PipeDream-style 1F1B that runs on across
//   steps: the warm-up and cool-down happen once per window of steps, not once per step).
//   For uniform stages the synchronous bubble is (p - 1) / (m + p - 1).
// - simulatePipeline: the makespan and idle time of those orders with given op durations (a
//   discrete-event model, used by the tests and for predictions).
// - Tensor-parallel calls per transformer block (Megatron-LM, Shoeybi et al. 2019; sequence
//   parallelism, Korthikanti et al. 2022): column split = AllGather forward, AllReduce backward;
//   row split = AllReduce forward, AllGather backward; Megatron = 2 AllReduce forward and 2
//   backward; sequence parallel: forward AG -> attention -> RS -> AG -> MLP -> RS (the AG
//   gathers the sequence-split input of a column-parallel linear, the RS replaces the
//   row-parallel linear's all-reduce); backward AG (the RS's backward) -> MLP -> AG (the input
//   re-gathered for the weight gradient: Megatron keeps only the sequence shard) + RS (the
//   column-parallel input gradient) -> the same for attention: 4 AG + 2 RS.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/Collective.h"
#include "training_proxies/Model.h"

namespace cb::proxy {

constexpr uint64_t kDefaultBucketCapBytes = 25ull << 20;
constexpr uint64_t kDefaultFirstBucketBytes = 1ull << 20;

struct Bucket {
  uint64_t offsetBytes = 0;  // in the gradient buffer, laid out in reverse layer order
  uint64_t bytes = 0;
  int firstLayer = 0;  // lowest layer index with a tensor in the bucket (its backward ends last)
  int lastLayer = 0;   // highest
  int tensors = 0;
};

// Buckets of a model's gradients (elemBytes per element). Caps must be > 0.
std::vector<Bucket> ddpBuckets(const Model& m, size_t elemBytes, uint64_t capBytes,
                               uint64_t firstCapBytes);

enum class PpSchedule : uint8_t { kGPipe, k1F1B, kAsync };
std::string_view ppScheduleName(PpSchedule s);      // "gpipe", "1f1b", "async"
PpSchedule parsePpSchedule(std::string_view name);  // throws UsageError

struct PipeOp {
  bool forward = true;
  int microBatch = 0;
  bool operator==(const PipeOp&) const = default;
};

// The order stage `stage` of `p` runs for m micro-batches. For kAsync, `steps` steps of m
// micro-batches run as one stream without flush (micro-batch ids 0 .. steps*m - 1); for the
// synchronous schedules `steps` must be 1.
std::vector<PipeOp> pipelineOrder(PpSchedule s, int stage, int p, int m, int steps = 1);
// "F0 F1 B0 B1" for tests and messages.
std::string orderText(const std::vector<PipeOp>& ops);

struct PipelineSim {
  double makespan = 0;
  std::vector<double> busy;  // per stage: compute time
  std::vector<double> idle;  // per stage: makespan - busy
  // Per stage: the idle time the transfers add (beyond the same orders with instant links).
  std::vector<double> transfer;
  // The schedule's bubble: idle time waiting for a dependency, transfers apart.
  double bubbleFraction(int stage) const { return (idle[stage] - transfer[stage]) / makespan; }
};
// Runs the orders with forward time fwd[s] and backward time bwd[s] per stage and `link`
// seconds per stage-to-stage transfer; an op starts when the stage is free and its input has
// arrived. Throws InternalError if the orders deadlock (an op waits for one never produced).
PipelineSim simulatePipeline(const std::vector<std::vector<PipeOp>>& orders,
                             const std::vector<double>& fwd, const std::vector<double>& bwd,
                             double link);
// The idle time per step the schedule imposes on each stage when stage s computes
// computePerStep[s] seconds per step (m forwards and m backwards, backward = 2 x forward) and
// transfers are instant: the schedule's bubble with the stages' own compute, balanced or not.
// `window`: steps run back to back (kAsync), else 1. p = computePerStep.size().
std::vector<double> scheduleIdlePerStep(PpSchedule s, int m, int window,
                                        const std::vector<double>& computePerStep);
// (p - 1) / (m + p - 1)
double idealBubble(int p, int m);

// Contiguous stages over the model's layers, balanced on forward FLOPs times the stage weights
// (empty weights: uniform); returns p+1 boundaries. Throws UsageError if p exceeds the layers.
std::vector<int> stageBoundaries(const Model& m, int p, const std::vector<double>& weights);

enum class TpKind : uint8_t { kColumn, kRow, kMegatron, kSequence };
std::string_view tpKindName(TpKind k);  // "column", "row", "megatron", "sequence"
TpKind parseTpKind(std::string_view name);

struct TpCall {
  Collective coll;
  // Elements of the full activation (b x s x h) the call combines; count per rank is derived
  // from it by the collective's convention.
  uint64_t elements = 0;
};
// One step of a block under TP: half of the block's compute (part 0 attention, 1 MLP) or a call.
struct TpStep {
  bool compute = false;
  int part = 0;
  TpCall call{Collective::kAllReduce, 0};
};
// The steps of one block's forward (forward = true) or backward, in order, for activations of
// `elements` (b x s x h) elements.
std::vector<TpStep> tpBlockSteps(TpKind k, bool forward, uint64_t elements);
// The calls of those steps.
std::vector<TpCall> tpCalls(TpKind k, bool forward, uint64_t elements);
// "AG attn RS AG mlp RS" for tests.
std::string tpStepsText(const std::vector<TpStep>& steps);
// nccl-tests count of a TP call on t ranks: allreduce: elements; allgather/reduce_scatter:
// elements / t (the per-rank slice; elements must be a multiple of t, the caller pads).
size_t tpCount(const TpCall& c, int t);

enum class DpKind : uint8_t { kAllReduce, kParameterServer, kSharded };
std::string_view dpKindName(DpKind k);  // "allreduce", "ps", "sharded"
DpKind parseDpKind(std::string_view name);

// [begin, end) of part i of n over `total` elements (balanced).
uint64_t partBegin(uint64_t total, int parts, int i);

}  // namespace cb::proxy
