// Point-to-point link benchmarks with the OSU micro-benchmarks' definitions (osu_latency.c,
// osu_bw.c, osu_bibw.c), over every host transport and over raw MPI:
//   latency: ping-pong; one iteration = A sends, B receives and sends back, A receives;
//            the sample is A's round trip / 2.
//   bw:      A sends a window of W messages at once (one exchange with W sends), B receives them,
//            then B sends a 4-byte ack; the sample is A's window time, bandwidth = S * W / t.
//   bibw:    A and B each send a window to the other and receive the other's at the same time
//            (one exchange with W sends and W receives); bandwidth = 2 * S * W / t.
// As in OSU each point runs warm-up iterations, then timed ones with no barrier between them
// (the ping-pong and the ack synchronize the two ranks; a barrier per iteration would add its own
// skew to a sub-microsecond latency). Unlike OSU, every iteration is timed and kept, on both ranks
// of the pair, so any statistic can be reported; the reported sample is the initiator's (A's), as
// OSU's. With --stat mean the figures are OSU's exactly (mean = total time / iterations).
// Bandwidth is in GB/s = 1e9 bytes/s, like the rest of collbench (OSU prints MB/s = 1e6 bytes/s).
//
// Ways to move the data: the team's transports by name (each window is one Transport::exchange),
// "mpi-native" among them: MPI_Isend / MPI_Irecv / wait-all on a duplicate of the world
// communicator, as OSU does (collectives/mpi/MpiNativeTransport.h; only in an MPI world). Every
// rank calls runP2p() with the same options; pairs are measured one after another while the other
// ranks wait.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/Team.h"
#include "collectives/transport/Transports.h"
#include "core/Communicator.h"
#include "core/Result.h"
#include "core/Stats.h"

