// `collbench diag links|ranks|bisect|logs`: find the slow link, the slow rank, the slow node, and
// say so. The measurement lives in bench/ (DiagLinks, DiagRanks), the verdict rule in
// core/Diagnosis.h, the text/CSV/JSON/HTML forms in results/DiagReport; this file parses, runs
// the world, prints and stores. Exit codes fit scripts: 0 healthy, 1 suspects, 2 usage or
// environment, 3 too noisy to judge (diag links: its schedules disagreed).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>

#include "bench/DiagBisect.h"
#include "bench/DiagLinks.h"
#include "bench/DiagRanks.h"
#include "cli/Command.h"
#include "cli/PeakJudge.h"
#include "cli/RunContext.h"
#include "collectives/transport/InjectTransport.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Text.h"
#include "results/DiagReport.h"
#include "results/Store.h"
#include "results/import/Import.h"
#include "session/RunSession.h"

namespace cb::cli {
namespace {

constexpr int kExitTooNoisy = 3;

using json = nlohmann::ordered_json;

// Options every live diagnosis shares.
struct LiveOptions {
  std::string transport;  // "" = the world's default
  std::vector<std::string> inject;
  double k = 3;
  std::string gap = "7%";
  double timeout = 60;
  std::string db = "collbench.db";
  bool noDb = false;
  std::string label;
  std::string jsonPath, csvPath;
  WorldOptions world;
};

struct LinksCli {
  LiveOptions live;
  bool quick = false, sequential = false, noConfirm = false;
  int repeats = 5;
  std::string size = "1M", latencySize = "8";
  int window = 8, iters = 10, latencyIters = 200;
  double linkRate = 0;  // Gb/s per direction of every link (diag links --link-rate); 0: topology
};

struct BisectCli {
  LinksCli links;  // live options and the pair matrix's, for the fallback
  std::string collSize = "1M";
  int calls = 5, repeats = 5;
};

struct RanksCli {
  LiveOptions live;
  std::string size = "1M";
  int iters = 50, warmup = 5;
};

struct LogsCli {
  std::vector<std::string> files;
  double k = 3;
  std::string gap = "7%";
  std::string db = "collbench.db";
  bool noDb = false;
  std::string label;
  std::string jsonPath, csvPath;
};

// "7%" or "0.07" -> 0.07.
double parseGap(const std::string& text) {
  std::string t(trim(text));
  bool pct = !t.empty() && t.back() == '%';
  if (pct) t.pop_back();
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(t, &used);
    if (used != t.size()) throw std::invalid_argument(t);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--gap '{}' is not a fraction (0.07) or a percentage (7%)", text));
  }
  if (pct) v /= 100;
  if (!(v > 0 && v < 1)) {
    throw UsageError(fmt::format("--gap '{}' must lie strictly between 0 and 100%", text));
  }
  return v;
}

SuspectOptions suspectOptions(double k, const std::string& gap) {
  if (!(k > 0) || k > 100) throw UsageError(fmt::format("--k {} must be above 0 (3: default)", k));
  SuspectOptions o;
  o.k = k;
  o.gap = parseGap(gap);
  return o;
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read ({})", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An output file must be writable before anything is measured.
void checkWritable(const std::string& path, const char* flag) {
  if (!path.empty()) checkOutputPath(path, flag);
}

SessionOptions sessionOf(const LiveOptions& o) {
  return sessionOptions(o.label, o.db, o.noDb, o.timeout, o.world);
}

// The checks every live diagnosis makes before the run is begun (so a bad invocation stores
// nothing): the world size, the injected ranks and the transport, which is set up now through
// `decorator` (the fault injector) and cached by the team. Returns the transport's name.
std::string prepareLive(RunSession& s, const LiveOptions& o, std::span<const InjectSpec> specs,
                        const char* command, int minRanks, const char* why,
                        Team::TransportDecorator decorator) {
  Team& team = s.team();
  if (team.size() < minRanks) {
    throw UsageError(fmt::format(
        "{} needs at least {} ranks (this world has {}; use --np N or mpirun -np N): {}", command,
        minRanks, team.size(), why));
  }
  validateInjects(specs, team.size());
  std::string name = o.transport.empty() ? team.defaultTransport() : o.transport;
  if (auto unusable = team.transportUnsupported(name)) {
    throw EnvironmentError(fmt::format("--transport {}: {}", name, *unusable));
  }
  team.setTransportDecorator(std::move(decorator));
  team.transport(name);
  return name;
}

// ---- links ----

ResultRecord linkRecord(int64_t runId, const std::string& transport, const LinkSample& s,
                        bool bandwidth, const LinkProbeOptions& p, const std::string& message) {
  ResultRecord r;
  r.runId = runId;
  r.collective = bandwidth ? "diag-bibw" : "diag-latency";
  r.variant = diagVariant(transport, std::to_string(s.pair.a), std::to_string(s.pair.b));
  r.dtype = "uint8";
  r.op = "none";
  r.sizeBytes = bandwidth ? p.bandwidthBytes : p.latencyBytes;
  r.count = r.sizeBytes;
  r.placement = "out";
  r.nranks = 2;
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

// The matrices, the verdict and the stored links of a `diag links` measurement (rank 0).
void printAndStoreLinks(std::FILE* out, const DiagLinksResult& res, const LinkGraph& graph,
                        const std::string& transport, const LinkProbeOptions& probe, RunSession& s,
                        const std::string& belowBound = "") {
  const LinkMatrixInfo bwInfo = bwInfoOf(graph), latInfo = latInfoOf(graph);
  fmt::print(out, "#\n{}#\n{}", textHeatMap(res.finalBandwidth, bwInfo),
             textHeatMap(res.finalLatency, latInfo));
  fmt::print(out, "# matrix: {:.2f} s", res.matrixSeconds);
  if (res.bandwidthWindowSeconds > 0) {
    fmt::print(out, " (every pair of a round measured for the same {:.1f} ms + {:.1f} ms)",
               res.latencyWindowSeconds * 1e3, res.bandwidthWindowSeconds * 1e3);
  }
  fmt::print(out, "; confirmation alone: {:.2f} s\n", res.confirmSeconds);
  for (const Confirmation& cf : res.confirmations) {
    if (!cf.confirmed) {
      fmt::print(out, "# not confirmed: link {}-{} ({}: {:.2f} x in the matrix, {:.2f} x alone)\n",
                 cf.pair.a, cf.pair.b, cf.metric, cf.matrixRelative, cf.aloneRelative);
    }
  }
  if (res.healthy() && !belowBound.empty()) {
    // Alike is not healthy when they are all slow: the physical bound judges (docs/PEAK.md).
    fmt::print(out, "{}", belowBound);
  } else if (res.healthy() && res.agreement.tooNoisy) {
    // No suspect, but the schedules disagreed too much for that to mean "healthy".
    fmt::print(out,
               "too noisy to judge: a link's figure moved {:.1f}% between the {} schedules "
               "(median link), too much to tell a link {:g}% slow; rerun on a quieter machine or "
               "with more --schedules\n",
               res.agreement.spreadPct, res.agreement.repeats, 100 * res.agreement.gap);
  } else if (res.healthy()) {
    fmt::print(out, "healthy: {} links of {} ranks, no suspect link or rank\n", res.links.size(),
               res.ranks);
    for (const std::string& note : res.finalBandwidth.notes) fmt::print(out, "# note: {}\n", note);
  } else {
    fmt::print(out, "{}{}",
               verdictText(res.finalBandwidth, bwInfo, confirmationNotes(res, "bandwidth")),
               verdictText(res.finalLatency, latInfo, confirmationNotes(res, "latency")));
    fmt::print(out, "{}", belowBound);
  }
  for (size_t i = 0; i < res.links.size(); ++i) {
    s.addResult(linkRecord(s.runId(), transport, res.links[i], true, probe,
                           linkMessage(res.finalBandwidth, i, bwInfo)));
    s.addResult(linkRecord(s.runId(), transport, res.links[i], false, probe,
                           linkMessage(res.finalLatency, i, latInfo)));
  }
}

DiagLinksOptions toLinksOptions(const LinksCli& c) {
  DiagLinksOptions o;
  o.suspect = suspectOptions(c.live.k, c.live.gap);
  o.quick = c.quick;
  o.sequential = c.sequential;
  o.confirm = !c.noConfirm;
  if (c.repeats < 1 || c.repeats > 99) {
    throw UsageError(fmt::format("--schedules {} must be 1..99", c.repeats));
  }
  o.repeats = c.repeats;
  if (c.quick && c.sequential) throw UsageError("--quick and --sequential exclude each other");
  o.probe.bandwidthBytes = parseSize(c.size);
  o.probe.latencyBytes = parseSize(c.latencySize);
  if (o.probe.bandwidthBytes == 0) throw UsageError("--size must be at least 1 byte");
  if (o.probe.bandwidthBytes > (1ull << 30) || o.probe.latencyBytes > (1ull << 30)) {
    throw UsageError("--size and --latency-size must be at most 1G");
  }
  if (c.window < 1) throw UsageError(fmt::format("-W {} must be at least 1", c.window));
  if (c.iters < 1) throw UsageError(fmt::format("-n {} must be at least 1", c.iters));
  if (c.latencyIters < 1) {
    throw UsageError(fmt::format("--latency-iters {} must be at least 1", c.latencyIters));
  }
  if (!(c.live.timeout > 0)) throw UsageError("-T must be positive");
  o.probe.window = c.window;
  o.probe.bandwidthIters = c.iters;
  o.probe.latencyIters = c.latencyIters;
  o.probe.latencyWarmup = std::max(1, c.latencyIters / 10);
  o.probe.timeoutSeconds = c.live.timeout;
  return o;
}

int doLinks(const LinksCli& c) {
  const DiagLinksOptions o = toLinksOptions(c);
  const std::vector<InjectSpec> specs = parseInjects(c.live.inject);
  checkWritable(c.live.jsonPath, "--json");
  checkWritable(c.live.csvPath, "--csv");
  bool suspects = false, tooNoisy = false;
  const int rc = runMeasuringCommand(sessionOf(c.live), [&](RunSession& s) {
    const std::string transport =
        prepareLive(s, c.live, specs, "diag links", 3, "a link is judged against the others",
                    injectDecorator(specs));
    s.beginRun();
    const int n = s.team().size();
    const LinkGraph graph = rankGraph(s.hosts());
    DiagLinksResult res = runDiagLinks(s.team(), transport, o);
    int64_t wrong = 0;
    for (const LinkSample& l : res.links) wrong += l.wrong;
    if (!s.root()) return RunOutcome{};
    std::FILE* out = stdout;
    s.printHeader(out);
    fmt::print(out, "# diag links over {}: {} ranks, {} links in {} round{} of {}{}\n", transport,
               n, res.links.size(), res.rounds, res.rounds == 1 ? "" : "s",
               c.quick        ? "the two halves at once (--quick)"
               : c.sequential ? "one pair (--sequential)"
                              : "disjoint pairs at once (circle method)",
               res.repeats > 1 ? fmt::format("; {} schedules, each link's median", res.repeats)
                               : std::string());
    fmt::print(out,
               "# bandwidth: bibw, windows of {} x {} both ways (median of {}); latency: "
               "ping-pong of {} / 2 (median of {})\n",
               o.probe.window, formatSize(o.probe.bandwidthBytes), o.probe.bandwidthIters,
               formatSize(o.probe.latencyBytes), o.probe.latencyIters);
    fmt::print(out,
               "# suspect: below its class median by more than {:g}% and beyond {:g} MAD; "
               "re-measured alone{}\n",
               o.suspect.gap * 100, o.suspect.k, o.confirm ? "" : " (off: --no-confirm)");
    for (const InjectSpec& spec : specs) {
      fmt::print(out, "# injected: {}\n", describeInject(spec));
    }
    const std::string below = linksBelowBound(res.links, s.topology(), c.linkRate);
    const bool healthy = res.healthy() && below.empty();
    tooNoisy = healthy && res.agreement.tooNoisy;
    printAndStoreLinks(out, res, graph, transport, o.probe, s, below);
    if (!c.live.jsonPath.empty()) {
      json j;
      j["command"] = "diag links";
      j["ranks"] = n;
      j["transport"] = transport;
      j["rounds"] = res.rounds;
      j["schedules"] = res.repeats;
      j["latency_window_seconds"] = res.latencyWindowSeconds;
      j["bandwidth_window_seconds"] = res.bandwidthWindowSeconds;
      j["matrix_seconds"] = res.matrixSeconds;
      j["confirm_seconds"] = res.confirmSeconds;
      json inj = json::array();
      for (const InjectSpec& spec : specs) inj.push_back(describeInject(spec));
      j["injected"] = inj;
      j["healthy"] = healthy && !tooNoisy;
      j["too_noisy"] = tooNoisy;
      j["repeat_spread_pct"] = res.agreement.spreadPct;
      j["bandwidth"] = json::parse(verdictJson(res.finalBandwidth, bwInfoOf(graph)));
      j["latency"] = json::parse(verdictJson(res.finalLatency, latInfoOf(graph)));
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
      writeOutputFile(c.live.jsonPath, j.dump(2) + "\n", "--json");
    }
    if (!c.live.csvPath.empty()) {
      writeOutputFile(c.live.csvPath,
                      linkCsvHeader() + linkCsvRows(res.finalBandwidth, bwInfoOf(graph)) +
                          linkCsvRows(res.finalLatency, latInfoOf(graph)),
                      "--csv");
    }
    suspects = !healthy;
    return RunOutcome{false, wrong, "byte(s) received wrong"};
  });
  // 3 as the gate's "inconclusive": neither healthy nor a suspect.
  return rc == 0 && suspects ? 1 : rc == 0 && tooNoisy ? kExitTooNoisy : rc;
}

// ---- bisect ----

int doBisect(const BisectCli& c) {
  DiagBisectOptions o;
  o.fallback = toLinksOptions(c.links);
  o.suspect = o.fallback.suspect;
  o.bytes = parseSize(c.collSize);
  if (o.bytes < 4 || o.bytes > (1ull << 30)) throw UsageError("--coll-size must be 4 B..1G");
  if (c.calls < 1) throw UsageError(fmt::format("--calls {} must be at least 1", c.calls));
  if (c.repeats < 1) throw UsageError(fmt::format("--repeats {} must be at least 1", c.repeats));
  o.iterations = c.calls;
  o.repeats = c.repeats;
  o.timeoutSeconds = c.links.live.timeout;
  const LiveOptions& live = c.links.live;
  const std::vector<InjectSpec> specs = parseInjects(live.inject);
  checkWritable(live.jsonPath, "--json");
  checkWritable(live.csvPath, "--csv");
  bool suspects = false;
  const int rc = runMeasuringCommand(sessionOf(live), [&](RunSession& s) {
    const std::string transport =
        prepareLive(s, live, specs, "diag bisect", 4, "two halves of 2", injectDecorator(specs));
    s.beginRun();
    const LinkGraph graph = rankGraph(s.hosts());
    // A group's sub-team injects by world ranks.
    SubTeamHook onSubTeam = [&](Team& sub, const std::vector<int>& worldRanks) {
      sub.setTransportDecorator(injectDecorator(specs, worldRanks));
    };
    DiagBisectResult res = runDiagBisect(s.team(), transport, o, {}, onSubTeam);
    if (!s.root()) return RunOutcome{};
    std::FILE* out = stdout;
    s.printHeader(out);
    fmt::print(out,
               "# diag bisect over {}: ring allreduce of {} on both halves at once ({} calls x {} "
               "repeats, median), into the half slower by more than {:g}%\n",
               transport, formatSize(o.bytes), o.iterations, o.repeats, o.suspect.gap * 100);
    for (const InjectSpec& spec : specs) {
      fmt::print(out, "# injected: {}\n", describeInject(spec));
    }
    auto list = [](const std::vector<int>& v) { return fmt::format("{}", fmt::join(v, ",")); };
    fmt::print(out, "# world: {:.3f} GB/s busbw\n", res.worldBusbw);
    for (size_t i = 0; i < res.rounds.size(); ++i) {
      const BisectRound& r = res.rounds[i];
      fmt::print(out, "# round {}: [{}] {:.3f} GB/s vs [{}] {:.3f} GB/s: {}\n", i + 1, list(r.a),
                 r.busbwA, list(r.b), r.busbwB, r.decision);
    }
    bool healthy = res.healthy;
    if (res.slowRank >= 0) {
      fmt::print(out,
                 "SUSPECT rank {} (bisect): every group holding it was slower by more than "
                 "{:g}%, in {} round{}\n",
                 res.slowRank, o.suspect.gap * 100, res.rounds.size(),
                 res.rounds.size() == 1 ? "" : "s");
    } else if (res.fellBack) {
      fmt::print(out, "# bisection cannot decide (halves alike): the pair matrix decides\n");
      printAndStoreLinks(out, res.links, graph, transport, o.fallback.probe, s);
      healthy = res.links.healthy();
    } else {
      fmt::print(out, "healthy: the halves alike and the world as fast as they are\n");
    }
    {
      auto add = [&](const std::vector<int>& group, double busbw, const std::string& msg) {
        ResultRecord r;
        r.runId = s.runId();
        r.collective = "diag-bisect";
        r.variant = fmt::format("ring/{}@{}", transport, list(group));
        r.dtype = "float";
        r.op = "sum";
        r.sizeBytes = o.bytes;
        r.count = o.bytes / 4;
        r.placement = "out";
        r.nranks = static_cast<int>(group.size());
        r.busbw = busbw;
        r.timeKnown = r.medianKnown = false;  // a bisection step keeps its bandwidth only
        r.message = msg;
        s.addResult(r);
      };
      std::vector<int> all(static_cast<size_t>(s.team().size()));
      for (int i = 0; i < s.team().size(); ++i) all[static_cast<size_t>(i)] = i;
      add(all, res.worldBusbw, "");
      for (const BisectRound& r : res.rounds) {
        add(r.a, r.busbwA, r.decision == "a slower" ? "slower half" : "");
        add(r.b, r.busbwB, r.decision == "b slower" ? "slower half" : "");
      }
      if (res.slowRank >= 0) add({res.slowRank}, 0, fmt::format("suspect rank {}", res.slowRank));
    }
    if (!live.jsonPath.empty()) {
      json j;
      j["command"] = "diag bisect";
      j["ranks"] = s.team().size();
      j["transport"] = transport;
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
      if (res.fellBack) {
        j["bandwidth"] = json::parse(verdictJson(res.links.finalBandwidth, bwInfoOf(graph)));
        j["latency"] = json::parse(verdictJson(res.links.finalLatency, latInfoOf(graph)));
      }
      j["healthy"] = healthy;
      writeOutputFile(live.jsonPath, j.dump(2) + "\n", "--json");
    }
    if (!live.csvPath.empty() && res.fellBack) {
      writeOutputFile(live.csvPath,
                      linkCsvHeader() + linkCsvRows(res.links.finalBandwidth, bwInfoOf(graph)) +
                          linkCsvRows(res.links.finalLatency, latInfoOf(graph)),
                      "--csv");
    }
    suspects = !(healthy && res.slowRank < 0);
    int64_t wrong = 0;
    for (const LinkSample& l : res.links.links) wrong += l.wrong;
    return RunOutcome{false, wrong, "byte(s) received wrong"};
  });
  return rc == 0 && suspects ? 1 : rc;
}

// ---- ranks ----

int doRanks(const RanksCli& c) {
  DiagRanksOptions o;
  o.suspect = suspectOptions(c.live.k, c.live.gap);
  o.bytes = parseSize(c.size);
  if (o.bytes < 4 || o.bytes > (1ull << 30)) throw UsageError("--size must be 4 B..1G");
  if (c.iters < 3) throw UsageError(fmt::format("-n {} must be at least 3", c.iters));
  if (c.warmup < 0) throw UsageError("-w must not be negative");
  if (!(c.live.timeout > 0)) throw UsageError("-T must be positive");
  o.iterations = c.iters;
  o.warmup = c.warmup;
  o.timeoutSeconds = c.live.timeout;
  const std::vector<InjectSpec> specs = parseInjects(c.live.inject);
  checkWritable(c.live.jsonPath, "--json");
  checkWritable(c.live.csvPath, "--csv");
  bool suspects = false;
  const int rc = runMeasuringCommand(sessionOf(c.live), [&](RunSession& s) {
    // The probe under the injector: an injected delay is a late arrival.
    ArrivalProbe* probe = nullptr;
    Team::TransportDecorator decorator = [&](const std::string&, std::unique_ptr<Transport> t) {
      auto owned = std::make_unique<ArrivalProbe>(std::move(t));
      probe = owned.get();
      return injectFaults(std::move(owned), specs);
    };
    const std::string transport =
        prepareLive(s, c.live, specs, "diag ranks", 3, "a straggler is judged against the others",
                    std::move(decorator));
    s.beginRun();
    DiagRanksResult res = runDiagRanks(s.team(), *probe, s.team().transport(transport), o);
    if (!s.root()) return RunOutcome{};
    const int n = s.team().size();
    const RingStraggleVerdict& v = res.verdict;
    const StraggleVerdict& pooled = v.arrival;
    std::FILE* out = stdout;
    s.printHeader(out);
    fmt::print(out,
               "# diag ranks over {}: ring allreduce of {} x {} iterations in each direction "
               "(forward: rank r sends to r+1; backward: to r-1), a barrier before each; arrival "
               "= first message posted, finish = call returned (from the barrier)\n",
               transport, formatSize(o.bytes), o.iterations);
    fmt::print(out,
               "# median call {:.1f} us in {} steps; arriving late: beyond {:g} MAD of the ranks' "
               "and {:g}% of a step; finishing late: the last in {:g}% of each direction's calls "
               "and {:g} of a step late in each, where the two directions' pattern puts them; in "
               "one direction alone: {:g}% and {:g} of a step\n",
               pooled.iterationUs, res.steps, o.suspect.k, o.suspect.gap * 100,
               RingBounds::kLastShareEach * 100, RingBounds::kLateStepsEach,
               RingBounds::kLastShareOneWay * 100, RingBounds::kLateStepsOneWay);
    for (const InjectSpec& spec : specs) {
      fmt::print(out, "# injected: {}\n", describeInject(spec));
    }
    // What the verdict says of a rank: its own suspect kind, or the links it finishes behind.
    auto verdictOf = [&](int rank) {
      std::vector<std::string> says;
      for (const StraggleSuspect& x : v.suspects) {
        if (x.kind != StraggleSuspect::Kind::kLink && x.rank == rank) says.push_back(x.what());
        if (x.kind == StraggleSuspect::Kind::kLink && (x.from == rank || x.to == rank)) {
          says.push_back(x.name());
        }
      }
      return fmt::format("{}", fmt::join(says, ", "));
    };
    auto late = [&](const StraggleVerdict& d, int rank) {
      const RankStraggle& r = d.ranks[static_cast<size_t>(rank)];
      return fmt::format("{:+.1f} us, last in {}/{}", r.finishLateUs, r.lastToFinish, d.iterations);
    };
    fmt::print(out, "#\n# {:>4} {:>14} {:>12} {:>14} {:>9} {:>14} {:>9}  verdict\n", "rank",
               "arrive late us", "last arrive", "fwd finish us", "fwd last", "bwd finish us",
               "bwd last");
    for (size_t i = 0; i < pooled.ranks.size(); ++i) {
      const RankStraggle& r = pooled.ranks[i];
      const RankStraggle& f = v.forward.ranks[i];
      const RankStraggle& b = v.backward.ranks[i];
      fmt::print(out, "  {:>4} {:>14.1f} {:>12} {:>14.1f} {:>9} {:>14.1f} {:>9}  {}\n", r.rank,
                 r.arriveLateUs, fmt::format("{}/{}", r.lastToArrive, pooled.iterations),
                 f.finishLateUs, fmt::format("{}/{}", f.lastToFinish, v.forward.iterations),
                 b.finishLateUs, fmt::format("{}/{}", b.lastToFinish, v.backward.iterations),
                 verdictOf(r.rank));
    }
    for (const StraggleSuspect& x : v.suspects) {
      using Kind = StraggleSuspect::Kind;
      std::string why;
      switch (x.kind) {
        case Kind::kArrivesLate: {
          const RankStraggle& r = pooled.ranks[static_cast<size_t>(x.rank)];
          why = fmt::format(
              "{:+.1f} us after the median rank, last to arrive in {} of {} calls: slow before it "
              "communicates (its compute, its process or CPU)",
              r.arriveLateUs, r.lastToArrive, pooled.iterations);
          break;
        }
        case Kind::kSendsSlowly:
          why = fmt::format(
              "arrives on time; the ranks it sends to finish last: rank {} in the forward ring "
              "({}), rank {} in the backward ring ({}): its outgoing side (NIC, link or process)",
              (x.rank + 1) % n, late(v.forward, (x.rank + 1) % n), (x.rank + n - 1) % n,
              late(v.backward, (x.rank + n - 1) % n));
          break;
        case Kind::kReceivesSlowly:
          why = fmt::format(
              "arrives on time, finishes last in both directions of the ring (forward {}; "
              "backward {}): its incoming side (NIC, link or process)",
              late(v.forward, x.rank), late(v.backward, x.rank));
          break;
        case Kind::kLink:
          if (x.bothWays) {
            why = fmt::format(
                "rank {} finishes last in the forward ring ({}) and rank {} in the backward ring "
                "({}): the hop between them, both ways (diag links measures it)",
                x.to, late(v.forward, x.to), x.from, late(v.backward, x.from));
          } else {
            const bool fwd = (x.from + 1) % n == x.to;
            why = fmt::format(
                "rank {} finishes last in the {} ring ({}), the other direction is even: the hop "
                "from rank {} to rank {}",
                x.to, fwd ? "forward" : "backward", late(fwd ? v.forward : v.backward, x.to),
                x.from, x.to);
          }
          break;
      }
      fmt::print(out, "SUSPECT {} ({}): {}\n", x.name(), x.what(), why);
    }
    for (const std::string& note : pooled.notes) fmt::print(out, "# note: {}\n", note);
    if (v.healthy()) {
      fmt::print(out, "healthy: no straggler among {} ranks over {} calls in each direction\n", n,
                 v.forward.iterations);
    }
    for (size_t dir = 0; dir < 2; ++dir) {
      for (const RankStraggle& r : pooled.ranks) {
        for (bool arrival : {true, false}) {
          ResultRecord rec;
          rec.runId = s.runId();
          rec.collective = arrival ? "diag-arrival" : "diag-finish";
          rec.variant =
              fmt::format("{}/{}@{}", dir == 0 ? "ring" : "ring-backward", transport, r.rank);
          rec.dtype = "float";
          rec.op = "sum";
          rec.sizeBytes = o.bytes;
          rec.count = o.bytes / 4;
          rec.placement = "out";
          rec.nranks = n;
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
            if (dir == 0 && at == r.rank && arrival == late) {
              rec.message = fmt::format("suspect {}: {}", x.name(), x.what());
            }
          }
          s.addResult(rec);
        }
      }
    }
    if (!c.live.jsonPath.empty()) {
      json j;
      j["command"] = "diag ranks";
      j["ranks"] = n;
      j["transport"] = transport;
      j["iterations"] = v.forward.iterations;
      j["iteration_us"] = pooled.iterationUs;
      j["healthy"] = v.healthy();
      json rows = json::array();
      for (size_t i = 0; i < pooled.ranks.size(); ++i) {
        const RankStraggle& r = pooled.ranks[i];
        rows.push_back({{"rank", r.rank},
                        {"arrive_late_us", r.arriveLateUs},
                        {"last_to_arrive", r.lastToArrive},
                        {"late_arriver", r.lateArriver},
                        {"forward_finish_late_us", v.forward.ranks[i].finishLateUs},
                        {"forward_last_to_finish", v.forward.ranks[i].lastToFinish},
                        {"backward_finish_late_us", v.backward.ranks[i].finishLateUs},
                        {"backward_last_to_finish", v.backward.ranks[i].lastToFinish},
                        {"verdict", verdictOf(r.rank)}});
      }
      j["per_rank"] = rows;
      json sus = json::array();
      for (const StraggleSuspect& x : v.suspects) {
        sus.push_back({{"name", x.name()}, {"what", x.what()}});
      }
      j["suspects"] = sus;
      writeOutputFile(c.live.jsonPath, j.dump(2) + "\n", "--json");
    }
    if (!c.live.csvPath.empty()) {
      std::string csv =
          "rank,arrive_late_us,last_to_arrive,forward_finish_late_us,forward_last_to_finish,"
          "backward_finish_late_us,backward_last_to_finish,verdict\n";
      for (size_t i = 0; i < pooled.ranks.size(); ++i) {
        const RankStraggle& r = pooled.ranks[i];
        csv += fmt::format("{},{:.3f},{},{:.3f},{},{:.3f},{},\"{}\"\n", r.rank, r.arriveLateUs,
                           r.lastToArrive, v.forward.ranks[i].finishLateUs,
                           v.forward.ranks[i].lastToFinish, v.backward.ranks[i].finishLateUs,
                           v.backward.ranks[i].lastToFinish, verdictOf(r.rank));
      }
      writeOutputFile(c.live.csvPath, csv, "--csv");
    }
    suspects = !v.healthy();
    return RunOutcome{};
  });
  return rc == 0 && suspects ? 1 : rc;
}

// ---- logs ----

int doLogs(const LogsCli& c) {
  SuspectOptions so = suspectOptions(c.k, c.gap);
  checkWritable(c.jsonPath, "--json");
  checkWritable(c.csvPath, "--csv");
  std::vector<PairwiseInput> inputs;
  for (const std::string& file : c.files) {
    ImportOptions io;
    io.path = file;
    io.label = c.label;
    inputs.push_back({file, parsePairwiseLog(readText(file), io)});
  }
  PairwiseLogs logs = pairwiseLinks(inputs);
  fmt::print("# diag logs: {} log(s), {} hosts\n", c.files.size(), logs.hosts.size());
  fmt::print(
      "# link value: mean busbw (out-of-place) over the sizes every log measured; suspect: below "
      "the median link by more than {:g}% and beyond {:g} MAD\n",
      so.gap * 100, so.k);
  LinkGraph graph;
  graph.endpointNames = logs.hosts;
  graph.endpointKind = "host";
  bool healthy = true;
  json jout;
  jout["command"] = "diag logs";
  jout["files"] = c.files;
  jout["verdicts"] = json::array();
  std::string csv = linkCsvHeader();
  std::vector<std::pair<std::string, std::vector<ResultRecord>>> stored;
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
    fmt::print("#\n# {}: {} links, sizes {}..{}\n{}", m.collective, m.links.size(),
               m.sizes.empty() ? std::string("-") : formatSize(m.sizes.front()),
               m.sizes.empty() ? std::string("-") : formatSize(m.sizes.back()),
               textHeatMap(v, info));
    for (const PairwiseLink* l : failed) {
      fmt::print("FAILED link {}-{} ({}): {} ({})\n", logs.hosts[static_cast<size_t>(l->pair.a)],
                 logs.hosts[static_cast<size_t>(l->pair.b)], m.collective, l->why, l->file);
    }
    fmt::print("{}", verdictText(v, info));
    healthy = healthy && v.healthy() && failed.empty();
    json jv = json::parse(verdictJson(v, info));
    json jf = json::array();
    for (const PairwiseLink* l : failed) {
      jf.push_back({{"a", l->pair.a}, {"b", l->pair.b}, {"file", l->file}, {"why", l->why}});
    }
    jv["failed"] = jf;
    jout["verdicts"].push_back(jv);
    csv += linkCsvRows(v, info);
    std::vector<ResultRecord> records;
    for (size_t i = 0; i < v.links.size(); ++i) {
      ResultRecord r;
      r.collective = std::string(kDiagPrefix) + m.collective;
      r.variant = diagVariant("nccl-tests", logs.hosts[static_cast<size_t>(v.links[i].pair.a)],
                              logs.hosts[static_cast<size_t>(v.links[i].pair.b)]);
      r.dtype = "none";
      r.op = "none";
      r.sizeBytes = m.sizes.empty() ? 0 : m.sizes.back();
      r.placement = "out";
      r.nranks = 2;
      r.algbw = r.busbw = v.links[i].value;
      r.timeKnown = r.medianKnown = false;  // the logs give a link's bandwidth only
      r.message = linkMessage(v, i, info);
      records.push_back(r);
    }
    for (const PairwiseLink* l : failed) {
      ResultRecord r;
      r.collective = std::string(kDiagPrefix) + m.collective;
      r.variant = diagVariant("nccl-tests", logs.hosts[static_cast<size_t>(l->pair.a)],
                              logs.hosts[static_cast<size_t>(l->pair.b)]);
      r.placement = "out";
      r.nranks = 2;
      r.status = "failed";
      r.timeKnown = r.medianKnown = false;
      r.message = l->why + " (" + l->file + ")";
      records.push_back(r);
    }
    stored.emplace_back(m.collective, std::move(records));
  }
  for (const std::string& note : logs.notes) fmt::print("# note: {}\n", note);
  jout["healthy"] = healthy;
  if (healthy) fmt::print("healthy: no suspect link or host in {} log(s)\n", c.files.size());
  if (!c.jsonPath.empty()) writeOutputFile(c.jsonPath, jout.dump(2) + "\n", "--json");
  if (!c.csvPath.empty()) writeOutputFile(c.csvPath, csv, "--csv");
  if (!c.noDb) {
    Store store = Store::open(c.db);
    RunRecord run;
    run.label = c.label;
    run.commandLine = commandLine();
    run.source = "collbench";
    run.collbenchVersion = COLLBENCH_VERSION;
    run.worldKind = "imported";
    run.worldSize = static_cast<int>(logs.hosts.size());
    for (const std::string& h : logs.hosts) run.hosts += (run.hosts.empty() ? "" : ",") + h;
    run.status = RunStatus::kRunning;
    int64_t id = store.beginRun(run);
    std::vector<ResultRecord> all;
    for (auto& [coll, records] : stored) {
      for (ResultRecord& r : records) {
        r.runId = id;
        all.push_back(r);
      }
    }
    store.addResults(all);
    store.finishRun(id, RunStatus::kOk);
    fmt::print("# stored as run {} in {}\n", id, c.db);
  }
  return healthy ? 0 : 1;
}

void addLiveOptions(CLI::App* sub, LiveOptions& o) {
  sub->add_option("--transport", o.transport,
                  "local, shm, mpi or ucx (default: the fastest for the world)");
  sub->add_option("--inject", o.inject,
                  "Fault injection for tests and demos: slow-link=A-B:FACTOR (the link A-B "
                  "FACTOR times slower), slow-rank=R:DELAY (rank R waits DELAY, e.g. 200us, "
                  "before each exchange); repeatable");
  sub->add_option("--k", o.k, "Robust bound: MADs (scaled to sigma) below the class median")
      ->capture_default_str();
  sub->add_option("--gap", o.gap, "Practical gap below the class median (7% or 0.07)")
      ->capture_default_str();
  sub->add_option("-T,--timeout", o.timeout, "Deadline in seconds of any single wait")
      ->capture_default_str();
  sub->add_option("--db", o.db, "SQLite database")->capture_default_str();
  sub->add_flag("--no-db", o.noDb, "Do not store the run");
  sub->add_option("--label", o.label, "Label stored with the run");
  sub->add_option("--json", o.jsonPath, "Write the matrix and verdict as JSON to this file");
  sub->add_option("--csv", o.csvPath, "Write the links as CSV to this file");
  sub->add_option("--np", o.world.np, "Ranks of the local world (threads)");
}

// Live options and the pair matrix's (links, and the fallback of bisect).
void addLinksOptions(CLI::App* sub, LinksCli& o) {
  addLiveOptions(sub, o.live);
  sub->add_flag("--quick", o.quick, "Pair matrix: one round between the two halves (n/2 links)");
  sub->add_flag("--sequential", o.sequential,
                "Pair matrix: every pair alone, one after another (n(n-1)/2 rounds)");
  sub->add_flag("--no-confirm", o.noConfirm, "Report suspects without re-measuring them alone");
  sub->add_option("--schedules", o.repeats,
                  "Pair matrix: times the concurrent rounds are played, ranks relabelled each "
                  "time (each link's median)")
      ->capture_default_str();
  sub->add_option("--size", o.size, "Bandwidth message size")->capture_default_str();
  sub->add_option("--latency-size", o.latencySize, "Latency message size")->capture_default_str();
  sub->add_option("-W,--window", o.window, "Messages per bibw window")->capture_default_str();
  sub->add_option("--latency-iters", o.latencyIters, "Timed ping-pongs per link")
      ->capture_default_str();
}

}  // namespace

