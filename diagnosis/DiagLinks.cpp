// `diag links` measurement: circle-method rounds of concurrent pairs, the verdict, confirmation.
#include "diagnosis/DiagLinks.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "core/Clock.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/SharedMemory.h"
#include "core/Stats.h"

namespace cb {
namespace {

uint8_t patternByte(int rank, uint64_t i) {
  return static_cast<uint8_t>((i * 131u + static_cast<uint64_t>(rank) * 29u + 7u) & 0xffu);
}

// Every rank throws the first failure any rank had, with its kind.
void agreeOnFailure(Communicator& comm, const std::optional<std::string>& mine, Deadline d) {
  for (const std::string& s : comm.allgatherStrings(mine.value_or(""), d)) {
    if (s.empty()) continue;
    size_t bar = s.find('|');
    throw Error(static_cast<ErrorKind>(std::stoi(s.substr(0, bar))), s.substr(bar + 1));
  }
}

std::string encode(const std::exception& e) {
  auto* err = dynamic_cast<const Error*>(&e);
  return fmt::format("{}|{}", static_cast<int>(err ? err->kind() : ErrorKind::kInternal), e.what());
}

// What one rank measured in one round, gathered to every rank (fixed size; samples follow).
struct RoundFigures {
  int32_t peer = -1;
  int32_t initiator = 0;
  int64_t wrong = 0;
  int64_t latencyCount = 0, bandwidthCount = 0;
  double latencySeconds = 0, bandwidthSeconds = 0;  // each phase, warm-up included
};

constexpr double kMinLatencyWindow = 3e-3, kMinBandwidthWindow = 12e-3;  // seconds

// Where this rank's thread runs while it measures a link. On a host with fewer CPUs than ranks
// the scheduler time-slices the ranks, and two ends that land on one CPU copy in turns: alone, a
// pair measured 35 or 70 GB/s by where the two threads happened to be. So the two ends of the
// j-th pair of a round are placed on CPUs 2j and 2j + 1 (modulo the CPUs this rank may use):
// every pair spans two CPUs, and the pairs of a round share them alike. Hosts with a CPU per rank
// (bound ranks, GPUs) are left as they are.
class PairPlacement {
 public:
  explicit PairPlacement(int ranksOnHost) {
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &saved_)) cpus_.push_back(c);
    }
    active_ = cpus_.size() >= 2 && static_cast<size_t>(ranksOnHost) > cpus_.size();
  }
  PairPlacement(const PairPlacement&) = delete;
  PairPlacement& operator=(const PairPlacement&) = delete;
  ~PairPlacement() { restore(); }

  void place(size_t slot) {
    if (!active_) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus_[slot % cpus_.size()], &one);
    placed_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  void restore() {
    if (placed_) sched_setaffinity(0, sizeof saved_, &saved_);
    placed_ = false;
  }

 private:
  cpu_set_t saved_{};
  std::vector<int> cpus_;
  bool active_ = false, placed_ = false;
};

class Prober {
 public:
  // How long every pair of a round keeps measuring, per phase, from the phase's common start (0:
  // a fixed count of samples instead).
  struct Windows {
    double latency = 0, bandwidth = 0;
  };

  Prober(Communicator& comm, Transport& t, const LinkProbeOptions& o, int ranksOnHost)
      : comm_(comm), t_(t), o_(o), placement_(ranksOnHost) {
    const size_t bytes = std::max<uint64_t>({o.bandwidthBytes, o.latencyBytes, 64});
    send_ = SharedHostBuffer(bytes);
    recv_ = SharedHostBuffer(bytes);
    control_ = SharedHostBuffer(2 * sizeof(int32_t));
    auto* s = static_cast<uint8_t*>(send_.data());
    for (size_t i = 0; i < bytes; ++i) s[i] = patternByte(comm.rank(), i);
    recv_.faultIn();
    control_.faultIn();
  }

  Deadline deadline() const { return Deadline::after(o_.timeoutSeconds); }

