// Each diag command's text, JSON, CSV and records (DiagDocuments.h).
#include "diagnosis/DiagDocuments.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/Size.h"
#include "core/Stats.h"
#include "results/CpuLoadDetail.h"

namespace cb {
namespace {

using json = nlohmann::ordered_json;

// The documents' one style (docs/schema/README.md): format and an integer version first.
json diagDocument(const char* command) {
  json j;
  j["format"] = "collbench-diag";
  j["version"] = 1;
  j["command"] = command;
  return j;
}

std::string injectedLines(const DiagRun& run) {
  std::string out;
  for (const std::string& what : run.injected) out += fmt::format("# injected: {}\n", what);
  return out;
}

std::string listOf(const std::vector<int>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// The skeleton of a live diagnosis's record: the fields every kind shares.
ResultRecord diagRecord(int64_t runId, DiagMetric metric, std::string variant, uint64_t bytes,
                        int nranks) {
  ResultRecord r;
  r.runId = runId;
  r.collective = diagCollective(metric);
  r.variant = std::move(variant);
  r.dtype = "float";
  r.op = "sum";
  r.sizeBytes = bytes;
  r.count = bytes / 4;
  r.placement = "out";
  r.nranks = nranks;
  return r;
}

ResultRecord linkRecord(int64_t runId, const std::string& transport, const LinkSample& s,
                        bool bandwidth, const LinkProbeOptions& p, const std::string& message) {
  ResultRecord r =
      diagRecord(runId, bandwidth ? DiagMetric::kBibw : DiagMetric::kLatency,
                 diagVariant(transport, std::to_string(s.pair.a), std::to_string(s.pair.b)),
                 bandwidth ? p.bandwidthBytes : p.latencyBytes, 2);
  r.dtype = "uint8";
  r.op = "none";
  r.count = r.sizeBytes;
  r.message = message;
  const std::vector<double>& samples = bandwidth ? s.bandwidthSamples : s.latencySamples;
  Summary sum = summarize(samples);
  if (bandwidth && s.wrong >= 0) r.wrong = s.wrong;  // the latency probe is not verified
  if (bandwidth) {
    r.algbw = r.busbw = s.bandwidthGBs;
  } else if (sum.median > 0) {
    r.algbw = r.busbw = static_cast<double>(p.latencyBytes) / sum.median / 1e9;
  }
  setTiming(r, sum, sum.median, static_cast<int>(samples.size()), Statistic::kMedian, samples, {});
  return r;
}

std::vector<ConfirmationNote> confirmationNotes(const DiagLinksResult& res,
                                                const std::string& metric) {
  std::vector<ConfirmationNote> out;
  for (const Confirmation& c : res.confirmations) {
    if (c.metric != metric) continue;
    std::string refs;
    for (LinkPair p : c.references)
      refs += fmt::format("{}{}-{}", refs.empty() ? "" : " ", p.a, p.b);
    out.push_back(
        {c.pair, c.references.empty()
                     ? "no typical link to re-measure against"
                     : fmt::format("alone {:.2f} x typical links alone ({}): {}", c.aloneRelative,
                                   refs, c.confirmed ? "confirmed" : "not confirmed")});
  }
  return out;
}

LinkMatrixInfo bwInfoOf(const LinkGraph& g) {
  return {"bandwidth", "GB/s", g.endpointNames, "rank"};
}
LinkMatrixInfo latInfoOf(const LinkGraph& g) { return {"latency", "us", g.endpointNames, "rank"}; }

// The verdict when other processes held the ranks' CPUs (`during`: "the links were measured"),
// with what the measurement pointed at said as what it is under that load ("" when nothing).
std::string contentionText(const CpuContention& c, std::string_view during,
                           std::vector<std::string> pointedAt) {
  std::string out = fmt::format(
      "too noisy to judge: while {} ({:.1f} s), {}; a rank waiting for its CPU measures the "
      "scheduler's time slice, not its link; rerun when the host is quiet (top shows who)\n",
      during, c.seconds, contentionFacts(c));
  if (!pointedAt.empty()) {
    std::sort(pointedAt.begin(), pointedAt.end());
    pointedAt.erase(std::unique(pointedAt.begin(), pointedAt.end()), pointedAt.end());
    out += fmt::format("# not evidence under this load: the measurement pointed at {}\n",
                       fmt::join(pointedAt, ", "));
  }
  return out;
}

// Every host's contention, as the JSON `cpu_contention` (each command sets `too_noisy` itself).
void putContention(json& j, const std::vector<CpuContention>& hosts) {
  j["cpu_contention"] = json::parse(cpuContentionJson(hosts));
}

// What a pair matrix's verdict names: its suspect endpoints and links.
std::vector<std::string> matrixNamed(const DiagLinksResult& res) {
  std::vector<std::string> named;
  for (const LinkVerdict* v : {&res.finalBandwidth, &res.finalLatency}) {
    for (const EndpointJudgement& e : v->endpoints) named.push_back(e.kind + " " + e.name);
    for (size_t i : v->suspects) {
      named.push_back(fmt::format("link {}-{}", v->links[i].pair.a, v->links[i].pair.b));
    }
  }
  return named;
}

// A host whose ranks outnumber the CPUs they may run on (null: none).
const CpuContention* oversubscribed(const std::vector<CpuContention>& cpu) {
  for (const CpuContention& c : cpu) {
    if (c.cpus > 0 && c.ranks > c.cpus) return &c;
  }
  return nullptr;
}

// The matrices and the verdict of a pair matrix (diag links, and bisect's fallback).
std::string matrixText(const DiagLinksResult& res, const LinkGraph& graph,
                       const std::string& belowBound) {
  const LinkMatrixInfo bwInfo = bwInfoOf(graph), latInfo = latInfoOf(graph);
  std::string out = fmt::format("#\n{}#\n{}", textHeatMap(res.finalBandwidth, bwInfo),
                                textHeatMap(res.finalLatency, latInfo));
  out += fmt::format("# matrix: {:.2f} s", res.matrixSeconds);
  if (res.bandwidthWindowSeconds > 0) {
    out += fmt::format(" (every pair of a round measured for the same {:.1f} ms + {:.1f} ms)",
                       res.latencyWindowSeconds * 1e3, res.bandwidthWindowSeconds * 1e3);
  }
  out += fmt::format("; confirmation alone: {:.2f} s\n", res.confirmSeconds);
  for (const Confirmation& cf : res.confirmations) {
    if (!cf.confirmed && !cf.references.empty()) {
      out +=
          fmt::format("# not confirmed: link {}-{} ({}: {:.2f} x in the matrix, {:.2f} x alone)\n",
                      cf.pair.a, cf.pair.b, cf.metric, cf.matrixRelative, cf.aloneRelative);
    }
  }
  if (const CpuContention* c = res.contended()) {
    // Whatever the figures say, they are the scheduler's: a rank that waits for its CPU measures
    // a time slice, steady enough to pass every agreement check (docs/ARCHITECTURE.md).
    out += contentionText(*c, "the links were measured", matrixNamed(res));
  } else if (res.healthy() && !belowBound.empty()) {
    // Alike is not healthy when they are all slow: the physical bound judges (docs/PEAK.md).
    out += belowBound;
  } else if (res.healthy() && res.agreement.tooNoisy) {
    // No suspect, but the schedules disagreed too much for that to mean "healthy".
    std::string advice = "rerun on a quieter machine or with more --schedules";
    if (const CpuContention* c = oversubscribed(res.cpu)) {
      // Nobody else took the CPUs (contended() is null): the ranks themselves outnumber them.
      // Pairs of a round then take turns, and a link whose partner is not running reads 10x
      // slow in one schedule and as the others alone (on the idle 2-core VM, 4 ranks: 6 of 6
      // runs too noisy concurrently, 5 of 5 healthy with --sequential).
      advice = fmt::format(
          "host {} runs {} ranks on {} CPUs, so the pairs of a round take turns on them and a "
          "link whose partner is not running reads slow: measure one pair at a time "
          "(--sequential) or give each rank a CPU of its own",
          c->host, c->ranks, c->cpus);
    }
    out += fmt::format(
        "too noisy to judge: a link's figure moved {:.1f}% between the {} schedules "
        "(median link), too much to tell a link {:g}% slow; {}\n",
        res.agreement.spreadPct, res.agreement.repeats, 100 * res.agreement.gap, advice);
  } else if (res.healthy() && !res.unreferenced().empty()) {
    std::vector<std::string> links;
    for (const Confirmation& c : res.unreferenced()) {
      links.push_back(fmt::format("{}-{} ({} {:.2f} x typical)", c.pair.a, c.pair.b, c.metric,
                                  c.matrixRelative));
    }
    out += fmt::format(
        "too noisy to judge: link{} {} read slow in the matrix, but no typical link of the same "
        "class was left to re-measure {} against (the others read alike slow, are suspect or "
        "share the rank); measure one pair at a time (--sequential) or with more ranks\n",
        links.size() == 1 ? "" : "s", fmt::join(links, ", "), links.size() == 1 ? "it" : "them");
  } else if (res.healthy()) {
    out += fmt::format("healthy: {} links of {} ranks, no suspect link or rank\n", res.links.size(),
                       res.ranks);
    for (const std::string& note : res.finalBandwidth.notes)
      out += fmt::format("# note: {}\n", note);
  } else {
    out += verdictText(res.finalBandwidth, bwInfo, confirmationNotes(res, "bandwidth"));
    out += verdictText(res.finalLatency, latInfo, confirmationNotes(res, "latency"));
    out += belowBound;
  }
  return out;
}

std::vector<ResultRecord> matrixRecords(const DiagRun& run, const DiagLinksResult& res,
                                        const LinkProbeOptions& probe, const LinkGraph& graph) {
  const LinkMatrixInfo bwInfo = bwInfoOf(graph), latInfo = latInfoOf(graph);
  // Under a stranger's load nothing is judged: no stored record says "suspect" (the report would
  // mark it).
  const bool judged = res.contended() == nullptr;
  std::vector<ResultRecord> out;
  for (size_t i = 0; i < res.links.size(); ++i) {
    out.push_back(linkRecord(run.runId, run.transport, res.links[i], true, probe,
                             judged ? linkMessage(res.finalBandwidth, i, bwInfo) : ""));
    out.push_back(linkRecord(run.runId, run.transport, res.links[i], false, probe,
                             judged ? linkMessage(res.finalLatency, i, latInfo) : ""));
  }
  return out;
}

std::string matrixCsv(const DiagLinksResult& res, const LinkGraph& graph) {
  return linkCsvHeader() + linkCsvRows(res.finalBandwidth, bwInfoOf(graph)) +
         linkCsvRows(res.finalLatency, latInfoOf(graph));
}

void putMatrixVerdicts(json& j, const DiagLinksResult& res, const LinkGraph& graph) {
  j["bandwidth"] = json::parse(verdictJson(res.finalBandwidth, bwInfoOf(graph)));
  j["latency"] = json::parse(verdictJson(res.finalLatency, latInfoOf(graph)));
}

}  // namespace

// ---- diag links ----

DiagOutcome linksOutcome(const DiagLinksResult& res, const std::string& belowBound) {
  DiagOutcome o;
  const bool alike = res.healthy() && belowBound.empty();
  o.tooNoisy = res.contended() != nullptr ||
               (alike && (res.agreement.tooNoisy || !res.unreferenced().empty()));
  o.healthy = alike && !o.tooNoisy;
  return o;
}

DiagDocuments linksDocuments(const DiagRun& run, const DiagLinksResult& res,
                             const DiagLinksOptions& o, const LinkGraph& graph,
                             const std::string& pattern, const std::string& belowBound) {
  DiagDocuments d;
  d.text =
      fmt::format("# diag links over {}: {} ranks, {} links in {} round{} of {}{}\n", run.transport,
                  res.ranks, res.links.size(), res.rounds, res.rounds == 1 ? "" : "s", pattern,
                  res.repeats > 1 ? fmt::format("; {} schedules, each link's median", res.repeats)
                                  : std::string());
  d.text += fmt::format(
      "# bandwidth: bibw, windows of {} x {} both ways (median of {}); latency: "
      "ping-pong of {} / 2 (median of {})\n",
      o.probe.window, formatSize(o.probe.bandwidthBytes), o.probe.bandwidthIters,
      formatSize(o.probe.latencyBytes), o.probe.latencyIters);
  d.text += fmt::format(
      "# suspect: below its class median by more than {:g}% and beyond {:g} MAD; "
      "re-measured alone{}\n",
      o.suspect.gap * 100, o.suspect.k, o.confirm ? "" : " (off: --no-confirm)");
  d.text += injectedLines(run);
  d.text += matrixText(res, graph, belowBound);
  d.records = matrixRecords(run, res, o.probe, graph);
  const DiagOutcome outcome = linksOutcome(res, belowBound);
  json j = diagDocument("diag links");
  j["ranks"] = res.ranks;
  j["transport"] = run.transport;
  j["rounds"] = res.rounds;
  j["schedules"] = res.repeats;
  j["latency_window_seconds"] = res.latencyWindowSeconds;
  j["bandwidth_window_seconds"] = res.bandwidthWindowSeconds;
  j["matrix_seconds"] = res.matrixSeconds;
  j["confirm_seconds"] = res.confirmSeconds;
  j["injected"] = run.injected;
  j["healthy"] = outcome.healthy;
  j["too_noisy"] = outcome.tooNoisy;
  j["repeat_spread_pct"] = res.agreement.spreadPct;
  putContention(j, res.cpu);
  putMatrixVerdicts(j, res, graph);
  json cs = json::array();
  for (const Confirmation& cf : res.confirmations) {
    cs.push_back({{"metric", cf.metric},
                  {"a", cf.pair.a},
                  {"b", cf.pair.b},
                  {"matrix_relative", cf.matrixRelative},
                  {"alone_relative", cf.aloneRelative},
                  {"confirmed", cf.confirmed}});
  }
  j["confirmations"] = cs;
  d.json = j.dump(2) + "\n";
  d.csv = matrixCsv(res, graph);
  return d;
}

// ---- diag bisect ----

namespace {
// The verdict's "healthy": the pair matrix's when the bisection fell back to it.
bool bisectVerdict(const DiagBisectResult& res) {
  return res.slowRank < 0 && res.fellBack ? res.links.healthy() : res.healthy;
}
}  // namespace

DiagOutcome bisectOutcome(const DiagBisectResult& res) {
  DiagOutcome o;
  o.tooNoisy = mostContended(res.cpu) != nullptr ||
               (res.slowRank < 0 && res.fellBack && linksOutcome(res.links, "").tooNoisy);
  o.healthy = !o.tooNoisy && res.slowRank < 0 && bisectVerdict(res);
  return o;
}

DiagDocuments bisectDocuments(const DiagRun& run, const DiagBisectResult& res,
                              const DiagBisectOptions& o, const LinkGraph& graph, int ranks) {
  DiagDocuments d;
  d.text = fmt::format(
      "# diag bisect over {}: ring allreduce of {} on both halves at once ({} calls x {} "
      "repeats, median), into the half slower by more than {:g}%\n",
      run.transport, formatSize(o.bytes), o.iterations, o.repeats, o.suspect.gap * 100);
  d.text += injectedLines(run);
  d.text += fmt::format("# world: {:.3f} GB/s busbw\n", res.worldBusbw);
  for (size_t i = 0; i < res.rounds.size(); ++i) {
    const BisectRound& r = res.rounds[i];
    d.text += fmt::format("# round {}: [{}] {:.3f} GB/s vs [{}] {:.3f} GB/s: {}\n", i + 1,
                          listOf(r.a), r.busbwA, listOf(r.b), r.busbwB, r.decision);
  }
  const CpuContention* contended = mostContended(res.cpu);
  if (contended && !res.fellBack) {
    std::vector<std::string> named;
    if (res.slowRank >= 0) named.push_back(fmt::format("rank {}", res.slowRank));
    d.text += contentionText(*contended, "the halves were measured", named);
  } else if (res.slowRank >= 0) {
    d.text += fmt::format(
        "SUSPECT rank {} (bisect): every group holding it was slower by more than "
        "{:g}%, in {} round{}\n",
        res.slowRank, o.suspect.gap * 100, res.rounds.size(), res.rounds.size() == 1 ? "" : "s");
  } else if (res.fellBack) {
    d.text += "# bisection cannot decide (halves alike): the pair matrix decides\n";
    d.text += matrixText(res.links, graph, "");
    d.records = matrixRecords(run, res.links, o.fallback.probe, graph);
    d.csv = matrixCsv(res.links, graph);
  } else {
    d.text += "healthy: the halves alike and the world as fast as they are\n";
  }
  auto add = [&](const std::vector<int>& group, double busbw, const std::string& msg) {
    ResultRecord r = diagRecord(run.runId, DiagMetric::kBisect,
                                fmt::format("ring/{}@{}", run.transport, listOf(group)), o.bytes,
                                static_cast<int>(group.size()));
    r.busbw = busbw;
    r.timeKnown = r.medianKnown = false;  // a bisection step keeps its bandwidth only
    r.message = msg;
    d.records.push_back(r);
  };
  std::vector<int> all(static_cast<size_t>(ranks));
  for (int i = 0; i < ranks; ++i) all[static_cast<size_t>(i)] = i;
  add(all, res.worldBusbw, "");
  for (const BisectRound& r : res.rounds) {
    add(r.a, r.busbwA, r.decision == "a slower" ? "slower half" : "");
    add(r.b, r.busbwB, r.decision == "b slower" ? "slower half" : "");
  }
  if (res.slowRank >= 0) add({res.slowRank}, 0, fmt::format("suspect rank {}", res.slowRank));
  json j = diagDocument("diag bisect");
  j["ranks"] = ranks;
  j["transport"] = run.transport;
  j["world_busbw"] = res.worldBusbw;
  json rounds = json::array();
  for (const BisectRound& r : res.rounds) {
    rounds.push_back({{"a", r.a},
                      {"b", r.b},
                      {"busbw_a", r.busbwA},
                      {"busbw_b", r.busbwB},
                      {"decision", r.decision}});
  }
  j["rounds"] = rounds;
  j["slow_rank"] = res.slowRank;
  j["fell_back"] = res.fellBack;
  if (res.fellBack) putMatrixVerdicts(j, res.links, graph);
  const DiagOutcome outcome = bisectOutcome(res);
  j["healthy"] = outcome.healthy;
  j["too_noisy"] = outcome.tooNoisy;
  putContention(j, res.cpu);
  d.json = j.dump(2) + "\n";
  return d;
}

// ---- diag ranks ----

namespace {

// What the verdict says of a rank: its own suspect kind, or the links it finishes behind.
std::string rankVerdict(const RingStraggleVerdict& v, int rank) {
  std::vector<std::string> says;
  for (const StraggleSuspect& x : v.suspects) {
    if (x.kind != StraggleSuspect::Kind::kLink && x.rank == rank) says.push_back(x.what());
    if (x.kind == StraggleSuspect::Kind::kLink && (x.from == rank || x.to == rank)) {
      says.push_back(x.name());
    }
  }
  return fmt::format("{}", fmt::join(says, ", "));
}

std::string lateText(const StraggleVerdict& d, int rank) {
  const RankStraggle& r = d.ranks[static_cast<size_t>(rank)];
  std::string text =
      fmt::format("{:+.1f} us, last in {}/{}", r.finishLateUs, r.lastToFinish, d.iterations);
  if (r.tiedLastToFinish > r.lastToFinish) {
    text += fmt::format(", tied for last in {}/{}", r.tiedLastToFinish, d.iterations);
  }
  return text;
}

// Why a suspect is named, from the pattern of arrivals and finishes that named it.
std::string suspectWhy(const RingStraggleVerdict& v, const StraggleSuspect& x, int n) {
  using Kind = StraggleSuspect::Kind;
  switch (x.kind) {
    case Kind::kArrivesLate: {
      const RankStraggle& r = v.arrival.ranks[static_cast<size_t>(x.rank)];
      return fmt::format(
          "{:+.1f} us after the median rank, last to arrive in {} of {} calls: slow before it "
          "communicates (its compute, its process or CPU)",
          r.arriveLateUs, r.lastToArrive, v.arrival.iterations);
    }
    case Kind::kSendsSlowly:
      return fmt::format(
          "arrives on time; the ranks it sends to finish last: rank {} in the forward ring "
          "({}), rank {} in the backward ring ({}): its outgoing side (NIC, link or process)",
          (x.rank + 1) % n, lateText(v.forward, (x.rank + 1) % n), (x.rank + n - 1) % n,
          lateText(v.backward, (x.rank + n - 1) % n));
    case Kind::kReceivesSlowly:
      return fmt::format(
          "arrives on time, finishes last in both directions of the ring (forward {}; "
          "backward {}): its incoming side (NIC, link or process)",
          lateText(v.forward, x.rank), lateText(v.backward, x.rank));
    case Kind::kLink:
      if (x.bothWays) {
        return fmt::format(
            "rank {} finishes last in the forward ring ({}) and rank {} in the backward ring "
            "({}): the hop between them, both ways (diag links measures it)",
            x.to, lateText(v.forward, x.to), x.from, lateText(v.backward, x.from));
      } else {
        const bool fwd = (x.from + 1) % n == x.to;
        return fmt::format(
            "rank {} finishes last in the {} ring ({}), the other direction is even: the hop "
            "from rank {} to rank {}",
            x.to, fwd ? "forward" : "backward", lateText(fwd ? v.forward : v.backward, x.to),
            x.from, x.to);
      }
  }
  return "";
}

std::string ranksText(const DiagRun& run, const DiagRanksResult& res, const DiagRanksOptions& o,
                      int n) {
  const RingStraggleVerdict& v = res.verdict;
  const StraggleVerdict& pooled = v.arrival;
  std::string out = fmt::format(
      "# diag ranks over {}: ring allreduce of {} x {} iterations in each direction "
      "(forward: rank r sends to r+1; backward: to r-1), a barrier before each; arrival "
      "= first message posted, finish = call returned (from the barrier)\n",
      run.transport, formatSize(o.bytes), o.iterations);
  out += fmt::format(
      "# median call {:.1f} us in {} steps; arriving late: beyond {:g} MAD of the ranks' "
      "and {:g}% of a step; finishing late: the last in {:g}% of each direction's calls "
      "and {:g} of a step late in each, where the two directions' pattern puts them; in "
      "one direction alone: {:g}% and {:g} of a step\n",
      pooled.iterationUs, res.steps, o.suspect.k, o.suspect.gap * 100,
      RingBounds::kLastShareEach * 100, RingBounds::kLateStepsEach,
      RingBounds::kLastShareOneWay * 100, RingBounds::kLateStepsOneWay);
  out += injectedLines(run);
  out += fmt::format("#\n# {:>4} {:>14} {:>12} {:>14} {:>9} {:>14} {:>9}  verdict\n", "rank",
                     "arrive late us", "last arrive", "fwd finish us", "fwd last", "bwd finish us",
                     "bwd last");
  for (size_t i = 0; i < pooled.ranks.size(); ++i) {
    const RankStraggle& r = pooled.ranks[i];
    const RankStraggle& f = v.forward.ranks[i];
    const RankStraggle& b = v.backward.ranks[i];
    out += fmt::format("  {:>4} {:>14.1f} {:>12} {:>14.1f} {:>9} {:>14.1f} {:>9}  {}\n", r.rank,
                       r.arriveLateUs, fmt::format("{}/{}", r.lastToArrive, pooled.iterations),
                       f.finishLateUs, fmt::format("{}/{}", f.lastToFinish, v.forward.iterations),
                       b.finishLateUs, fmt::format("{}/{}", b.lastToFinish, v.backward.iterations),
                       rankVerdict(v, r.rank));
  }
  if (const CpuContention* c = mostContended(res.cpu)) {
    std::vector<std::string> named;
    for (const StraggleSuspect& x : v.suspects) named.push_back(x.name() + " (" + x.what() + ")");
    return out + contentionText(*c, "the calls ran", named);
  }
  for (const StraggleSuspect& x : v.suspects) {
    out += fmt::format("SUSPECT {} ({}): {}\n", x.name(), x.what(), suspectWhy(v, x, n));
  }
  for (const std::string& note : pooled.notes) out += fmt::format("# note: {}\n", note);
  if (v.healthy()) {
    out += fmt::format("healthy: no straggler among {} ranks over {} calls in each direction\n", n,
                       v.forward.iterations);
  }
  return out;
}

std::vector<ResultRecord> ranksRecords(const DiagRun& run, const DiagRanksResult& res,
                                       const DiagRanksOptions& o, int n) {
  const RingStraggleVerdict& v = res.verdict;
  std::vector<ResultRecord> out;
  for (size_t dir = 0; dir < 2; ++dir) {
    for (const RankStraggle& r : v.arrival.ranks) {
      for (bool arrival : {true, false}) {
        ResultRecord rec = diagRecord(
            run.runId, arrival ? DiagMetric::kArrival : DiagMetric::kFinish,
            fmt::format("{}/{}@{}", dir == 0 ? "ring" : "ring-backward", run.transport, r.rank),
            o.bytes, n);
        const auto& series = dir == 0 ? (arrival ? res.arrive : res.finish)
                                      : (arrival ? res.arriveBackward : res.finishBackward);
        const auto& xs = series[static_cast<size_t>(r.rank)];
        Summary sum = summarize(xs);
        setTiming(rec, sum, sum.median, static_cast<int>(xs.size()), Statistic::kMedian, xs, {});
        // The verdict rides on the forward records: on the arrival of a late arriver, on the
        // finish of the rank named or of the rank behind a slow link.
        for (const StraggleSuspect& x : v.suspects) {
          const bool late = x.kind == StraggleSuspect::Kind::kArrivesLate;
          const int at = x.kind == StraggleSuspect::Kind::kLink ? x.to : x.rank;
          if (dir == 0 && at == r.rank && arrival == late && !mostContended(res.cpu)) {
            rec.message = fmt::format("suspect {}: {}", x.name(), x.what());
          }
        }
        out.push_back(rec);
      }
    }
  }
  return out;
}

}  // namespace

DiagOutcome ranksOutcome(const DiagRanksResult& res) {
  DiagOutcome o;
  o.tooNoisy = mostContended(res.cpu) != nullptr;
  o.healthy = !o.tooNoisy && res.verdict.healthy();
  return o;
}

DiagDocuments ranksDocuments(const DiagRun& run, const DiagRanksResult& res,
                             const DiagRanksOptions& o, int ranks) {
  const RingStraggleVerdict& v = res.verdict;
  const StraggleVerdict& pooled = v.arrival;
  DiagDocuments d;
  d.text = ranksText(run, res, o, ranks);
  d.records = ranksRecords(run, res, o, ranks);
  json j = diagDocument("diag ranks");
  j["ranks"] = ranks;
  j["transport"] = run.transport;
  j["iterations"] = v.forward.iterations;
  j["iteration_us"] = pooled.iterationUs;
  const DiagOutcome outcome = ranksOutcome(res);
  j["healthy"] = outcome.healthy;
  j["too_noisy"] = outcome.tooNoisy;
  putContention(j, res.cpu);
  json rows = json::array();
  d.csv =
      "rank,arrive_late_us,last_to_arrive,forward_finish_late_us,forward_last_to_finish,"
      "backward_finish_late_us,backward_last_to_finish,verdict\n";
  for (size_t i = 0; i < pooled.ranks.size(); ++i) {
    const RankStraggle& r = pooled.ranks[i];
    const RankStraggle& f = v.forward.ranks[i];
    const RankStraggle& b = v.backward.ranks[i];
    rows.push_back({{"rank", r.rank},
                    {"arrive_late_us", r.arriveLateUs},
                    {"last_to_arrive", r.lastToArrive},
                    {"late_arriver", r.lateArriver},
                    {"forward_finish_late_us", f.finishLateUs},
                    {"forward_last_to_finish", f.lastToFinish},
                    {"backward_finish_late_us", b.finishLateUs},
                    {"backward_last_to_finish", b.lastToFinish},
                    {"verdict", rankVerdict(v, r.rank)}});
    d.csv += fmt::format("{},{:.3f},{},{:.3f},{},{:.3f},{},\"{}\"\n", r.rank, r.arriveLateUs,
                         r.lastToArrive, f.finishLateUs, f.lastToFinish, b.finishLateUs,
                         b.lastToFinish, rankVerdict(v, r.rank));
  }
  j["per_rank"] = rows;
  json sus = json::array();
  for (const StraggleSuspect& x : v.suspects) {
    sus.push_back({{"name", x.name()}, {"what", x.what()}});
  }
  j["suspects"] = sus;
  d.json = j.dump(2) + "\n";
  return d;
}

// ---- diag logs ----

namespace {

// A stored link of a pairwise log: its value when measured, "failed" when its log failed.
ResultRecord logLinkRecord(const PairwiseLogs& logs, const PairwiseMatrix& m, LinkPair pair) {
  ResultRecord r;
  r.collective = diagCollective(m.collective);
  r.variant = diagVariant("nccl-tests", logs.hosts[static_cast<size_t>(pair.a)],
                          logs.hosts[static_cast<size_t>(pair.b)]);
  r.placement = "out";
  r.nranks = 2;
  r.timeKnown = r.medianKnown = false;  // the logs give a link's bandwidth only
  return r;
}

}  // namespace

LogsDiagnosis logsDocuments(const PairwiseLogs& logs, const std::vector<std::string>& files,
                            const SuspectOptions& so) {
  LogsDiagnosis out;
  DiagDocuments& d = out.docs;
  d.text = fmt::format("# diag logs: {} log(s), {} hosts\n", files.size(), logs.hosts.size());
  d.text += fmt::format(
      "# link value: mean busbw (out-of-place) over the sizes every log measured; suspect: below "
      "the median link by more than {:g}% and beyond {:g} MAD\n",
      so.gap * 100, so.k);
  LinkGraph graph;
  graph.endpointNames = logs.hosts;
  graph.endpointKind = "host";
  json jout = diagDocument("diag logs");
  jout["files"] = files;
  jout["verdicts"] = json::array();
  d.csv = linkCsvHeader();
  for (const PairwiseMatrix& m : logs.matrices) {
    std::vector<LinkValue> values;
    std::vector<const PairwiseLink*> failed;
    for (const PairwiseLink& l : m.links) {
      if (l.failed) {
        failed.push_back(&l);
      } else {
        values.push_back({l.pair, "", l.value});
      }
    }
    LinkVerdict v = judgeLinks(values, graph, Better::kHigher, so);
    LinkMatrixInfo info{m.collective + " busbw", "GB/s", logs.hosts, "host"};
    d.text += fmt::format("#\n# {}: {} links, sizes {}..{}\n{}", m.collective, m.links.size(),
                          m.sizes.empty() ? std::string("-") : formatSize(m.sizes.front()),
                          m.sizes.empty() ? std::string("-") : formatSize(m.sizes.back()),
                          textHeatMap(v, info));
    for (const PairwiseLink* l : failed) {
      d.text += fmt::format(
          "FAILED link {}-{} ({}): {} ({})\n", logs.hosts[static_cast<size_t>(l->pair.a)],
          logs.hosts[static_cast<size_t>(l->pair.b)], m.collective, l->why, l->file);
    }
    d.text += verdictText(v, info);
    out.healthy = out.healthy && v.healthy() && failed.empty();
    json jv = json::parse(verdictJson(v, info));
    json jf = json::array();
    for (const PairwiseLink* l : failed) {
      jf.push_back({{"a", l->pair.a}, {"b", l->pair.b}, {"file", l->file}, {"why", l->why}});
    }
    jv["failed"] = jf;
    jout["verdicts"].push_back(jv);
    d.csv += linkCsvRows(v, info);
    for (size_t i = 0; i < v.links.size(); ++i) {
      ResultRecord r = logLinkRecord(logs, m, v.links[i].pair);
      r.dtype = "none";
      r.op = "none";
      r.sizeBytes = m.sizes.empty() ? 0 : m.sizes.back();
      r.algbw = r.busbw = v.links[i].value;
      r.message = linkMessage(v, i, info);
      d.records.push_back(r);
    }
    for (const PairwiseLink* l : failed) {
      ResultRecord r = logLinkRecord(logs, m, l->pair);
      r.status = ResultStatus::kFailed;
      r.message = l->why + " (" + l->file + ")";
      d.records.push_back(r);
    }
  }
  for (const std::string& note : logs.notes) d.text += fmt::format("# note: {}\n", note);
  jout["healthy"] = out.healthy;
  if (out.healthy) {
    d.text += fmt::format("healthy: no suspect link or host in {} log(s)\n", files.size());
  }
  d.json = jout.dump(2) + "\n";
  return out;
}

RunRecord logsRunRecord(const PairwiseLogs& logs, const std::string& label,
                        const std::string& commandLine) {
  RunRecord run;
  run.label = label;
  run.commandLine = commandLine;
  run.source = "collbench";
  run.collbenchVersion = COLLBENCH_VERSION;
  run.worldKind = "imported";
  run.worldSize = static_cast<int>(logs.hosts.size());
  for (const std::string& h : logs.hosts) run.hosts += (run.hosts.empty() ? "" : ",") + h;
  run.status = RunStatus::kRunning;
  return run;
}

}  // namespace cb