void setupDiagCommand(CLI::App& app, Action& action) {
  auto* diag = app.add_subcommand(
      "diag",
      "Find the slow link, rank or node and say so (exit 0 healthy, 1 suspects, 2 usage, 3 too "
      "noisy to judge)");
  diag->require_subcommand(1);

  auto links = std::make_shared<LinksCli>();
  auto* l = diag->add_subcommand(
      "links",
      "Every rank pair in n-1 rounds of disjoint pairs at once (circle method): bandwidth and "
      "latency matrices and the suspects, re-measured alone");
  addLinksOptions(l, *links);
  l->add_option("-n,--iters", links->iters, "Timed bibw windows per link")->capture_default_str();
  l->add_option("--link-rate", links->linkRate,
                "Gb/s per direction of every link, where the topology knows no physical rate "
                "(virtual interfaces): links under the expected share of it are below bound")
      ->check(CLI::PositiveNumber);
  l->callback([links, &action] { action = [links] { return doLinks(*links); }; });

  auto bisect = std::make_shared<BisectCli>();
  auto* b = diag->add_subcommand(
      "bisect",
      "An allreduce on both halves at once, into the slower half, in about log2(n) rounds; the "
      "pair matrix decides when the halves are alike");
  addLinksOptions(b, bisect->links);
  b->add_option("--coll-size", bisect->collSize, "Allreduce size")->capture_default_str();
  b->add_option("--calls", bisect->calls, "Allreduce calls per repeat")->capture_default_str();
  b->add_option("--repeats", bisect->repeats, "Repeats per round (the median decides)")
      ->capture_default_str();
  b->callback([bisect, &action] { action = [bisect] { return doBisect(*bisect); }; });

  auto ranks = std::make_shared<RanksCli>();
  auto* r = diag->add_subcommand(
      "ranks",
      "Stragglers: which rank arrives last at an allreduce, how often, by how much; and, from who "
      "finishes last in each direction of the ring, which rank sends or receives slowly or "
      "which link is slow");
  addLiveOptions(r, ranks->live);
  r->add_option("--size", ranks->size, "Allreduce size")->capture_default_str();
  r->add_option("-n,--iters", ranks->iters, "Timed calls in each direction of the ring")
      ->capture_default_str();
  r->add_option("-w,--warmup_iters", ranks->warmup, "Warm-up calls")->capture_default_str();
  r->callback([ranks, &action] { action = [ranks] { return doRanks(*ranks); }; });

  auto logs = std::make_shared<LogsCli>();
  auto* g = diag->add_subcommand(
      "logs", "The same verdict over existing nccl-tests logs of node pairs (one pair per file)");
  g->add_option("files", logs->files, "nccl-tests logs, each of two hosts")->required();
  g->add_option("--k", logs->k, "Robust bound: MADs (scaled to sigma) below the median")
      ->capture_default_str();
  g->add_option("--gap", logs->gap, "Practical gap below the median (7% or 0.07)")
      ->capture_default_str();
  g->add_option("--db", logs->db, "SQLite database")->capture_default_str();
  g->add_flag("--no-db", logs->noDb, "Do not store the matrix and verdict");
  g->add_option("--label", logs->label, "Label of the stored run");
  g->add_option("--json", logs->jsonPath, "Write the matrices and verdicts as JSON to this file");
  g->add_option("--csv", logs->csvPath, "Write the links as CSV to this file");
  g->callback([logs, &action] { action = [logs] { return doLogs(*logs); }; });
}

}  // namespace cb::cli
