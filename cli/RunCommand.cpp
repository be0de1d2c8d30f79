// `collbench run [COLLECTIVES] [nccl-tests flags]`: measure collectives in the current world
// (local threads by default, MPI processes under mpirun), print nccl-tests tables and a
// side-by-side view of the variants, and store everything in SQLite as it is measured.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "adapters/RunPeaks.h"
#include "bench/Peak.h"
#include "bench/Report.h"
#include "bench/Sweep.h"
#include "bench/TimingLoops.h"
#include "cli/Command.h"
#include "cli/Progress.h"
#include "cli/RunFlags.h"
#include "cli/Validate.h"
#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/ShmTransport.h"
#include "core/CpuLoad.h"
#include "core/CpuRoundTrip.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Text.h"
#include "results/CpuLoadDetail.h"
#include "topology/LinkBounds.h"
#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/NcclTuning.h"
#include "collectives/nccl/NcclVariantPlan.h"
#include "collectives/nccl/NcclVariants.h"
#endif

namespace cb::cli {
namespace {

// The stored runs `run` holds its CPUs' distance against.
constexpr int kPlacementHistoryRuns = 20;

std::string placementNote(const PlacementVsStored& vs) {
  return fmt::format(
      "# cpus  : {:.1f}x {} than in this environment's stored runs ({:.0f}-{:.0f} ns in {} of its "
      "{} newest): the machine placed these CPUs anew (a VM's host moving its vCPUs); these "
      "figures will not compare with those runs' (a gate between them is inconclusive)",
      vs.ratio, vs.farther ? "farther apart" : "closer", vs.lo, vs.hi, vs.like, vs.stored);
}

// Rank 0, after the tables: the % of peak view and one verdict per collective and variant;
// returns how many are low when --expect asks (0 otherwise).
int64_t reportVerdicts(const RunOptions& o, const RunPeaks& peaks,
                       const std::vector<ResultRecord>& all, RunSession& s) {
  const RunVerdicts v = runVerdicts(all, peaks, o.expectFraction);
  s.setDetail("peak", v.detailJson);
  if (o.format == "collbench") fmt::print("{}", v.text);
  if (!o.expect) return 0;
  for (const std::string& line : v.low) fmt::print(stderr, "collbench: --expect: {}\n", line);
  return static_cast<int64_t>(v.low.size());
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
  if (!launchedByMpiLauncher() && onlyGpuVariants(sweep, registry)) {
    session.world.gpuRanks = true;  // --bind auto: each rank near its GPU
    // Without a GPU the default stays, and the variants report the no-device line.
    if (int gpus = visibleGpuCount(); gpus > 0 && session.world.np == kNpNotGiven) {
      session.world.np = gpus;
    }
  }
  session.transports.shmZeroCopyBytes = zeroCopy;
  return runMeasuringCommand(session, [&](RunSession& s) {
    // The one check of the options, before the run is begun in the database.
    const SweepPlan plan = SweepPlan::checked(s.team(), sweep);
    checkInjectDelayTarget(s.team(), plan);
    if (o.ranksPerNode > s.team().size()) {
      throw UsageError(fmt::format("--ranks-per-node {} is larger than the world ({} ranks)",
                                   o.ranksPerNode, s.team().size()));
    }
    // Sizes that cannot fit are refused here, not met by the kernel's out-of-memory killer.
    const std::string memory = checkSweepMemory(s.team(), plan);
    if (!o.sideBaseline.empty()) {
      checkNamesVariant(s.team(), plan, o.sideBaseline, "--side-baseline");
    }
    s.beginRun();
    const bool root = s.root();
    // How far apart the first two ranks' CPUs are now (a VM's host may move them between runs);
    // the others wait asleep, not polling a CPU the helper thread needs.
    CpuRoundTrip roundTrip;
    if (root) roundTrip = ranksRoundTrip(s.topology().placements);
    s.comm().idleBarrier(Deadline::after(o.measure.timeout));
    std::FILE* out = stdout;
    NcclTestsTableOptions placements{sweep.outOfPlace, sweep.inPlace};
    ReportSet report(out, o.format, o.sideMetric, s.team().size(), placements);
    if (!o.sideBaseline.empty()) report.setSideBaseline(o.sideBaseline);
    std::vector<ResultRecord> all;
    if (root && o.format != "none") {
      auto lines = sweepDescription(sweep);
      lines.push_back("# " + memory);
      if (std::string t = expectedSweepLine(plan); !t.empty()) lines.push_back(t);
      if (roundTrip.known()) {
        lines.push_back(fmt::format(
            "# cpus  : a cache line's round trip between CPU {} (rank 0) and CPU {} (rank 1): "
            "{:.0f} ns (p10), {:.0f} ns (median)",
            roundTrip.a, roundTrip.b, roundTrip.p10Ns, roundTrip.medianNs));
        const PlacementVsStored vs =
            placementVsStored(roundTrip.medianNs, s.storedRoundTrips(kPlacementHistoryRuns));
        if (vs.differs) lines.push_back(placementNote(vs));
      }
      s.printHeader(out, lines);
    }
    RunPeaks peaks = runPeaks(s, sweep);
    if (root && o.format == "collbench") fmt::print(out, "{}", peaks.header);
    ProgressLine progress(plan, root);  // on a terminal only
    SweepSink sink;
    sink.onPoint = [&](const ResultRecord& measured) {
      progress.clear();
      ResultRecord p = measured;
      p.runId = s.runId();
      peaks.apply(p);
      report.add(p);
      s.addResult(p);
      all.push_back(std::move(p));
      progress.pointDone();
    };
    sink.onGroupEnd = [&] { report.endGroup(); };
    const CpuUse cpuBefore = readCpuUse();
    SweepSummary summary = runSweep(s.team(), plan, sink);
    // What other processes took from the ranks' CPUs while they measured: stored for `gate`,
    // said when it made the ranks wait (the figures are then partly the scheduler's).
    const std::vector<CpuContention> load = gatherCpuContention(
        s.team().comm(), cpuBefore, s.hosts().hostOfRank, Deadline::after(o.measure.timeout));
    // The same probe after the sweep: a VM's host that moved the vCPUs while the ranks measured
    // shows as two placements (the figures then mix them); the others wait asleep again.
    CpuRoundTrip after;
    if (root && roundTrip.known()) after = ranksRoundTrip(s.topology().placements);
    s.comm().idleBarrier(Deadline::after(o.measure.timeout));
    if (root) s.setDetail(kCpuLoadDetail, cpuLoadDetail({load, roundTrip, after}));
    if (root) {
      progress.clear();
      report.finish(summary);
      if (placedApart(roundTrip.medianNs, after.medianNs) && o.format != "none") {
        fmt::print(out,
                   "# cpus  : the ranks' CPUs moved while measuring: a cache line's round trip "
                   "{:.0f} ns before the sweep, {:.0f} ns after (medians); the figures may mix "
                   "two placements of the machine's CPUs (a VM's host moving its vCPUs)\n",
                   roundTrip.medianNs, after.medianNs);
      }
      if (const CpuContention* c = mostContended(load); c && o.format != "none") {
        fmt::print(out,
                   "# load: while measuring ({:.1f} s), {}: a rank waiting for its CPU times the "
                   "scheduler's time slice; gate such runs against interleaved ones or rerun on "
                   "a quiet host\n",
                   c->seconds, contentionFacts(*c));
      }
      if (!o.json.empty()) writeJsonFile(o.json, headerFields(s.record()), all);
      if (!o.csv.empty()) writeCsvFile(o.csv, all);
    }
    RunOutcome outcome{summary.interrupted, summary.wrongTotal, "wrong element(s)"};
    if (root) outcome.low = reportVerdicts(o, peaks, all, s);
    for (const ResultRecord& p : all) {
      if (p.status != ResultStatus::kFailed) continue;
      if (outcome.failed++ == 0) outcome.firstFailure = p.variant + ": " + p.message;
    }
    return outcome;
  });
}

}  // namespace

void setupRunCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<RunOptions>();
  addRunFlags(sub, *o);
  runOnParse(sub, action, o, doRun);
}

}  // namespace cb::cli