  // The windows that give a typical pair of `round` its counts and more: the round measured by
  // count, each phase's window the median over its pairs of the time that took, times `stretch`.
  // Every rank returns the same windows. The round's links are not kept: a fast pair that is done
  // leaves the slower ones alone on the cores, which is what the windows prevent.
  Windows calibrate(const std::vector<LinkPair>& round, double stretch) {
    std::vector<RoundFigures> figs;
    run({round}, {}, &figs);
    std::vector<double> lat, bw;
    for (const RoundFigures& f : figs) {
      if (f.peer < 0 || !f.initiator) continue;
      lat.push_back(f.latencySeconds);
      bw.push_back(f.bandwidthSeconds);
    }
    // Not shorter than a few time slices of the OS scheduler: in a shorter window some ranks of
    // an oversubscribed host have not run yet, and the shares are luck. Not longer than 4 times
    // that: one round measured under a passing load must not stretch the whole run (a window
    // always holds one sample; the shares of the time are what counts).
    auto window = [&](std::vector<double> v, double least) {
      return std::clamp(stretch * medianOf(v), least, 4 * least);
    };
    return {window(lat, kMinLatencyWindow), window(bw, kMinBandwidthWindow)};
  }

  // Measures every round's pairs at once. With windows, each pair keeps taking samples until its
  // phase's window closes (at least one sample), so the pairs of a round share the cores for the
  // same time and none is timed alone while the others wait. `last`: the figures of the last
  // round, from every rank.
  std::vector<LinkSample> run(const std::vector<std::vector<LinkPair>>& rounds, Windows w,
                              std::vector<RoundFigures>* last = nullptr) {
    std::vector<LinkSample> out;
    const int me = comm_.rank();
    for (const auto& round : rounds) {
      int peer = -1;
      bool initiator = false;
      for (size_t j = 0; j < round.size(); ++j) {
        const LinkPair& p = round[j];
        if (p.a == me) peer = p.b, initiator = true;
        if (p.b == me) peer = p.a;
        if (p.a == me || p.b == me) placement_.place(2 * j + (p.a == me ? 0 : 1));
      }
      std::vector<double> lat, bw;
      RoundFigures fig;
      fig.peer = peer;
      fig.initiator = initiator;
      std::optional<std::string> failure;
      // Ranks left out of the round (a pair measured alone, an odd rank's bye) wait asleep: a
      // polling bystander takes CPU time from the pairs it waits for on a host with fewer cores
      // than ranks, and which pair it slows depends on where the scheduler left it.
      const bool bystanders = 2 * round.size() < static_cast<size_t>(comm_.size());
      auto endPhase = [&] {
        if (!bystanders) return;
        if (peer >= 0) {
          comm_.barrier(deadline());
        } else {
          comm_.idleBarrier(deadline());
        }
      };
      stopIfInterrupted(comm_, deadline());  // the round's agreed stop point
      comm_.barrier(deadline());
      if (peer >= 0) {
        try {
          const double t0 = nowSeconds();
          latency(peer, initiator, w.latency, lat);
          fig.latencySeconds = nowSeconds() - t0;
        } catch (const std::exception& e) {
          failure = encode(e);
        }
      }
      endPhase();
      agreeOnFailure(comm_, failure, deadline());  // also lines up the bandwidth phase
      if (peer >= 0) {
        try {
          const double t0 = nowSeconds();
          fig.wrong = bibw(peer, initiator, w.bandwidth, bw);
          fig.bandwidthSeconds = nowSeconds() - t0;
        } catch (const std::exception& e) {
          failure = encode(e);
        }
      }
      endPhase();
      agreeOnFailure(comm_, failure, deadline());
      placement_.restore();
      fig.latencyCount = static_cast<int64_t>(lat.size());
      fig.bandwidthCount = static_cast<int64_t>(bw.size());
      // The figures of every rank, then the samples, padded to the longest.
      auto figs = comm_.allgather<RoundFigures>(fig, deadline());
      size_t most = 0;
      for (const RoundFigures& f : figs) {
        most = std::max(most, static_cast<size_t>(f.latencyCount + f.bandwidthCount));
      }
      std::vector<double> mine(most, 0.0);
      std::copy(lat.begin(), lat.end(), mine.begin());
      std::copy(bw.begin(), bw.end(), mine.begin() + static_cast<std::ptrdiff_t>(lat.size()));
      auto all = comm_.allgatherBytes(mine.data(), most * sizeof(double), deadline());
      if (last) *last = figs;
      if (me != 0) continue;
      for (const LinkPair& p : round) {
        const RoundFigures& f = figs[static_cast<size_t>(p.a)];
        const auto* base =
            reinterpret_cast<const double*>(all.data()) + static_cast<size_t>(p.a) * most;
        const auto nl = static_cast<size_t>(f.latencyCount);
        LinkSample s;
        s.pair = p;
        s.latencySamples.assign(base, base + nl);
        s.bandwidthSamples.assign(base + nl, base + nl + static_cast<size_t>(f.bandwidthCount));
        s.latencyUs = medianOf(s.latencySamples) * 1e6;
        // In a common window, bytes over time (as OSU's bibw): the pairs of a round share the
        // cores by time slices, so one bibw window's time says whether it fitted in a slice,
        // and the whole says what share of the time the link delivered. Alone, the median
        // window: a slice lost to another process is an outlier, not the link.
        double t = medianOf(s.bandwidthSamples);  // per message
        if (w.bandwidth > 0 && !s.bandwidthSamples.empty()) {
          t = 0;
          for (double x : s.bandwidthSamples) t += x;
          t /= static_cast<double>(s.bandwidthSamples.size());
        }
        s.bandwidthGBs = t > 0 ? 2.0 * static_cast<double>(o_.bandwidthBytes) / t / 1e9 : 0;
        s.wrong = f.wrong + figs[static_cast<size_t>(p.b)].wrong;
        out.push_back(std::move(s));
      }
    }
    return out;
  }