namespace cb {

enum class P2pTest : uint8_t { kLatency, kBw, kBibw };
std::string_view p2pTestName(P2pTest t);      // "latency" | "bw" | "bibw"
P2pTest parseP2pTest(std::string_view name);  // UsageError for anything else

inline constexpr std::string_view kMpiNative = kMpiNativeTransport;
// Every name --transport accepts (besides "all"): the host transports, then "mpi-native".
std::vector<std::string> p2pTransportNames();
// "all" (or empty) -> {"all"}; otherwise the listed names, checked (UsageError naming the known
// ones), duplicates dropped.
std::vector<std::string> parseP2pTransports(std::string_view list);

// A measured link. `a` initiates: it pings (latency) and sends the window (bw).
struct RankPair {
  int a = 0, b = 1;
  bool operator==(const RankPair&) const = default;
};
// "0,1" -> {0, 1}. UsageError for malformed text, negative ranks or the same rank twice.
RankPair parseRankPair(std::string_view text);
// Every pair i < j of n ranks, in order (0,1), (0,2), ..., (n-2,n-1).
std::vector<RankPair> allRankPairs(int n);
// UsageError unless the world has at least 2 ranks and every pair is two distinct ranks of it.
void validatePairs(std::span<const RankPair> pairs, int worldSize);

// How results are stored and shown: the transport name, plus "@a-b" for pairs other than 0-1
// (so a default run's rows read "shm", "mpi-native" and an --all-pairs run keeps pairs apart).
std::string p2pVariantLabel(const std::string& transport, RankPair pair);

// OSU's iteration counts (osu_util.h): latency 10000 timed + 100 warm-up up to 8 KiB, 1000 + 10
// above; bw and bibw 100 + 10 up to 8 KiB, 20 + 2 above.
inline constexpr uint64_t kOsuLargeMessage = 8192;
int osuIterations(P2pTest t, uint64_t bytes);
int osuWarmup(P2pTest t, uint64_t bytes);

struct P2pOptions {
  P2pTest test = P2pTest::kLatency;
  std::vector<std::string> transports{"all"};  // names, or {"all"}: every one usable here
  std::vector<RankPair> pairs{RankPair{}};     // measured one after another
  // OSU's defaults: latency from 0 B, bw/bibw from 1 B, to 4 MiB, doubling. A sweep from 0
  // continues at 1 (OSU's "size ? size * 2 : 1").
  uint64_t minBytes = 0;
  uint64_t maxBytes = 4ull << 20;
  double stepFactor = 2;
  int iterations = 0;           // -n; 0: OSU's count for the size
  int warmup = -1;              // -w; -1: OSU's count for the size
  int window = 64;              // -W: messages per window (bw, bibw)
  double timeoutSeconds = 300;  // -T: deadline of every exchange
  Statistic statistic = Statistic::kMedian;
};

// OSU's defaults for a test: minBytes 0 for latency, 1 otherwise.
P2pOptions p2pDefaults(P2pTest t);
std::vector<uint64_t> p2pSizes(const P2pOptions& o);

struct P2pPoint {
  P2pTest test = P2pTest::kLatency;
  std::string transport;
  RankPair pair;
  LinkClass link = LinkClass::kCrossNuma;  // of the pair (the team's HostMap::linkClass)
  uint64_t bytes = 0;
  int window = 1;                           // messages per iteration each way (1 for latency)
  ResultStatus status = ResultStatus::kOk;  // ok | failed
  std::string message;                      // why, when failed
  int iterations = 0;
  // Per iteration, in seconds, as OSU divides its time: one-way latency (round trip / 2), or the
  // window time / W (time per message) for bw and bibw. `samples` are A's; `rankSamples` holds A's
  // then B's (2 x iterations).
  std::vector<double> samples;
  std::vector<double> rankSamples;
  Summary summary;          // over samples
  double timeSeconds = 0;   // the chosen statistic of samples (latency: one-way, in seconds)
  double bandwidthGBs = 0;  // bw: S / t; bibw: 2 S / t; latency: S / t (implied one-way rate)
  int64_t wrong = -1;       // bytes received wrong on the pair's receivers (-1: not checked)
};

// The metric of a point: latency in us, or bandwidth in GB/s; and whether lower is better.
double p2pMetric(const P2pPoint& p);
bool p2pLowerIsBetter(P2pTest t);
// The value of the metric for a given time per sample (seconds), e.g. for min/max columns.
double p2pMetricForTime(const P2pPoint& p, double seconds);

// Called on rank 0 only.
struct P2pSink {
  std::function<void(const P2pPoint&)> onPoint;
  // A transport of "all" that can't be used here, with the reason (not measured, not stored).
  std::function<void(const std::string& transport, const std::string& why)> onSkipped;
  // After the last point of a pair (every transport and size).
  std::function<void(RankPair)> onPairEnd;
};

struct P2pSummary {
  int points = 0, failed = 0;
  int64_t wrongTotal = 0;
  bool interrupted = false;
  std::vector<std::string> transports;  // measured, in order
};

// A prepared benchmark: options checked, transports taken from the team (set up on their first
// use, once per team). The constructor is collective over the team; it throws UsageError for bad
// options or pairs (the same on every rank), EnvironmentError when a transport named explicitly
// can't be used here or when none of "all" can. Transports of "all" that can't be used are listed
// in skipped().
class P2pBench {
 public:
  P2pBench(Team& team, const P2pOptions& o);
  ~P2pBench();
  P2pBench(const P2pBench&) = delete;
  P2pBench& operator=(const P2pBench&) = delete;
  const std::vector<std::string>& transports() const;  // the ones that will be measured
  const std::vector<std::pair<std::string, std::string>>& skipped() const;  // (name, why)
  // Collective: every pair, size and transport. A failed exchange is reported as a failed point
  // and then rethrown on every rank (the transport can't be trusted afterwards).
  P2pSummary run(const P2pSink& sink);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// P2pBench + run, reporting skipped transports through the sink first.
P2pSummary runP2p(Team& team, const P2pOptions& o, const P2pSink& sink);

}  // namespace cb
