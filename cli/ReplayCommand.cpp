// `collbench replay TRACE...`: a recorded job's communication (PyTorch ET, Kineto or Chakra .et
// traces, one per rank) run op by op on this world with the chosen variant (replay/Replay.h).
// Stored as a run: one result per op kind, group and size (collective "replay-<op>" like the
// proxies' "proxy-dp": a ':' would split history's and gate's CASE syntax; placement "out", the
// group in the variant as "<variant>@pg<name>"), one for the whole replay ("replay-total", size =
// bytes per replay, time = communication time of the slowest rank), the trace's name and hash in
// the run's "replay" detail; so runs/show/compare/gate/history/export work on it as on `run`.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "adapters/ReplayRecords.h"
#include "bench/MemoryFit.h"
#include "cli/Command.h"
#include "cli/MeasureOptions.h"
#include "cli/ReplayPredict.h"
#include "cli/Validate.h"
#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Text.h"
#include "replay/Replay.h"
#include "replay/ReplayReport.h"
#include "replay/TraceSet.h"

namespace cb::cli {
namespace {

using namespace cb::replay;

struct ReplayCliOptions {
  std::vector<std::string> traces;
  bool useOneTrace = false;
  std::string kineto;
  int ranks = 0;
  std::string ops;
  double scaleSize = 1;
  std::string gaps = "none";
  bool dryRun = false, allRanks = false, sync = false;
  int iters = 5, warmup = 1, check = 1;
  std::string algo, transport;
  std::string stat = "median";
  std::string json;
  MeasureOptions measure;  // -T, --db, --no-db, --label, --np, --bind, --strict
  ScalePredictFlags predict;
};

double gapScale(const std::string& g) {
  if (g == "none") return 0;
  if (g == "recorded") return 1;
  if (startsWith(g, "scale=")) {
    if (auto x = finiteNumber(g.substr(6)); x && *x >= 0 && *x <= 1e6) return *x;
  }
  throw UsageError(fmt::format("--gaps '{}' is not recorded, none or scale=X (X >= 0)", g));
}

// Collective: the largest op's buffers (and a verification's expected output) x the ranks on
// this host fit in its available memory; else the same one line on every rank, before anything
// is allocated (a trace's sizes, or --scale-size, can ask for more than the machine has).
void checkReplayMemory(Team& team, const TraceSet& set, double timeoutSeconds) {
  const uint64_t perRank = largestBuffers(set) * 3 / 2;
  const int onHost = team.hosts().localSize.at(team.rank());
  const HostMemory host = readHostMemory();
  std::string error;
  if (!host.source.empty() && perRank > host.availableBytes / std::max(onHost, 1)) {
    error = fmt::format(
        "the trace's largest op needs about {} per rank x {} rank(s) on this host, but only {} is "
        "available ({}); lower --scale-size, leave ops out with --ops, or use fewer ranks per host",
        formatSize(perRank), onHost, formatSize(host.availableBytes), host.source);
  }
  for (const auto& e : team.comm().allgatherStrings(error, Deadline::after(timeoutSeconds))) {
    if (!e.empty()) throw UsageError(e);
  }
}

int doReplay(const ReplayCliOptions& c) {
  TraceSetOptions to;
  to.traces = c.traces;
  to.useOneTrace = c.useOneTrace;
  to.kineto = c.kineto;
  if (!c.ops.empty()) {
    for (const auto& name : splitList(c.ops)) {
      OpKind k;
      if (!parseOpKind(name, k)) throw UsageError(fmt::format("--ops: unknown op '{}'", name));
      to.ops.push_back(k);
    }
  }
  if (!(c.scaleSize > 0)) throw UsageError("--scale-size must be positive");
  if (c.ranks < 0) throw UsageError("--ranks must be positive");
  if (c.iters < 1) throw UsageError("--iters must be at least 1");
  if (c.warmup < 0 || c.check < 0) throw UsageError("-w and -c must not be negative");
  checkTimeout(c.measure.timeout, "-T");
  ReplayOptions ro;
  ro.gapScale = gapScale(c.gaps);
  ro.iterations = c.iters;
  ro.warmup = c.warmup;
  ro.checkRounds = c.check;
  ro.timeoutSeconds = c.measure.timeout;
  ro.syncOps = c.sync;
  ro.variant.schedule.transport = c.transport;
  ro.variant.prepareTimeoutSeconds = c.measure.timeout;
  if (!c.transport.empty()) checkTransportName(c.transport);
  const Statistic stat = parseStatistic(c.stat);
  const bool mpi = launchedByMpiLauncher();
  ro.algos = splitList(c.algo.empty() ? (mpi ? "mpi" : "ring,binomial") : c.algo);
  if (!c.dryRun) {
    checkDbPath(c.measure.db, c.measure.noDb);
    checkLabel(c.measure.label);
    if (!c.json.empty()) checkOutputPath(c.json, "--json");
  }
  // Read every trace once, before the world starts. Under MPI a bad trace is reported by rank 0
  // alone (the lifecycle's rule for usage errors), so the error waits for the body.
  TraceSet loaded;
  std::exception_ptr loadError;
  try {
    loaded = loadTraceSet(to);
  } catch (const UsageError&) {
    if (!mpi) throw;
    loadError = std::current_exception();
  }
  if (c.predict.ranks > 0) {
    // A model, not a replay: no world, nothing stored.
    if (loadError) std::rethrow_exception(loadError);
    int world = c.ranks > 0 ? c.ranks : naturalWorldSize(loaded);
    if (world == 0) throw UsageError("the trace does not say its world size: give --ranks N");
    fitToWorld(loaded, world, c.ranks, c.scaleSize);
    return predictReplayStep(loaded, world, c.predict);
  }
  if (c.dryRun) {
    if (loadError) std::rethrow_exception(loadError);  // no world: one process reports
    int world = c.ranks > 0 ? c.ranks : c.measure.world.np != kNpNotGiven ? c.measure.world.np : 0;
    if (world == 0) world = naturalWorldSize(loaded);
    if (world == 0) throw UsageError("the trace does not say its world size: give --np N");
    fitToWorld(loaded, world, c.ranks, c.scaleSize);
    printReplayDryRun(stdout, loaded, world, c.allRanks);
    return 0;
  }
  SessionOptions session = c.measure.session();
  if (!mpi && c.measure.world.np == kNpNotGiven) {
    // The local world takes the trace's ranks unless told otherwise.
    const int n = c.ranks > 0 ? c.ranks : naturalWorldSize(loaded);
    if (n == 0) throw UsageError("the trace does not say its world size: give --np N");
    session.world.np = n;
  }
  return runMeasuringCommand(session, [&](RunSession& s) {
    if (loadError) std::rethrow_exception(loadError);
    TraceSet set = loaded;
    fitToWorld(set, s.team().size(), c.ranks, c.scaleSize);  // every rank alike
    checkReplayMemory(s.team(), set, c.measure.timeout);
    ReplayEngine engine(s.team(), set, ro);  // prepares: before the run begins
    s.beginRun();
    const bool root = s.root();
    std::FILE* out = stdout;
    if (root) {
      s.printHeader(out, replayHeaderLines(set, ro, c.gaps));
      std::fflush(out);
    }
    ReplayTimes t = engine.run();
    RunOutcome outcome;
    if (!root) return outcome;
    ReplaySummary sum = summarizeReplay(set, t, stat);
    std::fputs(replaySummaryText(sum, t, stat).c_str(), out);
    for (const auto& rec : replayRecords(set, sum, t, stat, c.iters, s.runId())) s.addResult(rec);
    const ReplayDetail doc = replayDetail(set, sum, t, c.gaps, c.iters, !c.json.empty());
    s.setDetail("replay", doc.stored);
    if (!c.json.empty()) {
      writeOutputFile(c.json, doc.file, "--json");
    }
    outcome.wrong = std::max<int64_t>(t.wrong, 0);
    return outcome;
  });
}

}  // namespace

void setupReplayCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<ReplayCliOptions>();
  sub->add_option("traces", o->traces,
                  "Trace files: one with {rank} (e.g. dlrm_eg_{rank}.json), one per rank in rank "
                  "order, or one with --use-one-trace; .gz read as gzip")
      ->required();
  sub->add_flag("--use-one-trace", o->useOneTrace, "Replay the one trace file on every rank");
  sub->add_option("--kineto", o->kineto,
                  "Kineto traces of the same job ({rank} pattern, wildcards allowed): their "
                  "kernel durations and gaps go beside the ET ops");
  sub->add_option("--ranks", o->ranks,
                  "Shrink: replay the first N rank traces on N ranks (traffic with the others is "
                  "left out, and the header says how much)");
  sub->add_option("--ops", o->ops, "Op kinds to replay (e.g. allreduce,alltoallv; default all)");
  sub->add_option("--scale-size", o->scaleSize, "What-if: every message X times its size")
      ->capture_default_str();
  sub->add_option("--gaps", o->gaps,
                  "Compute between ops: none, recorded (sleep the trace's gaps), scale=X")
      ->capture_default_str();
  sub->add_flag("--sync", o->sync,
                "A barrier before each collective, outside the timer (as `run` times calls): "
                "per-op times without the arrival skew of the op before");
  sub->add_flag("--dry-run", o->dryRun, "Print the op table and totals per op kind and group");
  sub->add_flag("--all-ranks", o->allRanks, "--dry-run: every rank's op table, not rank 0's");
  sub->add_option("-n,--iters", o->iters, "Timed replays")->capture_default_str();
  sub->add_option("-w,--warmup", o->warmup, "Warm-up replays")->capture_default_str();
  sub->add_option("-c,--check", o->check, "Verify every op once after timing (0: no)")
      ->capture_default_str();
  sub->add_option("--algo", o->algo,
                  "Variants, first match per collective (default: mpi under MPI, ring,binomial "
                  "in the local world); all_to_allv and send/recv go pairwise over --transport");
  sub->add_option("--transport", o->transport,
                  "Transport of hand-written variants and pairwise exchanges (default: fastest)");
  sub->add_option("--stat", o->stat, "Statistic: median mean min max p99")->capture_default_str();
  sub->add_option("--json", o->json, "Also write the summary (rows, timeline) to this file");
  o->predict.add(sub);
  addMeasureOptions(sub, o->measure, "wait",
                    "Ranks of the local world (threads; default: the trace's ranks)");
  runOnParse(sub, action, o, doReplay);
}

}  // namespace cb::cli
