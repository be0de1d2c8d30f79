// The verdict of link diagnosis, shared by the live measurement (`diag links`, bench/) and the
// verdict over imported pairwise logs (`diag logs`, results/): pure functions over numbers.
//
// Pairing (the circle method): n ranks play a round-robin tournament; in each of n-1 rounds
// (n even; n rounds with one rank resting when n is odd) every rank is in at most one pair, and
// every pair meets exactly once, so all n(n-1)/2 links are measured in n-1 steps of n/2 links at
// once instead of n(n-1)/2 steps of one.
//
// Suspects: each link has a value (bandwidth, higher is better; or latency, lower is better) and a
// link class (links of one class should perform alike: same host, same NUMA node, network ...).
// A link's relative performance p is its value against its class's median (value / median, or
// median / value for latency): 1 is typical, 0.5 is half as good. A link is suspect only when
//   p < exp(-k * 1.4826 * MAD(log p of its class))  (a robust outlier: the MAD of the logs,
//                                                 scaled to sigma; ratios spread multiplicatively)
//   p < 1 - gap                                (a practical gap, default 7%),
// so a tight class does not flag a 1% wobble and a noisy class does not flag its own noise.
// Before links, whole endpoints are judged (hosts first when there are 4 or more, then ranks):
// an endpoint is named when its median p is below the links that do not involve it by both
// rules above (their median, k MADs and the gap) and more than half of its links are below the
// gap; its links are set aside and the class medians taken again over the rest. The baseline is
// the other links, not the class: a slow rank among 4 owns half of all links.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb {

// Every diagnosis judges a rank, link or half against the others: UsageError "COMMAND needs at
// least LEAST ranks (this world has N): WHY" before anything is measured when the world is
// smaller.
void requireRanks(int n, int least, std::string_view command, std::string_view why);

struct LinkPair {
  int a = 0, b = 1;
  bool operator==(const LinkPair&) const = default;
};

// Rounds of the circle method: n-1 rounds of n/2 pairs (n even) or n rounds of (n-1)/2 pairs (n
// odd, one rank rests each round). Pairs have a < b. Empty for n < 2.
std::vector<std::vector<LinkPair>> circleRounds(int n);
// One round between the two halves: (i, i + n/2) for i < n/2 (`--quick`).
std::vector<LinkPair> halvesRound(int n);
// `rounds` (of n ranks) played `repeats` times, one after another; each repeat after the first
// with the ranks relabelled (shuffles from a fixed seed: the same on every rank) so that links
// share a round with as few of their earlier round-mates as possible: what a round shares (a busy
// core, a neighbour's trouble) then reaches most of a link's repeats, and its median, almost
// never. Up to 12 ranks each shuffle is improved by swaps, up to 32 the best of 64; beyond, one
// shuffle (a link meets an earlier round-mate again with a chance of about 1/n).
std::vector<std::vector<LinkPair>> relabelledSchedules(
    const std::vector<std::vector<LinkPair>>& rounds, int n, int repeats);

enum class Better : uint8_t { kHigher, kLower };

struct SuspectOptions {
  double k = 3.0;     // MADs (scaled to sigma) beyond the class median
  double gap = 0.07;  // and at least this far below it (fraction)
  int minLinks = 3;   // a class with fewer links (after endpoints set aside) is not judged
  // Endpoints (rank numbers or host names) never to name: re-measured alone, their slowness did
  // not hold, so their links are judged as links.
  std::vector<std::string> cleared;
};

struct LinkValue {
  LinkPair pair;
  std::string linkClass;  // "" = one class for all
  double value = 0;
};

struct LinkJudgement {
  LinkPair pair;
  std::string linkClass;
  double value = 0;
  double classMedian = 0;  // of the values, over the class's links after endpoints set aside
  double relative = 1;     // p: 1 typical, below 1 worse
  double bound = 0;        // the robust bound on p (1 - k * sigma)
  bool judged = false;     // false: class too small, or the link belongs to a named endpoint
  bool suspect = false;
  int endpointGroup = -1;  // index into LinkVerdict::endpoints when set aside for a named endpoint
};

struct EndpointJudgement {
  std::string kind;     // "host" | "rank"
  std::string name;     // host name, or the rank number
  int index = -1;       // rank, or host index
  double relative = 1;  // median p of its links
  double bound = 0;
  int links = 0, slowLinks = 0;  // its links, and those with p < 1 - gap
};

struct LinkVerdict {
  Better better = Better::kHigher;
  std::vector<LinkJudgement> links;          // in input order
  std::vector<EndpointJudgement> endpoints;  // named hosts, then ranks; worst first each
  std::vector<size_t> suspects;              // indices into links, worst first
  std::vector<std::string> notes;            // what could not be judged and why
  bool healthy() const { return endpoints.empty() && suspects.empty(); }
};

// `endpointNames[i]` names endpoint i (rank "3", or a host in imported logs); `hostOf[i]` its
// host (empty vector: no host level). Links name endpoints by index.
struct LinkGraph {
  std::vector<std::string> endpointNames;
  std::vector<std::string> hostOf;
  std::string endpointKind = "rank";  // how endpoints are named in the verdict
};

LinkVerdict judgeLinks(std::span<const LinkValue> links, const LinkGraph& graph, Better better,
                       const SuspectOptions& o = {});

// Median and MAD (unscaled) of values; {0, 0} when empty.
std::pair<double, double> medianMad(std::vector<double> values);

}  // namespace cb