 private:
  // Ping-pongs between two control words: whether another batch of samples follows. The
  // initiator decides (its window), so both ends of a pair stop after the same sample.
  bool another(int peer, bool initiator, bool more) {
    auto* word = static_cast<int32_t*>(control_.data());
    if (initiator) {
      word[0] = more ? 1 : 0;
      SendOp s{peer, word, sizeof(int32_t)};
      t_.exchange(std::span<const SendOp>(&s, 1), {}, deadline());
      return more;
    }
    RecvOp r{peer, word + 1, sizeof(int32_t)};
    t_.exchange({}, std::span<const RecvOp>(&r, 1), deadline());
    return word[1] != 0;
  }

  // Takes samples by count (window 0), or in batches of `batch` until the window that opened at
  // `start` closes (both ends must agree on the mode: `window` is the same on both).
  template <typename Sample>
  void sample(int peer, bool initiator, double start, double window, size_t count, size_t batch,
              std::vector<double>& samples, const Sample& one) {
    if (!(window > 0)) {
      samples.resize(count);
      for (double& x : samples) x = one();
      return;
    }
    const double end = start + window;
    while (another(peer, initiator, samples.empty() || nowSeconds() < end)) {
      for (size_t i = 0; i < batch; ++i) samples.push_back(one());
    }
  }

  void latency(int peer, bool initiator, double window, std::vector<double>& samples) {
    const double start = nowSeconds();
    SendOp s{peer, send_.data(), o_.latencyBytes};
    RecvOp r{peer, recv_.data(), o_.latencyBytes};
    auto once = [&](Deadline d) {
      if (initiator) {
        t_.exchange(std::span<const SendOp>(&s, 1), {}, d);
        t_.exchange({}, std::span<const RecvOp>(&r, 1), d);
      } else {
        t_.exchange({}, std::span<const RecvOp>(&r, 1), d);
        t_.exchange(std::span<const SendOp>(&s, 1), {}, d);
      }
    };
    for (int i = 0; i < o_.latencyWarmup; ++i) once(deadline());
    // Batches of 10 ping-pongs: a control word after each sample would double the phase.
    sample(peer, initiator, start, window, static_cast<size_t>(o_.latencyIters), 10, samples, [&] {
      Deadline d = deadline();
      double t0 = nowSeconds();
      once(d);
      return (nowSeconds() - t0) / 2;
    });
  }

