// `collbench run [COLLECTIVES] [nccl-tests flags]`: measure collectives in the current world
// (local threads by default, MPI processes under mpirun), print nccl-tests tables and a
// side-by-side view of the variants, and store everything in SQLite as it is measured.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "adapters/SweepRecords.h"
#include "bench/Peak.h"
#include "bench/Report.h"
#include "bench/Sweep.h"
#include "bench/TimingLoops.h"
#include "cli/Command.h"
#include "cli/MeasureOptions.h"
#include "cli/Progress.h"
#include "cli/Validate.h"
#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/ShmTransport.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Text.h"
#include "topology/LinkBounds.h"
#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/NcclTuning.h"
#include "collectives/nccl/NcclVariantPlan.h"
#include "collectives/nccl/NcclVariants.h"
#endif

namespace cb::cli {
namespace {

struct RunOptions {
  std::string collectives = "allreduce,allgather";
  std::string minBytes = "8", maxBytes = "64M";
  double stepFactor = 2;
  std::string stepBytes;
  int iters = 20, warmup = 5, check = 1, cycles = 1, root = 0;
  int average = -1;  // -1: the timing mode's (timingDefaults)
  std::string dtype = "float", op = "sum";
  std::string stat;    // "": the timing mode's
  std::string timing;  // "": nccl-tests with --format nccl-tests, else per-call
  std::string timeBudget;
  std::string algo = "all";
  std::string transport;
  std::string chunk;
  std::string zeroCopy;
  int ranksPerNode = 0;
  std::string placement = "both";
  std::string format = "collbench";
  std::string sideMetric = "busbw";
  std::string sideBaseline;
  std::string json, csv;
  std::string injectDelay;
  int blocking = 0, graph = 0, registration = 0;
  bool reference = false;
  std::string ncclAlgo, ncclProto;
  bool ncclChoice = false;
  bool expect = false;
  double expectFraction = 0;  // 0: the peak model's per link class
  MeasureOptions measure;     // -T, --db, --no-db, --label, --np, --bind, --strict
};

// --zero-copy: a size, or off (never).
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
  s.timeBudgetSeconds = o.timeBudget.empty() ? 0 : parseDurationSeconds(o.timeBudget);
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
    // "30%": a share of each call's own time, so every size slows down alike.
    const bool share = !amount.empty() && amount.back() == '%';
    if (share) amount.pop_back();
    auto value = finiteNumber(amount);
    if (!value || o.injectDelay.back() == ':' || o.injectDelay.find("::") != std::string::npos) {
      throw UsageError(
          fmt::format("--inject-delay '{}' is not US[:VARIANT[:SIZE]] or PCT%[:VARIANT[:SIZE]]",
                      o.injectDelay));
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

// The header lines that describe the sweep (between the libraries and the fingerprint).
std::vector<std::string> sweepDescription(const SweepOptions& sweep) {
  std::vector<std::string> lines{fmt::format(
      "# sizes {}..{} B, -n {} -w {} -c {} -N {}; time = {} over iterations of the {} over ranks "
      "(-a {})",
      sweep.minBytes, sweep.maxBytes, sweep.iterations, sweep.warmup, sweep.checkRounds,
      sweep.cycles, statisticName(sweep.statistic), rankCombineName(sweep.combine),
      static_cast<int>(sweep.combine))};
  lines.push_back(fmt::format("# timing {}", timingModeDescription(sweep.timing)));
  if (sweep.timeBudgetSeconds > 0) {
    lines.push_back(
        fmt::format("# adaptive: {:g} s per point picks the iteration count (-n ignored)",
                    sweep.timeBudgetSeconds));
  }
  return lines;
}

std::map<std::string, std::string> headerFields(const RunRecord& r) {
  return {{"collbench_version", r.collbenchVersion},
          {"started_at", r.startedAt},
          {"label", r.label},
          {"command_line", r.commandLine},
          {"mpi_version", r.mpiVersion},
          {"ucx_version", r.ucxVersion},
          {"cuda_version", r.cudaVersion},
          {"nccl_version", r.ncclVersion},
          {"hosts", r.hosts},
          {"world_size", std::to_string(r.worldSize)},
          {"world_kind", r.worldKind},
          {"fingerprint", r.fingerprint}};
}

// True when every variant asked for by name runs on a GPU (nccl, its plan columns, or the
// hand-written algorithms with --transport cuda): the local world then defaults to one rank per
// visible GPU instead of one per core, since two ranks can't share a GPU.
bool onlyGpuVariants(const SweepOptions& sweep, const Registry& registry) {
  if (runsEveryVariant(sweep)) return false;
  for (const auto& name : sweep.variants) {
    for (Collective c : sweep.collectives) {
      const VariantInfo* v = registry.find(c, name);
      if (!v) continue;
      v = variantOnTransport(v, sweep.variantOptions.schedule.transport);
      if (v->memory != MemoryKind::kDevice) return false;
    }
  }
  return true;
}

// The bounds of the run's collectives from its topology (host ranks on one host: the copy
// bandwidth measured here, on every rank at once), and the header line that gives them.
struct RunPeaks {
  std::map<Collective, Bound> bounds;
  bool deviceRanks = false;
  std::string header;
  void apply(PointResult& p) const {
    // GPU ranks bound the device variants; host variants beside them move through host memory,
    // which the link bound does not describe.
    bool device = startsWith(p.variant, "nccl") || p.variant.find("/cuda") != std::string::npos;
    if (p.variant == "memcpy" || device != deviceRanks) return;
    auto it = bounds.find(p.coll);
    if (it == bounds.end() || !it->second.known()) return;
    // One rank in place moves nothing (core/PeakModel.h, judgedFigure).
    if (!judgedPoint(p.nranks, p.placement == Placement::kIn)) return;
    p.peak = it->second.busbw;
    p.peakLimit = it->second.limit;
  }
};

RunPeaks runPeaks(RunSession& s, const SweepOptions& sweep) {
  RunPeaks peaks;
  const RunTopology& topo = s.topology();
  for (const auto& p : topo.placements) {
    peaks.deviceRanks = peaks.deviceRanks || !p.gpuBusId.empty();
  }
  const int n = s.team().size();
  std::vector<double> byRank;
  const double copy = hostCopyGBps(s.team(), topo.placements, sweep.timeoutSeconds, &byRank);
  if (copy > 0) {
    peaks.header += fmt::format("# peak: host memory copy {:.2f} GB/s per rank ({} copying {}{})\n",
                                copy, n == 1 ? "one rank" : fmt::format("{} ranks", n),
                                formatSize(copyProbeBytes(n)), n == 1 ? "" : " at once");
    peaks.header += copyByNumaLine(byRank, topo.placements);
  }
  for (Collective c : sweep.collectives) {
    Bound b = collectiveLinkBound(topo.hosts, topo.placements, c, copy);
    peaks.header += b.known() ? fmt::format("# peak: {} bound {:.2f} GB/s {}: {}\n",
                                            collectiveName(c), b.busbw, b.figure(), b.basis)
                              : fmt::format("# peak: {}: no bound known for this hardware ({})\n",
                                            collectiveName(c), b.unknownWhy);
    peaks.bounds[c] = std::move(b);
  }
  return peaks;
}

// Rank 0, after the tables: the % of peak view and one verdict per collective and variant;
// returns how many are low when --expect asks (0 otherwise).
int64_t reportVerdicts(const RunOptions& o, const RunPeaks& peaks,
                       const std::vector<PointResult>& all, RunSession& s) {
  auto verdicts = judgeRun(all, peaks.bounds, o.expectFraction);
  s.setDetail("peak", verdictsJson(verdicts, peaks.bounds, "run topology"));
  if (o.format == "collbench") fmt::print("{}{}", peakView(all), verdictLines(verdicts));
  int64_t low = 0;
  for (const auto& v : verdicts) {
    if (v.verdict.kind != Verdict::Kind::kLow) continue;
    ++low;
    if (o.expect) {
      fmt::print(stderr, "collbench: --expect: {} {} is {}\n", collectiveName(v.coll), v.variant,
                 v.verdict.line);
    }
  }
  return o.expect ? low : 0;
}

int doRun(const RunOptions& o) {
  SweepOptions sweep = toSweep(o);  // bad input fails here, before any rank starts
  if (o.expectFraction < 0 || o.expectFraction > 2) {
    throw UsageError(fmt::format("--expect-fraction {} is not a share of the bound in (0, 2]",
                                 o.expectFraction));
  }
  checkRunInputs(sweep, !o.stepBytes.empty(), o.ranksPerNode, o.measure.db, o.measure.noDb,
                 o.measure.label);
  parseSideMetric(o.sideMetric);
  if (!o.json.empty()) checkOutputPath(o.json, "--json");
  if (!o.csv.empty()) checkOutputPath(o.csv, "--csv");
  const size_t zeroCopy = zeroCopyBytes(o);
  // NCCL algorithm x protocol variants are added on request, each a column of its own.
  Registry registry = Registry::builtin();
  if (!o.ncclAlgo.empty() || !o.ncclProto.empty()) {
#if defined(COLLBENCH_HAVE_CUDA)
    // An unforced half stays NCCL's choice ("auto" in the column name): --nccl-proto LL alone
    // is nccl:auto/LL, not every algorithm with LL.
    auto plan = ncclVariantPlan(o.ncclAlgo, o.ncclProto);
    registerNcclPlanVariants(registry, plan);
    sweep.registry = &registry;
    // The columns asked for run next to the named variants (--algo nccl selects them too).
    if (!runsEveryVariant(sweep)) {
      for (const auto& spec : plan) sweep.variants.push_back(spec.name);
    }
#else
    throw EnvironmentError(
        "--nccl-algo/--nccl-proto need the GPU path, which is not in this build");
#endif
  }
  if (o.format != "collbench" && o.format != "nccl-tests" && o.format != "none") {
    throw UsageError(
        fmt::format("--format '{}' is not one of collbench, nccl-tests, none", o.format));
  }
#if defined(COLLBENCH_HAVE_CUDA)
  struct CloseTuningLog {
    ~CloseTuningLog() { NcclTuningLog::close(); }  // the log file goes on every exit path
  } closeTuningLog;
#endif
  if (o.ncclChoice) {
#if defined(COLLBENCH_HAVE_CUDA)
    NcclTuningLog::enable();  // before any NCCL call: NCCL reads NCCL_DEBUG once
#else
    throw EnvironmentError("--nccl-choice needs the GPU path, which is not in this build");
#endif
  }
  SessionOptions session = o.measure.session();
  if (session.world.np == kNpNotGiven && !launchedByMpiLauncher() &&
      onlyGpuVariants(sweep, registry)) {
    // Without a GPU the default stays, and the variants report the no-device line.
    if (int gpus = visibleGpuCount(); gpus > 0) session.world.np = gpus;
  }
  session.transports.shmZeroCopyBytes = zeroCopy;
  return runMeasuringCommand(session, [&](RunSession& s) {
    validateSweep(s.team(), sweep);  // before the run is begun in the database
    checkInjectDelayTarget(s.team(), sweep);
    if (o.ranksPerNode > s.team().size()) {
      throw UsageError(fmt::format("--ranks-per-node {} is larger than the world ({} ranks)",
                                   o.ranksPerNode, s.team().size()));
    }
    // Sizes that cannot fit are refused here, not met by the kernel's out-of-memory killer.
    const std::string memory = checkSweepMemory(s.team(), sweep);
    if (!o.sideBaseline.empty()) {
      checkNamesVariant(s.team(), sweep, o.sideBaseline, "--side-baseline");
    }
    s.beginRun();
    const bool root = s.root();
    std::FILE* out = stdout;
    NcclTestsTableOptions placements{sweep.outOfPlace, sweep.inPlace};
    ReportSet report(out, o.format, o.sideMetric, s.team().size(), placements);
    if (!o.sideBaseline.empty()) report.setSideBaseline(o.sideBaseline);
    std::vector<PointResult> all;
    if (root && o.format != "none") {
      auto lines = sweepDescription(sweep);
      lines.push_back("# " + memory);
      s.printHeader(out, lines);
    }
    RunPeaks peaks = runPeaks(s, sweep);
    if (root && o.format == "collbench") fmt::print(out, "{}", peaks.header);
    ProgressLine progress(sweep, s.team().size(), root);  // on a terminal only
    SweepSink sink;
    sink.onPoint = [&](const PointResult& measured) {
      progress.clear();
      PointResult p = measured;
      peaks.apply(p);
      report.add(p);
      all.push_back(p);
      s.addResult(toRecord(p, s.runId(), sweep.statistic));
      progress.pointDone();
    };
    sink.onGroupEnd = [&] { report.endGroup(); };
    SweepSummary summary = runSweep(s.team(), sweep, sink);
    if (root) {
      progress.clear();
      report.finish(summary);
      if (!o.json.empty()) writeJsonFile(o.json, headerFields(s.record()), all);
      if (!o.csv.empty()) writeCsvFile(o.csv, all);
    }
    RunOutcome outcome{summary.interrupted, summary.wrongTotal, "wrong element(s)"};
    if (root) outcome.low = reportVerdicts(o, peaks, all, s);
    for (const PointResult& p : all) {
      if (p.status != "failed") continue;
      if (outcome.failed++ == 0) outcome.firstFailure = p.variant + ": " + p.message;
    }
    return outcome;
  });
}

}  // namespace

void setupRunCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand(
      "run",
      "Measure collectives (default: allreduce and allgather, 8 B to 64 MiB, every variant usable "
      "here) with nccl-tests flags; results go to the database");
  sub->add_option("collectives", o->collectives,
                  "Comma-separated collectives, or 'all' (allreduce, allgather, reduce_scatter, "
                  "broadcast, reduce, alltoall, sendrecv)");
  sub->add_option("-b,--minbytes", o->minBytes, "Minimum size (K/M/G: binary)")
      ->capture_default_str();
  sub->add_option("-e,--maxbytes", o->maxBytes, "Maximum size")->capture_default_str();
  sub->add_option("-f,--stepfactor", o->stepFactor, "Multiplication factor between sizes")
      ->capture_default_str();
  sub->add_option("-i,--stepbytes", o->stepBytes, "Fixed increment between sizes (overrides -f)");
  sub->add_option("-n,--iters", o->iters, "Timed iterations per point")->capture_default_str();
  sub->add_option("-w,--warmup_iters", o->warmup, "Warm-up iterations per point")
      ->capture_default_str();
  sub->add_option("-c,--check", o->check, "Verification rounds per point (0: none)")
      ->capture_default_str();
  sub->add_option("-d,--datatype", o->dtype,
                  "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double, a list, or all")
      ->capture_default_str();
  sub->add_option("-o,--op", o->op, "sum prod max min avg band bor bxor, a list, or all")
      ->capture_default_str();
  sub->add_option("-r,--root", o->root, "Root rank of broadcast and reduce")->capture_default_str();
  sub->add_option("-N,--run_cycles", o->cycles, "Repeat the whole sweep N times")
      ->capture_default_str();
  sub->add_option("-a,--average", o->average,
                  "How rank times combine per iteration: 0 rank 0, 1 avg, 2 min, 3 max (default: "
                  "3 with --timing per-call, 1 otherwise, as nccl-tests, OSU and IMB average)");
  sub->add_option("--stat", o->stat,
                  "Statistic over iterations: median mean min max p99 (default: median with "
                  "--timing per-call, mean otherwise)");
  sub->add_option("--timing", o->timing,
                  "Whose timing loop: per-call (collbench: barrier, then each call timed), "
                  "nccl-tests (N calls back to back / N; implied by --format nccl-tests), osu "
                  "(OMB: call, then barrier outside the timer), imb (IMB's loop)");
  sub->add_option("--time-budget", o->timeBudget,
                  "Adaptive mode: time per point (e.g. 200ms) picks the iteration count");
  sub->add_option("--algo", o->algo, "Variants to run (comma list of names, or all)")
      ->capture_default_str();
  sub->add_option("--transport", o->transport,
                  "Transport of hand-written algorithms: local, mpi, shm, ucx (default: fastest)");
  sub->add_option("--chunk", o->chunk, "Pipelining chunk of algorithms that pipeline (bytes)");
  sub->add_option("--zero-copy", o->zeroCopy,
                  fmt::format("shm transport: messages from this size up (default {}) are read in "
                              "place from the sender's buffer instead of streaming through the "
                              "rings; off: never",
                              formatSize(kDefaultZeroCopyBytes)));
  sub->add_option("--ranks-per-node", o->ranksPerNode,
                  "Hierarchical algorithms: emulate nodes of this many ranks")
      ->check(CLI::PositiveNumber);
  sub->add_option("--placement", o->placement, "out, in or both")->capture_default_str();
  sub->add_option("--format", o->format,
                  "collbench (tables + side-by-side), nccl-tests (exactly its tables), none")
      ->capture_default_str();
  sub->add_option("--side-metric", o->sideMetric, "Side-by-side view shows busbw or time")
      ->capture_default_str();
  sub->add_option("--side-baseline", o->sideBaseline,
                  "Side-by-side views: give every variant's speed relative to this one (default: "
                  "mpi when it runs)");
  sub->add_option("--json", o->json, "Also write everything measured to this JSON file");
  sub->add_option("--csv", o->csv, "Also write one row per point to this CSV file");
  sub->add_flag("--reference", o->reference,
                "Also measure memcpy on every rank at once at each size (column 'memcpy'; busbw = "
                "aggregate copy bandwidth): the hardware limit to compare with");
  sub->add_option("-z,--blocking", o->blocking,
                  "With --timing nccl-tests: 1 waits for each call and barriers after it inside "
                  "the timed batch (nccl-tests -z 1); per-call timing always does")
      ->capture_default_str();
  sub->add_option("-G,--cudagraph", o->graph,
                  "GPU: with --timing nccl-tests, capture the batch of -n calls in a CUDA graph "
                  "and launch it N times (nccl-tests -G); per-call timing: each sample launches "
                  "a graph of N calls; time / calls")
      ->capture_default_str();
  sub->add_option("-R,--local_register", o->registration,
                  "GPU: 0 none, 1 ncclCommRegister of ncclMemAlloc buffers, 2 symmetric windows "
                  "(as nccl-tests -R)")
      ->capture_default_str();
  sub->add_option("--nccl-algo", o->ncclAlgo,
                  "GPU: also run NCCL_ALGO variants (Ring,Tree,CollNetDirect,CollNetChain,NVLS,"
                  "NVLSTree,PAT or all), each a column; alone: NCCL picks the protocol");
  sub->add_option("--nccl-proto", o->ncclProto,
                  "GPU: NCCL_PROTO values for those variants (LL,LL128,Simple or all); alone: "
                  "NCCL picks the algorithm (nccl:auto/LL)");
  sub->add_flag("--nccl-choice", o->ncclChoice,
                "GPU: record in each NCCL point's message the algorithm/protocol NCCL ran (from "
                "NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING; rank 0 logs a line per call)");
  addMeasureOptions(sub, o->measure, "wait",
                    "Ranks of the local world (threads; default: cores, at least 2; one per "
                    "visible GPU when only GPU variants are named)");
  sub->add_flag("--expect", o->expect,
                "Acceptance test: exit 1 when a collective's best busbw (sizes from 16 MiB) is "
                "below the expected share of its hardware bound (docs/PEAK.md)");
  sub->add_option("--expect-fraction", o->expectFraction,
                  "The share of the bound below which a figure is low (default: per link class, "
                  "a tenth below the usual share, else 0.5)");
  sub->add_option("--inject-delay", o->injectDelay,
                  "Testing aid: add US microseconds, or PCT% of its own time, to every timed call "
                  "[of VARIANT [at SIZE]]");
  sub->callback([o, &action] { action = [o] { return doRun(*o); }; });
}

}  // namespace cb::cli
