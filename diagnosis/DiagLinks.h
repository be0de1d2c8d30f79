// `diag links`: every link of the world measured in the rounds of the circle method (each round's
// n/2 disjoint pairs at once), then the suspect verdict of diagnosis/Diagnosis.h on bandwidth and
// on latency, then every suspect re-measured alone, side by side with typical links of its class
// measured alone too, so contention between the pairs of a round cannot make a suspect.
//
// A link's two figures, with the OSU definitions (bench/P2p.h):
//   latency:   ping-pong of `latencyBytes`, one-way = round trip / 2 (median over iterations);
//   bandwidth: bibw, both ends send a window of `window` messages of `bandwidthBytes` to the other
//              at once; 2 x S x W / t (median). Both directions at once, so a link slow one way
//              only is seen whichever end starts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/Team.h"
#include "core/Communicator.h"
#include "core/CpuLoad.h"
#include "core/HostMap.h"
#include "core/Transport.h"
#include "diagnosis/Diagnosis.h"

namespace cb {

struct LinkProbeOptions {
  uint64_t latencyBytes = 8;
  uint64_t bandwidthBytes = 1 << 20;
  int window = 8;
  int latencyIters = 200, latencyWarmup = 20;
  int bandwidthIters = 10, bandwidthWarmup = 2;
  double timeoutSeconds = 60;
};

// One link as measured: medians, and the per-iteration samples (seconds: one-way latency; window
// time / window for bandwidth) of the initiating rank (`pair.a`).
struct LinkSample {
  LinkPair pair;
  double latencyUs = 0;
  double bandwidthGBs = 0;
  std::vector<double> latencySamples, bandwidthSamples;
  int64_t wrong = 0;  // bytes received wrong on both ends (bibw)
};

struct DiagLinksOptions {
  LinkProbeOptions probe;
  SuspectOptions suspect;
  bool quick = false;       // one round between the two halves instead of every pair
  bool sequential = false;  // every pair alone, one after another (n(n-1)/2 rounds)
  bool confirm = true;      // re-measure suspects alone before reporting them
  int confirmRepeats = 5;   // interleaved repeats of the suspect and its references
  int maxReferences = 3;
  // Concurrent rounds: the tournament is played `repeats` times over relabelled ranks (so a
  // link's round-mates change) and each link's figures are the medians over repeats; every pair
  // of a round measures for the same time, `windowStretch` times what a typical pair of the first
  // round needed for its counts (0: by count, as alone).
  int repeats = 5;
  double windowStretch = 0.3;
};

// A suspect measured again alone, against typical links of its class also alone.
struct Confirmation {
  std::string metric;  // "bandwidth" | "latency"
  LinkPair pair;
  double matrixRelative = 1;                  // p in the matrix
  double aloneValue = 0, referenceValue = 0;  // medians over repeats (GB/s or us)
  double aloneRelative = 1;  // median over repeats of p alone against the references alone
  std::vector<LinkPair> references;
  bool confirmed = false;
};

struct DiagLinksResult {
  int ranks = 0;
  int rounds = 0;            // measurement rounds of one schedule (n-1, n, 1 or n(n-1)/2)
  int repeats = 1;           // schedules played (concurrent rounds only)
  double matrixSeconds = 0;  // wall time of the matrix rounds (calibration included)
  double latencyWindowSeconds = 0, bandwidthWindowSeconds = 0;  // per round; 0: by count
  std::vector<LinkSample> links;   // every pair measured, in the first schedule's round order
  LinkVerdict bandwidth, latency;  // over the matrix
  std::vector<Confirmation> confirmations;
  // The verdict after confirmation: links and endpoints whose re-measurement did not confirm are
  // dropped from `bandwidth`/`latency` copies here.
  LinkVerdict finalBandwidth, finalLatency;
  double confirmSeconds = 0;
  // Whether the schedules agreed (both metrics; the worse one): with --schedules 3 or more.
  RepeatAgreement agreement;
  // What other processes took from each host's ranks from the matrix's start to the last
  // confirmation (core/CpuLoad.h); complete on rank 0.
  std::vector<CpuContention> cpu;
  // The host whose ranks lost the most CPU to others, when that made them wait (null: none did).
  const CpuContention* contended() const;
  bool healthy() const { return finalBandwidth.healthy() && finalLatency.healthy(); }
  // Candidates the matrix pointed at that had no typical link of their class to be re-measured
  // against (every other link of the class slow alike, suspect or sharing the rank): never a
  // suspect, and the run is too noisy to judge rather than healthy.
  std::vector<Confirmation> unreferenced() const;
};

// Each pair's class (the same on every rank): links are judged against the links of their class.
using LinkClassOf = std::function<std::string(int, int)>;
// The topology's class of each pair (HostMap::linkClass: core-group, numa, cross-numa, nvlink,
// ..., network; from the host names alone when no topology was detected), by name.
LinkClassOf topologyLinkClass(const HostMap& hosts);
// The endpoints of a team's links: its ranks, named by number, with their hosts.
LinkGraph rankGraph(const HostMap& hosts);

// Collective over the team: the whole `diag links` measurement and verdict over the team's
// transport `transport` (set up once and cached by the team; a fault injector is the team's
// transport decorator). Pairs are measured over that one transport: each round's pairs exchange
// at once, the other ranks wait at the round's barrier. `linkClass` empty: topologyLinkClass. The
// result is complete on rank 0 only. Throws (the same error kind on every rank) when an exchange
// fails.
DiagLinksResult runDiagLinks(Team& team, const std::string& transport, const DiagLinksOptions& o,
                             const LinkClassOf& linkClass = {});

}  // namespace cb