  // Returns the bytes received wrong in the last window.
  int64_t bibw(int peer, bool initiator, double window, std::vector<double>& samples) {
    const double start = nowSeconds();
    const auto w = static_cast<size_t>(o_.window);
    std::vector<SendOp> sends(w, SendOp{peer, send_.data(), o_.bandwidthBytes});
    std::vector<RecvOp> recvs(w, RecvOp{peer, recv_.data(), o_.bandwidthBytes});
    auto* got = static_cast<uint8_t*>(recv_.data());
    for (uint64_t i = 0; i < o_.bandwidthBytes; ++i) {
      got[i] = static_cast<uint8_t>(~patternByte(peer, i));
    }
    // In a window one warm-up will do (the transport's first use); it comes out of the window.
    const int warmup = window > 0 ? std::min(o_.bandwidthWarmup, 1) : o_.bandwidthWarmup;
    for (int i = 0; i < warmup; ++i) t_.exchange(sends, recvs, deadline());
    sample(peer, initiator, start, window, static_cast<size_t>(o_.bandwidthIters), 1, samples, [&] {
      Deadline d = deadline();
      double t0 = nowSeconds();
      t_.exchange(sends, recvs, d);
      return (nowSeconds() - t0) / static_cast<double>(w);
    });
    int64_t wrong = 0;
    for (uint64_t i = 0; i < o_.bandwidthBytes; ++i) wrong += got[i] != patternByte(peer, i);
    return wrong;
  }

  Communicator& comm_;
  Transport& t_;
  const LinkProbeOptions o_;
  SharedHostBuffer send_, recv_, control_;
  PairPlacement placement_;
};

double metricOf(const LinkSample& s, bool bandwidth) {
  return bandwidth ? s.bandwidthGBs : s.latencyUs;
}

std::vector<LinkValue> valuesOf(const std::vector<LinkSample>& links, bool bandwidth,
                                const std::function<std::string(int, int)>& linkClass) {
  std::vector<LinkValue> v;
  for (const LinkSample& s : links) {
    v.push_back({s.pair, linkClass(s.pair.a, s.pair.b), metricOf(s, bandwidth)});
  }
  return v;
}

// The links to re-measure for a verdict: its suspects, and the two worst links of each named
// endpoint (a rank's or a host's slowness must show alone too).
std::vector<size_t> candidatesOf(const LinkVerdict& v) {
  std::vector<size_t> out = v.suspects;
  for (size_t g = 0; g < v.endpoints.size(); ++g) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < v.links.size(); ++i) {
      if (v.links[i].endpointGroup == static_cast<int>(g)) mine.push_back(i);
    }
    std::sort(mine.begin(), mine.end(),
              [&](size_t x, size_t y) { return v.links[x].relative < v.links[y].relative; });
    for (size_t k = 0; k < mine.size() && k < 2; ++k) out.push_back(mine[k]);
  }
  return out;
}

// Typical links of the class of link `i`: not suspect, not set aside, sharing no rank with it
// when possible, closest to the class median first.
std::vector<size_t> referencesFor(const LinkVerdict& v, size_t i, const std::set<size_t>& avoid,
                                  int most) {
  const LinkJudgement& l = v.links[i];
  std::vector<std::pair<int, size_t>> ranked;  // (shares a rank, index)
  for (size_t j = 0; j < v.links.size(); ++j) {
    const LinkJudgement& c = v.links[j];
    if (j == i || avoid.count(j) || c.linkClass != l.linkClass || c.endpointGroup >= 0) continue;
    bool shares = c.pair.a == l.pair.a || c.pair.a == l.pair.b || c.pair.b == l.pair.a ||
                  c.pair.b == l.pair.b;
    ranked.push_back({shares ? 1 : 0, j});
  }
  std::sort(ranked.begin(), ranked.end(), [&](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return std::abs(v.links[x.second].relative - 1) < std::abs(v.links[y.second].relative - 1);
  });
  std::vector<size_t> out;
  for (size_t k = 0; k < ranked.size() && static_cast<int>(k) < most; ++k) {
    out.push_back(ranked[k].second);
  }
  return out;
}

