// Circle-method pairing and the suspect verdict (see Diagnosis.h for the rule).
#include "diagnosis/Diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "core/Error.h"
#include "core/Stats.h"

namespace cb {

void requireRanks(int n, int least, std::string_view command, std::string_view why) {
  if (n >= least) return;
  throw UsageError(
      fmt::format("{} needs at least {} ranks (this world has {}): {}", command, least, n, why));
}

std::vector<std::vector<LinkPair>> circleRounds(int n) {
  std::vector<std::vector<LinkPair>> rounds;
  if (n < 2) return rounds;
  // Odd n: a phantom player n; whoever meets it rests that round.
  const int m = n % 2 == 0 ? n : n + 1;
  const int ring = m - 1;  // players 0..m-2 rotate around the fixed player m-1
  for (int r = 0; r < ring; ++r) {
    std::vector<LinkPair> round;
    for (int i = 0; i < m / 2; ++i) {
      int a = i == 0 ? m - 1 : (r + i) % ring;
      int b = i == 0 ? r : (r - i + ring) % ring;
      if (a >= n || b >= n) continue;
      round.push_back({std::min(a, b), std::max(a, b)});
    }
    std::sort(round.begin(), round.end(),
              [](const LinkPair& x, const LinkPair& y) { return x.a < y.a; });
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<LinkPair> halvesRound(int n) {
  std::vector<LinkPair> round;
  for (int i = 0; i < n / 2; ++i) round.push_back({i, i + n / 2});
  return round;
}

namespace {

std::vector<std::vector<LinkPair>> relabel(const std::vector<std::vector<LinkPair>>& rounds,
                                           const std::vector<int>& perm) {
  std::vector<std::vector<LinkPair>> out;
  for (const auto& round : rounds) {
    std::vector<LinkPair> mapped;
    for (LinkPair p : round) {
      int a = perm[static_cast<size_t>(p.a)], b = perm[static_cast<size_t>(p.b)];
      mapped.push_back({std::min(a, b), std::max(a, b)});
    }
    out.push_back(std::move(mapped));
  }
  return out;
}

}  // namespace

std::vector<std::vector<LinkPair>> relabelledSchedules(
    const std::vector<std::vector<LinkPair>>& rounds, int n, int repeats) {
  std::vector<std::vector<LinkPair>> out = rounds;
  if (n < 2) return out;
  auto linkId = [n](LinkPair p) { return p.a * n + p.b; };
  // Two links -> the schedules in which they shared a round. A candidate costs the meetings its
  // round-mates already had: meeting a link met twice is worse than meeting two met once.
  std::map<std::pair<int, int>, int> met;
  auto meetings = [&](const std::vector<std::vector<LinkPair>>& rs, bool record) {
    int again = 0;
    for (const auto& round : rs) {
      for (size_t i = 0; i < round.size(); ++i) {
        for (size_t j = i + 1; j < round.size(); ++j) {
          std::pair<int, int> key = std::minmax(linkId(round[i]), linkId(round[j]));
          if (record) {
            ++met[key];
          } else if (auto it = met.find(key); it != met.end()) {
            again += it->second * it->second;
          }
        }
      }
    }
    return again;
  };
  meetings(rounds, true);
  std::mt19937 gen(20261124u);
  auto shuffled = [&] {
    std::vector<int> perm(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) perm[static_cast<size_t>(r)] = r;
    for (size_t i = perm.size() - 1; i > 0; --i) {
      // By hand: std::shuffle's algorithm is not specified, and every rank must agree.
      std::swap(perm[i], perm[gen() % (i + 1)]);
    }
    return perm;
  };
  // Up to 12 ranks: shuffles improved by swapping two labels while that helps (restarts: 8);
  // up to 32: the best of 64 shuffles; beyond: one shuffle.
  const int starts = n <= 12 ? 8 : n <= 32 ? 64 : 1;
  for (int rep = 1; rep < repeats; ++rep) {
    std::vector<int> best;
    int bestAgain = -1;
    for (int s = 0; s < starts && bestAgain != 0; ++s) {
      std::vector<int> perm = shuffled();
      int again = n <= 32 ? meetings(relabel(rounds, perm), false) : 0;
      for (bool better = n <= 12 && again > 0; better && again > 0;) {
        better = false;
        for (size_t i = 0; i < perm.size() && again > 0; ++i) {
          for (size_t j = i + 1; j < perm.size() && again > 0; ++j) {
            std::swap(perm[i], perm[j]);
            const int tried = meetings(relabel(rounds, perm), false);
            if (tried < again) {
              again = tried;
              better = true;
            } else {
              std::swap(perm[i], perm[j]);
            }
          }
        }
      }
      if (bestAgain < 0 || again < bestAgain) best = perm, bestAgain = again;
    }
    const auto chosen = relabel(rounds, best);
    if (n <= 32) meetings(chosen, true);
    out.insert(out.end(), chosen.begin(), chosen.end());
  }
  return out;
}

namespace {

constexpr double kMadToSigma = 1.4826;  // MAD of a normal sample = 0.6745 sigma

// The robust lower bound of ratios: median / exp(k sigma) with sigma the MAD of log(ratio) scaled
// to sigma. Ratios are multiplicative (half speed and double speed are as far from typical), so
// their spread is measured in logs: a few noisy fast links must not widen the bound below.
double robustBound(const std::vector<double>& ratios, double k) {
  std::vector<double> logs;
  for (double r : ratios) logs.push_back(std::log(std::max(r, 1e-12)));
  auto [center, mad] = medianMad(logs);
  return std::exp(center - k * kMadToSigma * mad);
}

// p of every link against its class's median over the links still in play (`active`).
void relate(LinkVerdict& v, const std::vector<bool>& active) {
  std::map<std::string, std::vector<double>> byClass;
  for (size_t i = 0; i < v.links.size(); ++i) {
    if (active[i]) byClass[v.links[i].linkClass].push_back(v.links[i].value);
  }
  std::map<std::string, double> medians;
  for (auto& [cls, values] : byClass) medians[cls] = medianOf(values);
  for (size_t i = 0; i < v.links.size(); ++i) {
    LinkJudgement& l = v.links[i];
    if (!active[i]) continue;
    l.classMedian = medians[l.linkClass];
    if (v.better == Better::kHigher) {
      l.relative = l.classMedian > 0 ? l.value / l.classMedian : 1;
    } else {
      l.relative = l.value > 0 ? l.classMedian / l.value : 1;
    }
  }
}

// Names the endpoints (of one level) most of whose links are slow against the links that do
// not involve them, and sets their links aside. `members[e]` lists the links that count for e.
// The baseline is the rest of the links, not the class median: a slow rank among 4 owns half of
// all links and would drag the class median down to itself.
void judgeEndpoints(LinkVerdict& v, std::vector<bool>& active,
                    const std::vector<std::string>& names,
                    const std::vector<std::vector<size_t>>& members, const std::string& kind,
                    const std::function<bool(size_t, LinkPair)>& touches, const SuspectOptions& o) {
  std::vector<EndpointJudgement> named;
  size_t judged = 0;
  for (size_t e = 0; e < names.size(); ++e) {
    std::vector<bool> mine(v.links.size(), false);
    std::vector<double> ps, rest;
    for (size_t i : members[e]) {
      if (!active[i]) continue;
      mine[i] = true;
      ps.push_back(v.links[i].relative);
    }
    for (size_t i = 0; i < v.links.size(); ++i) {
      if (active[i] && !mine[i] && !touches(e, v.links[i].pair)) {
        rest.push_back(v.links[i].relative);
      }
    }
    if (ps.size() < 2 || rest.size() < 3) continue;
    ++judged;
    const double center = medianOf(rest);
    const double bound = robustBound(rest, o.k);
    const double m = medianOf(ps);
    int slow = 0;
    for (double p : ps) slow += p < center * (1 - o.gap);
    if (!(m < bound && m < center * (1 - o.gap) && 2 * slow > static_cast<int>(ps.size()))) {
      continue;
    }
    if (std::find(o.cleared.begin(), o.cleared.end(), names[e]) != o.cleared.end()) continue;
    EndpointJudgement ej;
    ej.kind = kind;
    ej.name = names[e];
    ej.index = static_cast<int>(e);
    ej.relative = center > 0 ? m / center : m;
    ej.bound = center > 0 ? bound / center : bound;
    ej.links = static_cast<int>(ps.size());
    ej.slowLinks = slow;
    named.push_back(ej);
  }
  if (judged < 3) {
    v.notes.push_back(
        fmt::format("{} {}s: too few to tell a slow {} from slow links", names.size(), kind, kind));
    return;
  }
  std::sort(named.begin(), named.end(),
            [](const auto& x, const auto& y) { return x.relative < y.relative; });
  for (const EndpointJudgement& ej : named) {
    int group = static_cast<int>(v.endpoints.size());
    for (size_t i : members[static_cast<size_t>(ej.index)]) {
      if (!active[i]) continue;
      active[i] = false;
      v.links[i].endpointGroup = group;
    }
    v.endpoints.push_back(ej);
  }
}

}  // namespace

std::pair<double, double> medianMad(std::vector<double> values) {
  if (values.empty()) return {0, 0};
  double m = medianOf(values);
  for (double& x : values) x = std::abs(x - m);
  return {m, medianOf(values)};
}

LinkVerdict judgeLinks(std::span<const LinkValue> links, const LinkGraph& graph, Better better,
                       const SuspectOptions& o) {
  LinkVerdict v;
  v.better = better;
  const size_t n = graph.endpointNames.size();
  for (const LinkValue& l : links) {
    LinkJudgement j;
    j.pair = l.pair;
    j.linkClass = l.linkClass;
    j.value = l.value;
    v.links.push_back(j);
  }
  std::vector<bool> active(v.links.size(), true);
  relate(v, active);

  // Hosts first, when there are enough of them and they are not the endpoints themselves.
  if (graph.hostOf.size() == n) {
    std::vector<std::string> hosts;
    std::vector<int> hostIndex(n);
    for (size_t e = 0; e < n; ++e) {
      auto it = std::find(hosts.begin(), hosts.end(), graph.hostOf[e]);
      hostIndex[e] = static_cast<int>(it - hosts.begin());
      if (it == hosts.end()) hosts.push_back(graph.hostOf[e]);
    }
    if (hosts.size() >= 4 && hosts.size() < n) {
      std::vector<std::vector<size_t>> members(hosts.size());
      for (size_t i = 0; i < v.links.size(); ++i) {
        int ha = hostIndex[static_cast<size_t>(v.links[i].pair.a)];
        int hb = hostIndex[static_cast<size_t>(v.links[i].pair.b)];
        if (ha == hb) continue;  // a host's own links say nothing about its network
        members[static_cast<size_t>(ha)].push_back(i);
        members[static_cast<size_t>(hb)].push_back(i);
      }
      auto onHost = [&](size_t h, LinkPair p) {
        return hostIndex[static_cast<size_t>(p.a)] == static_cast<int>(h) ||
               hostIndex[static_cast<size_t>(p.b)] == static_cast<int>(h);
      };
      judgeEndpoints(v, active, hosts, members, "host", onHost, o);
      relate(v, active);
    }
  }
  std::vector<std::vector<size_t>> members(n);
  for (size_t i = 0; i < v.links.size(); ++i) {
    members[static_cast<size_t>(v.links[i].pair.a)].push_back(i);
    members[static_cast<size_t>(v.links[i].pair.b)].push_back(i);
  }
  auto isEnd = [](size_t e, LinkPair p) {
    return p.a == static_cast<int>(e) || p.b == static_cast<int>(e);
  };
  judgeEndpoints(v, active, graph.endpointNames, members, graph.endpointKind, isEnd, o);
  relate(v, active);

  // Links, class by class, over what is left.
  std::map<std::string, std::vector<size_t>> byClass;
  for (size_t i = 0; i < v.links.size(); ++i) {
    if (active[i]) byClass[v.links[i].linkClass].push_back(i);
  }
  for (auto& [cls, idx] : byClass) {
    if (static_cast<int>(idx.size()) < o.minLinks) {
      v.notes.push_back(fmt::format("link class '{}': {} link(s), too few to judge (needs {})",
                                    cls.empty() ? "all" : cls, idx.size(), o.minLinks));
      continue;
    }
    std::vector<double> ps;
    for (size_t i : idx) ps.push_back(v.links[i].relative);
    const double center = medianOf(ps);  // 1 up to rounding
    const double bound = robustBound(ps, o.k);
    for (size_t i : idx) {
      LinkJudgement& l = v.links[i];
      l.judged = true;
      l.bound = bound;
      l.suspect = l.relative < bound && l.relative < center * (1 - o.gap);
      if (l.suspect) v.suspects.push_back(i);
    }
  }
  std::sort(v.suspects.begin(), v.suspects.end(),
            [&](size_t x, size_t y) { return v.links[x].relative < v.links[y].relative; });
  return v;
}

}  // namespace cb

namespace cb {

StraggleVerdict judgeStragglers(const std::vector<std::vector<double>>& arrive,
                                const std::vector<std::vector<double>>& finish, int steps,
                                const SuspectOptions& o) {
  StraggleVerdict v;
  const size_t n = arrive.size();
  if (n == 0 || finish.size() != n) return v;
  const size_t iters = arrive[0].size();
  v.iterations = static_cast<int>(iters);
  std::vector<std::vector<double>> lateA(n), lateF(n);
  std::vector<double> iterTimes;
  std::vector<int> lastA(n, 0), lastF(n, 0);
  for (size_t i = 0; i < iters; ++i) {
    std::vector<double> a(n), f(n);
    for (size_t r = 0; r < n; ++r) {
      a[r] = arrive[r][i];
      f[r] = finish[r][i];
    }
    const double ma = medianOf(a), mf = medianOf(f);
    iterTimes.push_back(mf);
    for (size_t r = 0; r < n; ++r) {
      lateA[r].push_back(a[r] - ma);
      lateF[r].push_back(f[r] - mf);
    }
    ++lastA[static_cast<size_t>(std::max_element(a.begin(), a.end()) - a.begin())];
    ++lastF[static_cast<size_t>(std::max_element(f.begin(), f.end()) - f.begin())];
  }
  v.iterationUs = medianOf(iterTimes) * 1e6;
  // Ties for last, now that a step is known.
  const double tie = kTiedSteps * v.iterationUs * 1e-6 / std::max(1, steps);
  v.tiedLast.assign(n, std::vector<int>(n, 0));
  for (size_t i = 0; i < iters; ++i) {
    double latest = finish[0][i];
    for (size_t r = 1; r < n; ++r) latest = std::max(latest, finish[r][i]);
    for (size_t r = 0; r < n; ++r) {
      for (size_t s = 0; s < n; ++s) {
        v.tiedLast[r][s] += finish[r][i] >= latest - tie && finish[s][i] >= latest - tie;
      }
    }
  }
  std::vector<double> medA(n), medF(n);
  for (size_t r = 0; r < n; ++r) {
    medA[r] = medianOf(lateA[r]);
    medF[r] = medianOf(lateF[r]);
  }
  auto [ca, madA] = medianMad(medA);
  const double t = v.iterationUs * 1e-6;
  for (size_t r = 0; r < n; ++r) {
    RankStraggle s;
    s.rank = static_cast<int>(r);
    s.arriveLateUs = medA[r] * 1e6;
    s.finishLateUs = medF[r] * 1e6;
    s.lastToArrive = lastA[r];
    s.lastToFinish = lastF[r];
    s.tiedLastToFinish = v.tiedLast[r][r];
    s.lateArriver = n >= 3 && medA[r] > ca + o.k * kMadToSigma * madA &&
                    medA[r] > o.gap * t / std::max(1, steps);
    v.ranks.push_back(s);
  }
  if (n < 3) v.notes.push_back("fewer than 3 ranks: no straggler can be told from the others");
  return v;
}

}  // namespace cb

namespace cb {

std::string StraggleSuspect::name() const {
  return kind == Kind::kLink ? fmt::format("link {}-{}", std::min(from, to), std::max(from, to))
                             : fmt::format("rank {}", rank);
}

std::string StraggleSuspect::what() const {
  switch (kind) {
    case Kind::kArrivesLate: return "arrives late";
    case Kind::kSendsSlowly: return "sends slowly";
    case Kind::kReceivesSlowly: return "receives slowly";
    case Kind::kLink: break;
  }
  return bothWays ? "slow both ways" : fmt::format("slow {} -> {}", from, to);
}

// The bounds of the ring verdict, from a tc-throttled mesh of 4 MPI ranks over TCP (what a rank
// sends, what it receives, one link, healthy; 10 runs each, then as many again to check).
// Throttled, the ranks predicted finished last in 66-100% of each direction's calls and were
// 0.41-1.13 steps late in each. Healthy, the ranks' scheduling on 2 shared cores made a neighbour
// pair look like a link, last in up to 90% and 82% of the calls, but at most 0.28 of a step late;
// among healthy runs whose pair was last in half the calls of each direction, at most 0.19. So
// the calls must agree and each direction's lateness must be past the healthy one. (A first
// version also asked for 3 of 4 calls together: under a parallel build it missed a receiver last
// in 72% and 56% of the calls, 1.3 and 0.6 steps late.) One direction alone (a hop slow one way)
// must be clearer still. The values: RingBounds in Diagnosis.h.

RingStraggleVerdict judgeRingStragglers(const std::vector<std::vector<double>>& forwardArrive,
                                        const std::vector<std::vector<double>>& forwardFinish,
                                        const std::vector<std::vector<double>>& backwardArrive,
                                        const std::vector<std::vector<double>>& backwardFinish,
                                        int steps, const SuspectOptions& o) {
  RingStraggleVerdict v;
  auto joined = [](const std::vector<std::vector<double>>& a,
                   const std::vector<std::vector<double>>& b) {
    std::vector<std::vector<double>> out = a;
    for (size_t r = 0; r < out.size() && r < b.size(); ++r) {
      out[r].insert(out[r].end(), b[r].begin(), b[r].end());
    }
    return out;
  };
  v.arrival = judgeStragglers(joined(forwardArrive, backwardArrive),
                              joined(forwardFinish, backwardFinish), steps, o);
  v.forward = judgeStragglers(forwardArrive, forwardFinish, steps, o);
  v.backward = judgeStragglers(backwardArrive, backwardFinish, steps, o);
  const int n = static_cast<int>(v.arrival.ranks.size());
  if (n < 3 || static_cast<int>(v.forward.ranks.size()) != n ||
      static_cast<int>(v.backward.ranks.size()) != n) {
    return v;
  }
  std::vector<bool> late(static_cast<size_t>(n), false);
  for (const RankStraggle& r : v.arrival.ranks) {
    if (!r.lateArriver) continue;
    late[static_cast<size_t>(r.rank)] = true;
    v.suspects.push_back({StraggleSuspect::Kind::kArrivesLate, r.rank});
  }
  // Per direction and rank: the share of calls it finished last in, and its median lateness in
  // steps of the median call.
  const double step = v.arrival.iterationUs / std::max(1, steps);
  auto share = [](const StraggleVerdict& d, int r) {
    return d.iterations > 0
               ? static_cast<double>(d.ranks[static_cast<size_t>(r)].lastToFinish) / d.iterations
               : 0.0;
  };
  // Calls where r was last or tied for it, without `apart` tied too (-1: anyone may be).
  auto tiedShare = [](const StraggleVerdict& d, int r, int apart) {
    if (d.iterations <= 0) return 0.0;
    const auto& row = d.tiedLast[static_cast<size_t>(r)];
    const int both = apart < 0 ? 0 : row[static_cast<size_t>(apart)];
    return static_cast<double>(row[static_cast<size_t>(r)] - both) / d.iterations;
  };
  auto lateSteps = [&](const StraggleVerdict& d, int r) {
    return step > 0 ? d.ranks[static_cast<size_t>(r)].finishLateUs / step : 0.0;
  };
  auto mod = [n](int r) { return ((r % n) + n) % n; };
  using Kind = StraggleSuspect::Kind;
  // The hypotheses that predict a late finisher in both directions: which rank is last forward
  // (f) and which backward (b). The one with the most calls behind it, if they are enough.
  // `fApart`/`bApart`: a rank that must not be tied with f (b) in the calls counted (a link's
  // other end), -1 for none.
  struct Hypothesis {
    StraggleSuspect suspect;
    int f, b;
    int fApart = -1, bApart = -1;
    double forwardShare = 0, backwardShare = 0;
  };
  std::vector<Hypothesis> hs;
  for (int c = 0; c < n; ++c) {
    hs.push_back({{Kind::kReceivesSlowly, c}, c, c});
    hs.push_back({{Kind::kSendsSlowly, c}, mod(c + 1), mod(c - 1)});
    hs.push_back({{Kind::kLink, -1, c, mod(c + 1), true}, mod(c + 1), c, c, mod(c + 1)});
  }
  const Hypothesis* best = nullptr;
  double bestCalls = 0, bestLate = 0;
  for (Hypothesis& h : hs) {
    h.forwardShare = tiedShare(v.forward, h.f, h.fApart);
    h.backwardShare = tiedShare(v.backward, h.b, h.bApart);
    const double calls = h.forwardShare + h.backwardShare;
    const double lateness = lateSteps(v.forward, h.f) + lateSteps(v.backward, h.b);
    if (!best || calls > bestCalls || (calls == bestCalls && lateness > bestLate)) {
      best = &h;
      bestCalls = calls;
      bestLate = lateness;
    }
  }
  std::vector<StraggleSuspect> found;
  if (best && best->forwardShare >= RingBounds::kLastShareEach &&
      best->backwardShare >= RingBounds::kLastShareEach &&
      lateSteps(v.forward, best->f) >= RingBounds::kLateStepsEach &&
      lateSteps(v.backward, best->b) >= RingBounds::kLateStepsEach) {
    found.push_back(best->suspect);
  } else {
    // One direction only: a hop slow one way (x - 1 -> x forward, y + 1 -> y backward).
    for (int dir = 0; dir < 2; ++dir) {
      const StraggleVerdict& d = dir == 0 ? v.forward : v.backward;
      for (int x = 0; x < n; ++x) {
        if (share(d, x) >= RingBounds::kLastShareOneWay &&
            lateSteps(d, x) >= RingBounds::kLateStepsOneWay) {
          found.push_back({Kind::kLink, -1, dir == 0 ? mod(x - 1) : mod(x + 1), x, false});
        }
      }
    }
  }
  // A late arriver slows every hop it sends on: what it explains is not named again.
  for (const StraggleSuspect& s : found) {
    const int owner = s.kind == Kind::kLink ? s.from : s.rank;
    const bool explained = late[static_cast<size_t>(owner)] ||
                           (s.kind == Kind::kLink && s.bothWays && late[static_cast<size_t>(s.to)]);
    if (!explained) v.suspects.push_back(s);
  }
  return v;
}

RepeatAgreement repeatAgreement(const std::vector<std::vector<double>>& repeats, double gap) {
  RepeatAgreement a;
  a.gap = gap;
  std::vector<double> spreads;
  for (const std::vector<double>& link : repeats) {
    std::vector<double> logs;
    for (double x : link) {
      if (x > 0 && std::isfinite(x)) logs.push_back(std::log(x));
    }
    if (logs.size() < 3) continue;  // two values say nothing about agreement
    a.repeats = std::max(a.repeats, static_cast<int>(logs.size()));
    std::sort(logs.begin(), logs.end());
    const double mid = logs[logs.size() / 2];
    std::vector<double> dev;
    for (double x : logs) dev.push_back(std::abs(x - mid));
    std::sort(dev.begin(), dev.end());
    spreads.push_back(1.482602218505602 * dev[dev.size() / 2]);
  }
  if (spreads.empty()) return a;
  std::sort(spreads.begin(), spreads.end());
  const double spread = spreads[spreads.size() / 2];
  a.spreadPct = std::expm1(spread) * 100;
  const double standardError = 1.25 * spread / std::sqrt(static_cast<double>(a.repeats));
  a.tooNoisy = standardError > std::log1p(gap) / 2;
  return a;
}

}  // namespace cb
