// `collbench p2p latency|bw|bibw`: point-to-point links with the OSU micro-benchmarks'
// definitions, over every transport (and raw MPI as "mpi-native"), for one pair of ranks or all of
// them; OSU-like tables, a side-by-side view of the transports, a matrix of the links, and every
// point stored in the database like a collective's (collective = test name, variant = transport).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <tuple>

#include "adapters/P2pRecords.h"
#include "bench/P2p.h"
#include "bench/P2pReport.h"
#include "bench/Peak.h"
#include "cli/Command.h"
#include "cli/MeasureOptions.h"
#include "cli/Validate.h"
#include "core/Error.h"
#include "core/Size.h"
#include "core/Text.h"
#include "topology/LinkBounds.h"

namespace cb::cli {
namespace {

struct P2pCliOptions {
  std::string test;
  std::string minBytes, maxBytes;  // "" = OSU's defaults
  double stepFactor = 2;
  int iters = -1, warmup = -1, window = 64;  // -1: OSU's counts
  std::string transport = "all";
  std::string pair;
  bool allPairs = false;
  std::string matrixSize;
  std::string stat = "median";
  MeasureOptions measure;  // -T, --db, --no-db, --label, --np, --bind, --strict
};

P2pOptions toP2p(const P2pCliOptions& c) {
  P2pOptions o = p2pDefaults(parseP2pTest(c.test));
  if (!c.minBytes.empty()) o.minBytes = parseSize(c.minBytes);
  if (!c.maxBytes.empty()) o.maxBytes = parseSize(c.maxBytes);
  o.stepFactor = c.stepFactor;
  o.iterations = std::max(c.iters, 0);  // 0: OSU's counts
  o.warmup = c.warmup;
  o.window = c.window;
  checkListElements(c.transport, "--transport");
  o.transports = parseP2pTransports(c.transport);
  o.timeoutSeconds = c.measure.timeout;
  o.statistic = parseStatistic(c.stat);
  if (c.iters != -1 && c.iters < 1) {
    throw UsageError(
        fmt::format("-n {} must be at least 1 (leave it out for OSU's counts)", c.iters));
  }
  if (c.warmup < -1) throw UsageError("-w must not be negative");
  if (c.window < 1) throw UsageError(fmt::format("-W {} must be at least 1", c.window));
  if (o.minBytes > o.maxBytes) {
    throw UsageError(fmt::format("minimum size {} is larger than maximum size {} (-b > -e)",
                                 o.minBytes, o.maxBytes));
  }
  checkStepFactor(c.stepFactor, o.minBytes, o.maxBytes);  // run's rule: -f 1 only for one size
  checkTimeout(c.measure.timeout, "-T");
  checkRange(c.stepFactor, "-f", 1, 1 << 20);
  checkDbPath(c.measure.db, c.measure.noDb);
  checkLabel(c.measure.label);
  if (!c.pair.empty() && c.allPairs) throw UsageError("--pair and --all-pairs exclude each other");
  if (!c.pair.empty()) o.pairs = {parseRankPair(c.pair)};
  return o;
}

// The size of the --all-pairs matrix: the one asked for (which must be measured), else the largest
// measured size up to 8 B for latency and 1 MiB for bandwidth (the smallest size if none is).
uint64_t matrixBytes(const P2pCliOptions& c, const P2pOptions& o) {
  std::vector<uint64_t> sizes = p2pSizes(o);
  if (!c.matrixSize.empty()) {
    uint64_t want = parseSize(c.matrixSize);
    if (std::find(sizes.begin(), sizes.end(), want) == sizes.end()) {
      throw UsageError(fmt::format("--matrix-size {} is not one of the measured sizes ({}..{})",
                                   c.matrixSize, sizes.front(), sizes.back()));
    }
    return want;
  }
  uint64_t target = o.test == P2pTest::kLatency ? 8 : uint64_t{1} << 20;
  uint64_t pick = sizes.front();
  for (uint64_t s : sizes) {
    if (s <= target) pick = s;
  }
  return pick;
}

// The bound of each measured pair (docs/PEAK.md), per direction; host ranks only: p2p moves host
// memory, so ranks placed on GPUs get none. Ranks on one host need the copy bandwidth, measured
// here on every rank at once (collective).
std::map<std::pair<int, int>, Bound> pairPeaks(RunSession& s, const P2pOptions& o) {
  std::map<std::pair<int, int>, Bound> out;
  const RunTopology& topo = s.topology();
  for (const auto& p : topo.placements) {
    if (!p.gpuBusId.empty()) return out;
  }
  // The copy passes the ranks' L3 (bench/Peak.h copyProbeBytes): a copy in the cache is no bound.
  const double copy = hostCopyGBps(s.team(), topo.placements, o.timeoutSeconds, nullptr,
                                   ranksCacheBytes(topo.hosts, topo.placements));
  for (const RankPair& pair : o.pairs) {
    out[{pair.a, pair.b}] = pairLinkBound(topo.hosts, topo.placements, pair.a, pair.b, copy);
  }
  return out;
}

std::string iterationsText(const P2pOptions& o) {
  auto part = [&](int n, int w) { return fmt::format("{} timed + {} warm-up", n, w); };
  if (o.iterations > 0 && o.warmup >= 0) return part(o.iterations, o.warmup);
  const uint64_t small = kOsuLargeMessage, large = kOsuLargeMessage + 1;
  auto n = [&](uint64_t b) { return o.iterations > 0 ? o.iterations : osuIterations(o.test, b); };
  auto w = [&](uint64_t b) { return o.warmup >= 0 ? o.warmup : osuWarmup(o.test, b); };
  return fmt::format(
      "{} up to {} B, {} above ({})", part(n(small), w(small)), small, part(n(large), w(large)),
      o.iterations == 0 && o.warmup < 0 ? "OSU's counts" : "OSU's where -n/-w unset");
}

void printDescription(std::FILE* out, const P2pOptions& o, bool allPairs, uint64_t matrix) {
  std::vector<uint64_t> sizes = p2pSizes(o);
  fmt::print(out, "# p2p {}: OSU's definition ({})\n", p2pTestName(o.test),
             o.test == P2pTest::kLatency ? "ping-pong; latency = round trip / 2"
             : o.test == P2pTest::kBw
                 ? fmt::format("window of {} non-blocking sends, then a 4-byte ack; bandwidth = "
                               "size * window / time",
                               o.window)
                 : fmt::format("windows of {} sends both ways at once; bandwidth = 2 * size * "
                               "window / time",
                               o.window));
  if (o.test != P2pTest::kLatency) {
    fmt::print(out, "# bandwidth in GB/s = 1e9 bytes/s (OSU prints MB/s = 1e6 bytes/s)\n");
  }
  fmt::print(out, "# sizes {}..{} B (x{:g}); {}\n", sizes.front(), sizes.back(), o.stepFactor,
             iterationsText(o));
  fmt::print(out,
             "# time = {} over iterations of the initiating rank's samples ({}; OSU reports the "
             "mean: --stat mean); both ranks' samples are stored\n",
             statisticName(o.statistic),
             o.test == P2pTest::kLatency ? "round trip / 2" : "window time / window");
  if (allPairs) {
    fmt::print(out, "# all {} pairs, one after another (the other ranks wait); matrix at {} B\n",
               o.pairs.size(), matrix);
  }
}

int doP2p(const P2pCliOptions& c) {
  P2pOptions o = toP2p(c);  // bad input fails here, before any rank starts
  const uint64_t matrix = matrixBytes(c, o);
  SessionOptions session = c.measure.session();
  return runMeasuringCommand(session, [&](RunSession& s) {
    P2pOptions mine = o;
    if (c.allPairs) mine.pairs = allRankPairs(s.team().size());
    validatePairs(mine.pairs, s.team().size());
    // A send and a receive buffer of the largest size per rank.
    const uint64_t buffer = std::max<uint64_t>(mine.maxBytes, 64);
    checkMemoryOnEveryHost(s.team(), MemoryNeed{saturatingMul(2, buffer), 0, 0}, mine.maxBytes,
                           mine.timeoutSeconds);
    P2pBench bench(s.team(), mine);  // before the run is begun in the database
    s.beginRun();
    const bool root = s.root();
    std::FILE* out = stdout;
    P2pReportSet report{TextOut(out)};
    if (root) {
      s.printHeader(out);
      printDescription(out, mine, c.allPairs, matrix);
      for (const auto& [name, why] : bench.skipped()) report.skipped(name, why);
    }
    const auto peaks = pairPeaks(s, mine);
    std::map<std::tuple<int, int, std::string>, P2pPoint> largest;  // pair and transport
    P2pSink sink;
    sink.onPoint = [&](const P2pPoint& p) {
      report.add(p);
      auto peak = peaks.find({p.pair.a, p.pair.b});
      s.addResult(
          p2pRecord(p, s.runId(), mine.statistic, peak == peaks.end() ? Bound{} : peak->second));
      if (p.status == ResultStatus::kOk) largest[{p.pair.a, p.pair.b, p.transport}] = p;
    };
    sink.onPairEnd = [&](RankPair pair) { report.pairEnd(pair); };
    P2pSummary summary = bench.run(sink);
    if (root) report.finish(s.team().size(), matrix);
    for (const auto& [key, p] : largest) {
      auto peak = peaks.find({p.pair.a, p.pair.b});
      if (!root || peak == peaks.end()) continue;
      const double bound = p2pPeak(p, peak->second);
      if (bound <= 0 && p.test != P2pTest::kLatency && peak->second.cacheResident(p.bytes)) {
        fmt::print(out,
                   "# % of peak: {} {}-{} {}: {:.2f} GB/s at {}: cache-resident (fits the {}): "
                   "no memory bound applies\n",
                   p2pTestName(p.test), p.pair.a, p.pair.b, p.transport, p.bandwidthGBs,
                   formatSize(p.bytes), peak->second.cacheName);
      }
      if (bound <= 0) continue;
      fmt::print(
          out, "# % of peak: {} {}-{} {}: {:.2f} GB/s at {}, {} of the {} bound ({:.2f} GB/s)\n",
          p2pTestName(p.test), p.pair.a, p.pair.b, p.transport, p.bandwidthGBs, formatSize(p.bytes),
          percentOfPeak(p.bandwidthGBs, bound), peak->second.limit, bound);
    }
    return RunOutcome{summary.interrupted, summary.wrongTotal, "byte(s) received wrong"};
  });
}

}  // namespace

void setupP2pCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<P2pCliOptions>();
  sub->add_option("test", o->test, "latency (ping-pong / 2), bw (window + ack), bibw (both ways)")
      ->required();
  sub->add_option("-b,--minbytes", o->minBytes,
                  "Minimum size (K/M/G: binary; default 0 for latency, 1 for bw/bibw, as OSU)");
  sub->add_option("-e,--maxbytes", o->maxBytes, "Maximum size (default 4M, as OSU)");
  sub->add_option("-f,--stepfactor", o->stepFactor, "Multiplication factor between sizes")
      ->capture_default_str();
  sub->add_option("-n,--iters", o->iters,
                  "Timed iterations per point (default: OSU's, 10000/1000 latency and 100/20 "
                  "bandwidth up to / above 8 KiB)");
  sub->add_option("-w,--warmup_iters", o->warmup,
                  "Warm-up iterations per point (default: OSU's, 100/10 latency, 10/2 bandwidth)");
  sub->add_option("-W,--window", o->window, "Messages per window (bw, bibw)")
      ->capture_default_str();
  sub->add_option("--transport", o->transport,
                  "local, mpi, shm, ucx, mpi-native (MPI_Isend/Irecv as OSU), a list, or all")
      ->capture_default_str();
  sub->add_option("--pair", o->pair, "The two ranks A,B to measure (A initiates; default 0,1)");
  sub->add_flag("--all-pairs", o->allPairs,
                "Measure every pair i<j one after another and print a matrix of the links");
  sub->add_option("--matrix-size", o->matrixSize,
                  "Size of the --all-pairs matrix (default: 8 B for latency, 1M for bandwidth)");
  sub->add_option("--stat", o->stat, "Statistic over iterations: median mean min max p99")
      ->capture_default_str();
  addMeasureOptions(sub, o->measure, "exchange",
                    "Ranks of the local world (threads; default: cores, at least 2)");
  runOnParse(sub, action, o, doP2p);
}

}  // namespace cb::cli