// Drops from `v` what confirmation did not uphold.
LinkVerdict keepConfirmed(const LinkVerdict& v, const std::vector<Confirmation>& cs,
                          const std::string& metric) {
  LinkVerdict out = v;
  auto upheld = [&](LinkPair p) {
    for (const Confirmation& c : cs) {
      if (c.metric == metric && c.pair == p) return c.confirmed;
    }
    return true;  // not re-measured: stands as measured
  };
  out.suspects.clear();
  for (size_t i : v.suspects) {
    if (upheld(v.links[i].pair)) {
      out.suspects.push_back(i);
    } else {
      out.links[i].suspect = false;
    }
  }
  out.endpoints.clear();
  for (size_t g = 0; g < v.endpoints.size(); ++g) {
    int tried = 0, held = 0;
    for (const Confirmation& c : cs) {
      if (c.metric != metric) continue;
      for (size_t i = 0; i < v.links.size(); ++i) {
        if (v.links[i].endpointGroup == static_cast<int>(g) && v.links[i].pair == c.pair) {
          ++tried;
          held += c.confirmed;
        }
      }
    }
    if (tried == 0 || 2 * held > tried) out.endpoints.push_back(v.endpoints[g]);
  }
  return out;
}

// A rank (or host) named on one metric explains the suspect links it is part of on the other:
// those are dropped there, so the verdict names the rank and not its links.
void explainByEndpoints(LinkVerdict& v, const LinkVerdict& other, const LinkGraph& graph) {
  std::vector<int> ranks;
  std::vector<std::string> hosts;
  for (const EndpointJudgement& e : other.endpoints) {
    if (e.kind == "host") {
      hosts.push_back(e.name);
    } else {
      ranks.push_back(e.index);
    }
  }
  auto touches = [&](LinkPair p) {
    for (int end : {p.a, p.b}) {
      if (std::find(ranks.begin(), ranks.end(), end) != ranks.end()) return true;
      if (static_cast<size_t>(end) < graph.hostOf.size() &&
          std::find(hosts.begin(), hosts.end(), graph.hostOf[static_cast<size_t>(end)]) !=
              hosts.end()) {
        return true;
      }
    }
    return false;
  };
  std::vector<size_t> kept;
  for (size_t i : v.suspects) {
    if (touches(v.links[i].pair)) {
      v.links[i].suspect = false;
    } else {
      kept.push_back(i);
    }
  }
  v.suspects = kept;
}

// One sample per link in the order of the first repeat: each figure the median over repeats,
// the samples of all repeats kept.
std::vector<LinkSample> mergeRepeats(std::vector<LinkSample> measured, int repeats) {
  if (repeats <= 1) return measured;
  const size_t per = measured.size() / static_cast<size_t>(repeats);
  std::vector<LinkSample> out(measured.begin(),
                              measured.begin() + static_cast<std::ptrdiff_t>(per));
  for (LinkSample& l : out) {
    std::vector<double> lat, bw;
    l.latencySamples.clear();
    l.bandwidthSamples.clear();
    l.wrong = 0;
    for (const LinkSample& m : measured) {
      if (!(m.pair == l.pair)) continue;
      lat.push_back(m.latencyUs);
      bw.push_back(m.bandwidthGBs);
      l.latencySamples.insert(l.latencySamples.end(), m.latencySamples.begin(),
                              m.latencySamples.end());
      l.bandwidthSamples.insert(l.bandwidthSamples.end(), m.bandwidthSamples.begin(),
                                m.bandwidthSamples.end());
      l.wrong += m.wrong;
    }
    l.latencyUs = medianOf(lat);
    l.bandwidthGBs = medianOf(bw);
  }
  return out;
}

}  // namespace

const CpuContention* DiagLinksResult::contended() const { return mostContended(cpu); }

std::vector<Confirmation> DiagLinksResult::unreferenced() const {
  std::vector<Confirmation> out;
  for (const Confirmation& c : confirmations) {
    if (c.references.empty()) out.push_back(c);
  }
  return out;
}

LinkClassOf topologyLinkClass(const HostMap& hosts) {
  return [hosts](int a, int b) { return std::string(linkClassName(hosts.linkClass(a, b))); };
}

LinkGraph rankGraph(const HostMap& hosts) {
  LinkGraph graph;
  for (int r = 0; r < hosts.size(); ++r) graph.endpointNames.push_back(std::to_string(r));
  graph.hostOf = hosts.hostOfRank;
  return graph;
}