namespace cb {

// ---- stragglers (`diag ranks`) ----
//
// Per iteration of a collective that every rank enters together (a barrier before it, outside
// the timer), each rank has `arrive`: the time from its start to its first message (a rank slow
// to compute, or slow at everything, posts late), and `finish`: the time from its start to the
// end of its call. Per rank, the medians over iterations of its lateness against the other ranks
// (arrive minus the iteration's median arrive; likewise finish) are compared across ranks:
//   a late arriver: median arrival lateness beyond k MADs of the ranks' and more than `gap` of
//                   one communication step of the median call (a rank late at its first step is
//                   late at every step: the call grows by many times its first lateness);
// Finishing late is judged over both directions of a ring (below).
struct RankStraggle {
  int rank = 0;
  double arriveLateUs = 0, finishLateUs = 0;  // medians over iterations
  int lastToArrive = 0, lastToFinish = 0;     // iterations in which it was the last
  int tiedLastToFinish = 0;  // iterations it finished within kTiedSteps of a step of the last
  bool lateArriver = false;
};
struct StraggleVerdict {
  int iterations = 0;
  double iterationUs = 0;  // median over iterations of the median rank's finish
  std::vector<RankStraggle> ranks;
  // [r][s]: iterations in which r and s both finished within kTiedSteps of a step of the last
  // ([r][r] is r's tiedLastToFinish).
  std::vector<std::vector<int>> tiedLast;
  std::vector<std::string> notes;
};
// Two finishes this close (in steps of the median call) are a tie for last: a rank that receives
// slowly and the rank it forwards to finished 0.001-0.013 of a step apart on the tc mesh, while
// the other end of a slow link finishes about a step before its receiver.
inline constexpr double kTiedSteps = 0.1;
// arrive[r][i], finish[r][i] in seconds; `steps`: communication steps of one call.
StraggleVerdict judgeStragglers(const std::vector<std::vector<double>>& arrive,
                                const std::vector<std::vector<double>>& finish, int steps,
                                const SuspectOptions& o = {});

// A ring names the rank behind a slow link, not the link's owner: in a ring where rank r sends to
// r + 1, the rank that finishes last is the one receiving over the slow hop (the call runs at that
// hop's pace, and its receiver finishes about one chunk's transfer after the others). So the
// allreduce runs in both directions (forward: r sends to r + 1; backward: r sends to r - 1), and
// where the late finishers of the two sit says which end is slow:
//   the same rank x in both:                  x receives slowly (its incoming side, or the rank);
//   x forward, x - 2 backward:                x - 1 sends slowly (its outgoing side: both its
//                                             hops, to x forward and to x - 2 backward, are slow);
//   x forward, x - 1 backward:                the link between x - 1 and x, both ways;
// the hypothesis whose two ranks were last in the most calls is named when each was last in half
// of its direction's calls and more than 0.3 of a step (the median call over its steps) late.
// "Last" counts a tie (kTiedSteps): a rank that receives slowly forwards what it received late,
// so in one direction the rank after it finishes with it, and which of the two is a hair later is
// chance; a link's ends are never tied, so a link is counted only in calls where its receiver
// finished last without its other end.
// Otherwise a rank last in 9 of 10 calls of one direction, 0.6 of a step late, names the hop into
// it, one way. Late arrivers (slow before they communicate) are judged over both directions' calls
// together; a hop they send on is theirs.
struct StraggleSuspect {
  enum class Kind : uint8_t { kArrivesLate, kSendsSlowly, kReceivesSlowly, kLink };
  Kind kind = Kind::kArrivesLate;
  int rank = -1;           // the rank named (not kLink)
  int from = -1, to = -1;  // kLink: the slow hop; both ways when `bothWays`
  bool bothWays = false;
  std::string name() const;  // "rank 3" or "link 1-2"
  std::string what() const;  // "arrives late", "sends slowly", "slow both ways", "slow 1 -> 2"
};
// The bounds above (where they come from: Diagnosis.cpp).
struct RingBounds {
  static constexpr double kLastShareEach = 0.5;    // of a direction's calls, each direction
  static constexpr double kLateStepsEach = 0.3;    // median lateness, in steps, each direction
  static constexpr double kLastShareOneWay = 0.9;  // one direction alone
  static constexpr double kLateStepsOneWay = 0.6;
};
struct RingStraggleVerdict {
  StraggleVerdict arrival;            // both directions' calls: arrivals judged here
  StraggleVerdict forward, backward;  // each direction's calls: late finishers judged here
  std::vector<StraggleSuspect> suspects;
  bool healthy() const { return suspects.empty(); }
};
RingStraggleVerdict judgeRingStragglers(const std::vector<std::vector<double>>& forwardArrive,
                                        const std::vector<std::vector<double>>& forwardFinish,
                                        const std::vector<std::vector<double>>& backwardArrive,
                                        const std::vector<std::vector<double>>& backwardFinish,
                                        int steps, const SuspectOptions& o = {});

// Whether a matrix's own repeats agree well enough for its verdict. `repeats[l]` holds link l's
// figure in each schedule; the spread of a link is 1.4826 x the MAD of the logs of its figures,
// and the matrix's is the median link's. A link's figure is the median of its R repeats, whose
// standard error is about 1.25 x spread / sqrt(R): when that exceeds half the gap, a healthy link
// strays past the gap by chance as often as a slow one stays above it, and neither "healthy" nor
// a suspect would mean anything ("too noisy to judge": a concurrent compile on the cores).
struct RepeatAgreement {
  double spreadPct = 0;  // the median link's spread between repeats, percent
  int repeats = 0;
  double gap = 0;  // the suspect gap it was judged against (fraction)
  bool tooNoisy = false;
};
RepeatAgreement repeatAgreement(const std::vector<std::vector<double>>& repeats, double gap);

}  // namespace cb
