#include "cli/RunFlags.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>

#include "bench/TimingLoops.h"
#include "cli/Validate.h"
#include "collectives/transport/ShmTransport.h"
#include "core/Error.h"
#include "core/Size.h"
#include "core/Text.h"

namespace cb::cli {

size_t zeroCopyBytes(const RunOptions& o) {
  if (o.zeroCopy.empty()) return kDefaultZeroCopyBytes;
  if (o.zeroCopy == "off") return SIZE_MAX;
  try {
    const uint64_t bytes = parseSize(o.zeroCopy);
    checkRange(static_cast<double>(bytes), "--zero-copy", 0, 1ull << 40);
    return bytes;
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--zero-copy: {} (a size such as 64K, or off)", e.what()));
  }
}

SweepOptions toSweep(const RunOptions& o) {
  SweepOptions s;
  checkListElements(o.collectives, "the collective list");
  checkListElements(o.algo, "--algo");
  checkListElements(o.dtype, "-d");
  checkListElements(o.op, "-o");
  s.collectives = parseCollectiveList(o.collectives);
  s.variants = splitList(o.algo);
  s.dtypes = parseDataTypeList(o.dtype);
  s.ops = parseRedOpList(o.op);
  s.root = o.root;
  s.minBytes = parseSize(o.minBytes);
  s.maxBytes = parseSize(o.maxBytes);
  s.stepFactor = o.stepFactor;
  s.stepBytes = o.stepBytes.empty() ? 0 : parseSize(o.stepBytes);
  s.iterations = o.iters;
  s.warmup = o.warmup;
  s.checkRounds = o.check;
  s.cycles = o.cycles;
  s.timeoutSeconds = o.measure.timeout;
  try {
    s.timeBudgetSeconds = o.timeBudget.empty() ? 0 : parseDurationSeconds(o.timeBudget);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--time-budget {}", e.what()));
  }
  if (!o.timeBudget.empty()) checkRange(s.timeBudgetSeconds, "--time-budget (s)", 1e-6, 3600);
  s.timing = parseTimingMode(o.timing.empty() && o.format == "nccl-tests" ? "nccl-tests"
                             : o.timing.empty()                           ? "per-call"
                                                                          : o.timing);
  TimingDefaults d = timingDefaults(s.timing);
  int average = o.average < 0 ? d.average : o.average;
  if (average > 3) {
    throw UsageError(
        fmt::format("-a {} is not one of 0 (rank 0), 1 (avg), 2 (min), 3 (max)", o.average));
  }
  s.combine = static_cast<RankCombine>(average);
  s.statistic = o.stat.empty() ? d.statistic : parseStatistic(o.stat);
  if (s.timing != TimingMode::kPerCall && s.timeBudgetSeconds > 0) {
    throw UsageError("--time-budget needs --timing per-call");
  }
  if (o.placement == "out") {
    s.inPlace = false;
  } else if (o.placement == "in") {
    s.outOfPlace = false;
  } else if (o.placement != "both") {
    throw UsageError(fmt::format("--placement '{}' is not one of out, in, both", o.placement));
  }
  s.variantOptions.schedule.transport = o.transport;
  s.variantOptions.schedule.chunkBytes = o.chunk.empty() ? 0 : parseSize(o.chunk);
  // A chunk of 0 pipelines nothing; past 1 TiB it is larger than any message sent.
  if (!o.chunk.empty()) checkRange(s.variantOptions.schedule.chunkBytes, "--chunk", 1, 1ull << 40);
  s.variantOptions.schedule.ranksPerNode = o.ranksPerNode;
  s.reference = o.reference;
  s.variantOptions.gpu.blockingWait = o.blocking;
  s.variantOptions.gpu.graphLaunches = o.graph;
  s.variantOptions.gpu.bufferRegistration = o.registration;
  s.variantOptions.prepareTimeoutSeconds = o.measure.timeout;
  if (o.blocking < 0 || o.blocking > 1) throw UsageError("-z takes 0 or 1");
  if (o.graph < 0) throw UsageError("-G must not be negative");
  if (o.registration < 0 || o.registration > 2) throw UsageError("-R takes 0, 1 or 2");
  if (!o.injectDelay.empty()) {
    // US[:VARIANT] — a documented testing aid: proves that `gate` catches a real slowdown.
    auto parts = splitList(o.injectDelay, ':');
    std::string amount = parts.empty() ? std::string() : parts[0];
    // "30%": a share of each call's own time, so every size slows down alike. Else a duration
    // in the one grammar (core/Size.h), a bare number in microseconds as before.
    const bool share = !amount.empty() && amount.back() == '%';
    if (share) amount.pop_back();
    std::optional<double> value;
    std::string why;
    if (share) {
      value = finiteNumber(amount);
    } else {
      try {
        value = parseDurationSeconds(amount, 1e-6) * 1e6;
      } catch (const UsageError& e) {
        why = fmt::format(": {}", e.what());
      }
    }
    if (!value || o.injectDelay.back() == ':' || o.injectDelay.find("::") != std::string::npos) {
      throw UsageError(fmt::format(
          "--inject-delay '{}' is not DURATION[:VARIANT[:SIZE]] or PCT%[:VARIANT[:SIZE]]{}",
          o.injectDelay, why));
    }
    if (!(*value > 0)) {
      throw UsageError(share ? "--inject-delay must be above 0%"
                             : "--inject-delay must be above 0 microseconds");
    }
    (share ? s.injectDelayFraction : s.injectDelayUs) = share ? *value / 100 : *value;
    if (parts.size() > 1) s.injectDelayVariant = parts[1];
    // A third part confines the delay to one size (proves a one-size regression is caught).
    if (parts.size() > 2) s.injectDelaySize = parseSize(parts[2]);
  }
  return s;
}

void addRunFlags(CLI::App* sub, RunOptions& o) {
  sub->add_option("collectives", o.collectives,
                  "Comma-separated collectives, or 'all' (allreduce, allgather, reduce_scatter, "
                  "broadcast, reduce, alltoall, sendrecv)");
  sub->add_option("-b,--minbytes", o.minBytes, "Minimum size (K/M/G: binary)")
      ->capture_default_str();
  sub->add_option("-e,--maxbytes", o.maxBytes, "Maximum size")->capture_default_str();
  sub->add_option("-f,--stepfactor", o.stepFactor, "Multiplication factor between sizes")
      ->capture_default_str();
  sub->add_option("-i,--stepbytes", o.stepBytes, "Fixed increment between sizes (overrides -f)");
  sub->add_option("-n,--iters", o.iters, "Timed iterations per point")->capture_default_str();
  sub->add_option("-w,--warmup_iters", o.warmup, "Warm-up iterations per point")
      ->capture_default_str();
  sub->add_option("-c,--check", o.check, "Verification rounds per point (0: none)")
      ->capture_default_str();
  sub->add_option("-d,--datatype", o.dtype,
                  "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double, a list, or all")
      ->capture_default_str();
  sub->add_option("-o,--op", o.op, "sum prod max min avg band bor bxor, a list, or all")
      ->capture_default_str();
  sub->add_option("-r,--root", o.root, "Root rank of broadcast and reduce")->capture_default_str();
  sub->add_option("-N,--run_cycles", o.cycles, "Repeat the whole sweep N times")
      ->capture_default_str();
  sub->add_option("-a,--average", o.average,
                  "How rank times combine per iteration: 0 rank 0, 1 avg, 2 min, 3 max (default: "
                  "3 with --timing per-call, 1 otherwise, as nccl-tests, OSU and IMB average)");
  sub->add_option("--stat", o.stat,
                  "Statistic over iterations: median mean min max p99 (default: median with "
                  "--timing per-call, mean otherwise)");
  sub->add_option("--timing", o.timing,
                  "Whose timing loop: per-call (collbench: barrier, then each call timed), "
                  "nccl-tests (N calls back to back / N; implied by --format nccl-tests), osu "
                  "(OMB: call, then barrier outside the timer), imb (IMB's loop)");
  sub->add_option("--time-budget", o.timeBudget,
                  "Adaptive mode: time per point (e.g. 200ms) picks the iteration count");
  sub->add_option("--algo", o.algo, "Variants to run (comma list of names, or all)")
      ->capture_default_str();
  sub->add_option("--transport", o.transport,
                  "Transport of hand-written algorithms: local, mpi, shm, ucx (default: fastest)");
  sub->add_option("--chunk", o.chunk, "Pipelining chunk of algorithms that pipeline (bytes)");
  sub->add_option("--zero-copy", o.zeroCopy,
                  fmt::format("shm transport: messages from this size up (default {}) are read in "
                              "place from the sender's buffer instead of streaming through the "
                              "rings; off: never",
                              formatSize(kDefaultZeroCopyBytes)));
  sub->add_option("--ranks-per-node", o.ranksPerNode,
                  "Hierarchical algorithms: emulate nodes of this many ranks")
      ->check(CLI::PositiveNumber);
  sub->add_option("--placement", o.placement, "out, in or both")->capture_default_str();
  sub->add_option("--format", o.format,
                  "collbench (tables + side-by-side), nccl-tests (exactly its tables), none")
      ->capture_default_str();
  sub->add_option("--side-metric", o.sideMetric, "Side-by-side view shows busbw or time")
      ->capture_default_str();
  sub->add_option("--side-baseline", o.sideBaseline,
                  "Side-by-side views: give every variant's speed relative to this one (default: "
                  "mpi when it runs)");
  sub->add_option("--json", o.json, "Also write everything measured to this JSON file");
  sub->add_option("--csv", o.csv, "Also write one row per point to this CSV file");
  sub->add_flag("--reference", o.reference,
                "Also measure memcpy on every rank at once at each size (column 'memcpy'; busbw = "
                "aggregate copy bandwidth): the hardware limit to compare with");
  sub->add_option("-z,--blocking", o.blocking,
                  "With --timing nccl-tests: 1 waits for each call and barriers after it inside "
                  "the timed batch (nccl-tests -z 1); per-call timing always does")
      ->capture_default_str();
  sub->add_option("-G,--cudagraph", o.graph,
                  "GPU: with --timing nccl-tests, capture the batch of -n calls in a CUDA graph "
                  "and launch it N times (nccl-tests -G); per-call timing: each sample launches "
                  "a graph of N calls; time / calls")
      ->capture_default_str();
  sub->add_option("-R,--local_register", o.registration,
                  "GPU: 0 none, 1 ncclCommRegister of ncclMemAlloc buffers, 2 symmetric windows "
                  "(as nccl-tests -R)")
      ->capture_default_str();
  sub->add_option("--nccl-algo", o.ncclAlgo,
                  "GPU: also run NCCL_ALGO variants (Ring,Tree,CollNetDirect,CollNetChain,NVLS,"
                  "NVLSTree,PAT or all), each a column; alone: NCCL picks the protocol");
  sub->add_option("--nccl-proto", o.ncclProto,
                  "GPU: NCCL_PROTO values for those variants (LL,LL128,Simple or all); alone: "
                  "NCCL picks the algorithm (nccl:auto/LL)");
  sub->add_flag("--nccl-choice", o.ncclChoice,
                "GPU: record in each NCCL point's message the algorithm/protocol NCCL ran (from "
                "NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING; rank 0 logs a line per call)");
  addMeasureOptions(sub, o.measure, "wait",
                    "Ranks of the local world (threads; default: cores, at least 2; one per "
                    "visible GPU when only GPU variants are named)");
  sub->add_flag("--expect", o.expect,
                "Acceptance test: exit 1 when a collective's best busbw (sizes from 16 MiB) is "
                "below the expected share of its hardware bound (docs/PEAK.md)");
  sub->add_option("--expect-fraction", o.expectFraction,
                  "The share of the bound below which a figure is low (default: per link class, "
                  "a tenth below the usual share, else 0.5)");
  sub->add_option("--inject-delay", o.injectDelay,
                  "Testing aid: add a duration (microseconds, or 50us, 2ms...), or PCT% of its "
                  "own time, to every timed call [of VARIANT [at SIZE]]");
}

}  // namespace cb::cli