namespace {

// The rounds of one schedule: the two halves (--quick), every pair alone (--sequential), or the
// circle method's rounds of disjoint pairs.
std::vector<std::vector<LinkPair>> scheduleOf(const DiagLinksOptions& o, int n) {
  if (o.quick) return {halvesRound(n)};
  if (!o.sequential) return circleRounds(n);
  std::vector<std::vector<LinkPair>> rounds;
  for (const auto& round : circleRounds(n)) {
    for (const LinkPair& p : round) rounds.push_back({p});
  }
  return rounds;
}

// The matrix: every schedule played, each link's median over them, and whether they agree.
void measureMatrix(Prober& prober, const std::vector<std::vector<LinkPair>>& rounds,
                   bool concurrent, const DiagLinksOptions& o, DiagLinksResult& res) {
  // Pairs measured at once share the cores (and, on a cluster, switches and memory): every pair
  // of a round measures for the same windows, so none is timed while the others already wait.
  Prober::Windows windows;
  if (concurrent && o.windowStretch > 0) {
    windows = prober.calibrate(rounds.front(), o.windowStretch);
    res.latencyWindowSeconds = windows.latency;
    res.bandwidthWindowSeconds = windows.bandwidth;
  }
  // What the pairs of a round share moves them together (a busy core, a pair that yields the
  // CPU or spins): each repeat is the same tournament over relabelled ranks, so a link meets
  // other round-mates each time, and the median over repeats keeps what belongs to the link.
  std::vector<std::vector<LinkPair>> all = rounds;
  for (int rep = 1; rep < res.repeats; ++rep) all.insert(all.end(), rounds.begin(), rounds.end());
  if (!o.quick) all = relabelledSchedules(rounds, res.ranks, res.repeats);
  std::vector<LinkSample> measuredLinks = prober.run(all, windows);
  if (res.repeats >= 3 && !o.quick) {
    // Each link's figure in every schedule, per metric: do the repeats agree?
    for (bool bandwidth : {true, false}) {
      std::map<std::pair<int, int>, std::vector<double>> byLink;
      for (const LinkSample& l : measuredLinks) {
        byLink[{l.pair.a, l.pair.b}].push_back(bandwidth ? l.bandwidthGBs : l.latencyUs);
      }
      std::vector<std::vector<double>> repeats;
      for (auto& [pair, values] : byLink) repeats.push_back(std::move(values));
      RepeatAgreement a = repeatAgreement(repeats, o.suspect.gap);
      if (a.spreadPct > res.agreement.spreadPct) res.agreement = a;
    }
  }
  res.links = mergeRepeats(std::move(measuredLinks), res.repeats);
}

// Rank 0: judge the matrix and list the candidates not yet re-measured, each with its references.
std::vector<Confirmation> planConfirmations(DiagLinksResult& res, const LinkClassOf& linkClass,
                                            const LinkGraph& graph, const SuspectOptions& so,
                                            const DiagLinksOptions& o,
                                            const std::vector<Confirmation>& done) {
  auto measured = [&](const std::string& metric, LinkPair p) {
    for (const Confirmation& c : done) {
      if (c.metric == metric && c.pair == p) return true;
    }
    return false;
  };
  res.bandwidth = judgeLinks(valuesOf(res.links, true, linkClass), graph, Better::kHigher, so);
  res.latency = judgeLinks(valuesOf(res.links, false, linkClass), graph, Better::kLower, so);
  std::vector<Confirmation> pending;
  if (!o.confirm) return pending;
  for (bool bw : {true, false}) {
    const LinkVerdict& v = bw ? res.bandwidth : res.latency;
    const std::string metric = bw ? "bandwidth" : "latency";
    std::vector<size_t> cand = candidatesOf(v);
    std::set<size_t> avoid(cand.begin(), cand.end());
    for (size_t i : v.suspects) avoid.insert(i);
    for (size_t i : cand) {
      if (measured(metric, v.links[i].pair)) continue;
      Confirmation c;
      c.metric = metric;
      c.pair = v.links[i].pair;
      c.matrixRelative = v.links[i].relative;
      for (size_t r : referencesFor(v, i, avoid, o.maxReferences)) {
        c.references.push_back(v.links[r].pair);
      }
      pending.push_back(c);
    }
  }
  return pending;
}

// Collective: rank 0's confirmations to every rank, as the distinct links to re-measure (suspects
// and references interleaved); empty when there is nothing to confirm.
std::vector<LinkPair> broadcastConfirmations(Communicator& comm,
                                             const std::vector<Confirmation>& pending,
                                             const Deadline& deadline) {
  // [count, a, b, (a, b) x count] per confirmation.
  std::vector<int32_t> plan;
  for (const Confirmation& c : pending) {
    plan.push_back(static_cast<int32_t>(c.references.size()));
    plan.push_back(c.pair.a);
    plan.push_back(c.pair.b);
    for (LinkPair p : c.references) {
      plan.push_back(p.a);
      plan.push_back(p.b);
    }
  }
  auto sizes = comm.allgather<int64_t>(static_cast<int64_t>(plan.size()), deadline);
  if (sizes[0] == 0) return {};
  plan.resize(static_cast<size_t>(sizes[0]));
  auto gathered = comm.allgatherBytes(plan.data(), plan.size() * sizeof(int32_t), deadline);
  std::memcpy(plan.data(), gathered.data(), plan.size() * sizeof(int32_t));
  std::vector<LinkPair> order;
  for (size_t k = 0; k < plan.size();) {
    const auto refs = static_cast<size_t>(plan[k]);
    for (size_t r = 0; r <= refs; ++r) {
      LinkPair p{plan[k + 1 + 2 * r], plan[k + 2 + 2 * r]};
      if (std::find(order.begin(), order.end(), p) == order.end()) order.push_back(p);
    }
    k += 3 + 2 * refs;
  }
  return order;
}

// Rank 0: each pending confirmation decided from the links measured alone (`again[rep *
// order.size() + k]` is link order[k] in repeat rep), appended to `done`.
void decideConfirmations(std::vector<Confirmation>& pending, const std::vector<LinkSample>& again,
                         const std::vector<LinkPair>& order, const DiagLinksOptions& o,
                         std::vector<Confirmation>& done) {
  auto value = [&](LinkPair p, bool bw, size_t rep) {
    size_t k = static_cast<size_t>(std::find(order.begin(), order.end(), p) - order.begin());
    return metricOf(again[rep * order.size() + k], bw);
  };
  const auto reps = static_cast<size_t>(o.confirmRepeats);
  for (Confirmation& c : pending) {
    const bool bw = c.metric == "bandwidth";
    std::vector<double> mine, refsMedian, ratios;
    for (size_t rep = 0; rep < reps; ++rep) {
      std::vector<double> refs;
      for (LinkPair p : c.references) refs.push_back(value(p, bw, rep));
      double x = value(c.pair, bw, rep), ref = medianOf(refs);
      mine.push_back(x);
      refsMedian.push_back(ref);
      if (!refs.empty()) ratios.push_back(bw ? (ref > 0 ? x / ref : 1) : (x > 0 ? ref / x : 1));
    }
    c.aloneValue = medianOf(mine);
    if (c.references.empty()) {
      // Nothing typical to compare with: the matrix alone names no one (a suspect is a page to
      // an engineer), and the result says it could not judge (DiagLinksResult::unreferenced).
      c.confirmed = false;
    } else {
      // Slower than its references by the gap in the median and in all repeats but one:
      // one noisy repeat neither makes nor unmakes a suspect.
      c.referenceValue = medianOf(refsMedian);
      c.aloneRelative = medianOf(ratios);
      size_t below = 0;
      for (double r : ratios) below += r < 1 - o.suspect.gap;
      c.confirmed =
          c.aloneRelative < 1 - o.suspect.gap && below + 1 >= std::max<size_t>(ratios.size(), 2);
    }
    done.push_back(c);
  }
}

// Rank 0: a named rank or host that confirmation did not uphold is cleared (never named again);
// true when one was, so the links are judged again as links.
bool clearUnupheld(const DiagLinksResult& res, const std::vector<Confirmation>& done,
                   SuspectOptions& so) {
  bool cleared = false;
  for (const std::string& metric : {std::string("bandwidth"), std::string("latency")}) {
    const LinkVerdict& v = metric == "bandwidth" ? res.bandwidth : res.latency;
    LinkVerdict kept = keepConfirmed(v, done, metric);
    for (const EndpointJudgement& e : v.endpoints) {
      bool upheld = false;
      for (const EndpointJudgement& k : kept.endpoints) upheld = upheld || k.name == e.name;
      if (!upheld && std::find(so.cleared.begin(), so.cleared.end(), e.name) == so.cleared.end()) {
        so.cleared.push_back(e.name);
        cleared = true;
      }
    }
  }
  return cleared;
}

}  // namespace

DiagLinksResult runDiagLinks(Team& team, const std::string& transport, const DiagLinksOptions& o,
                             const LinkClassOf& classOf) {
  Communicator& comm = team.comm();
  const int n = comm.size();
  requireRanks(n, 3, "diag links", "a link is judged against the others");
  DiagLinksResult res;
  res.ranks = n;
  const std::vector<std::vector<LinkPair>> rounds = scheduleOf(o, n);
  res.rounds = static_cast<int>(rounds.size());
  const bool concurrent = std::any_of(rounds.begin(), rounds.end(),
                                      [](const std::vector<LinkPair>& r) { return r.size() > 1; });
  res.repeats = concurrent ? std::max(1, o.repeats) : 1;
  const LinkGraph graph = rankGraph(team.hosts());
  const LinkClassOf linkClass = classOf ? classOf : topologyLinkClass(team.hosts());
  const std::vector<std::string>& hostOf = team.hosts().hostOfRank;
  const auto onMyHost = hostOf.empty()
                            ? n
                            : std::count(hostOf.begin(), hostOf.end(),
                                         hostOf[static_cast<size_t>(comm.rank()) % hostOf.size()]);
  Prober prober(comm, team.transport(transport), o.probe, static_cast<int>(onMyHost));
  comm.barrier(prober.deadline());
  const CpuUse cpuBefore = readCpuUse();
  double t0 = nowSeconds();
  measureMatrix(prober, rounds, concurrent, o, res);
  res.matrixSeconds = nowSeconds() - t0;

  // Judge, re-measure the new candidates alone, drop what confirmation does not uphold; a named
  // rank or host that is not upheld is cleared (never named again) and the links judged again,
  // so its slow links are judged as links. Rank 0 decides; the plan is broadcast.
  SuspectOptions so = o.suspect;
  std::vector<Confirmation> done;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<Confirmation> pending;
    if (comm.rank() == 0) pending = planConfirmations(res, linkClass, graph, so, o, done);
    const std::vector<LinkPair> order = broadcastConfirmations(comm, pending, prober.deadline());
    if (order.empty()) break;
    // Every distinct link once per repeat, alone, suspects and references interleaved, repeated:
    // drifting noise hits them alike.
    std::vector<std::vector<LinkPair>> alone;
    for (int rep = 0; rep < o.confirmRepeats; ++rep) {
      for (LinkPair p : order) alone.push_back({p});
    }
    double c0 = nowSeconds();
    std::vector<LinkSample> again = prober.run(alone, {});
    res.confirmSeconds += nowSeconds() - c0;
    bool cleared = false;
    if (comm.rank() == 0) {
      decideConfirmations(pending, again, order, o, done);
      cleared = clearUnupheld(res, done, so);
    }
    if (!comm.anyTrue(cleared, prober.deadline())) break;
  }
  // Taken by every rank before anything is decided: a verdict under a stranger's load is none.
  res.cpu = gatherCpuContention(comm, cpuBefore, hostOf, prober.deadline());
  if (comm.rank() == 0) {
    res.confirmations = done;
    res.finalBandwidth = keepConfirmed(res.bandwidth, done, "bandwidth");
    res.finalLatency = keepConfirmed(res.latency, done, "latency");
    explainByEndpoints(res.finalBandwidth, res.finalLatency, graph);
    explainByEndpoints(res.finalLatency, res.finalBandwidth, graph);
  }
  return res;
}

}  // namespace cb
