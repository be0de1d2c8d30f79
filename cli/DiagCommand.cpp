// `collbench diag links|ranks|bisect|logs`: find the slow link, the slow rank, the slow node, and
// say so. The measurements, the verdict rules and each command's documents live in diagnosis/;
// this file parses and checks the flags, runs the world, prints, writes and stores what
// diagnosis/DiagDocuments returns. Exit codes fit scripts: 0 healthy, 1 suspects, 2 usage or
// environment, 3 too noisy to judge (diag links: its schedules disagreed).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>

#include "adapters/PeakJudge.h"
#include "cli/Command.h"
#include "cli/MeasureOptions.h"
#include "collectives/transport/InjectTransport.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/Size.h"
#include "core/Text.h"
#include "diagnosis/DiagDocuments.h"
#include "results/Store.h"
#include "results/import/Import.h"
#include "session/RunSession.h"

namespace cb::cli {
namespace {

constexpr int kExitTooNoisy = 3;

MeasureOptions withTimeout(double seconds) {
  MeasureOptions o;
  o.timeout = seconds;
  return o;
}

// Options every live diagnosis shares.
struct LiveOptions {
  std::string transport;  // "" = the world's default
  std::vector<std::string> inject;
  double k = 3;
  std::string gap = "7%";
  std::string jsonPath, csvPath;
  MeasureOptions measure = withTimeout(60);  // -T, --db, --no-db, --label, --np
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

DiagRun diagRun(const RunSession& s, const std::string& transport,
                const std::vector<InjectSpec>& specs) {
  DiagRun run;
  run.runId = s.runId();
  run.transport = transport;
  for (const InjectSpec& spec : specs) run.injected.push_back(describeInject(spec));
  return run;
}

// Prints a diagnosis's text after the run header, writes its files, stores its records.
void emit(RunSession& s, const DiagDocuments& d, const LiveOptions& live) {
  s.printHeader(stdout);
  fmt::print("{}", d.text);
  for (const ResultRecord& r : d.records) s.addResult(r);
  if (!live.jsonPath.empty()) writeOutputFile(live.jsonPath, d.json, "--json");
  if (!live.csvPath.empty() && !d.csv.empty()) writeOutputFile(live.csvPath, d.csv, "--csv");
}

int64_t wrongBytes(const DiagLinksResult& res) {
  int64_t wrong = 0;
  for (const LinkSample& l : res.links) wrong += l.wrong;
  return wrong;
}

// ---- links ----

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
  if (!(c.live.measure.timeout > 0)) throw UsageError("-T must be positive");
  o.probe.window = c.window;
  o.probe.bandwidthIters = c.iters;
  o.probe.latencyIters = c.latencyIters;
  o.probe.latencyWarmup = std::max(1, c.latencyIters / 10);
  o.probe.timeoutSeconds = c.live.measure.timeout;
  return o;
}

int doLinks(const LinksCli& c) {
  const DiagLinksOptions o = toLinksOptions(c);
  const std::vector<InjectSpec> specs = parseInjects(c.live.inject);
  checkWritable(c.live.jsonPath, "--json");
  checkWritable(c.live.csvPath, "--csv");
  LinksOutcome outcome{true, false};  // what the ranks other than 0 return
  const int rc = runMeasuringCommand(c.live.measure.session(), [&](RunSession& s) {
    const std::string transport =
        prepareLive(s, c.live, specs, "diag links", 3, "a link is judged against the others",
                    injectDecorator(specs));
    s.beginRun();
    DiagLinksResult res = runDiagLinks(s.team(), transport, o);
    if (!s.root()) return RunOutcome{};
    const std::string pattern = c.quick        ? "the two halves at once (--quick)"
                                : c.sequential ? "one pair (--sequential)"
                                               : "disjoint pairs at once (circle method)";
    const std::string below = linksBelowBound(res.links, s.topology(), c.linkRate);
    outcome = linksOutcome(res, below);
    emit(s,
         linksDocuments(diagRun(s, transport, specs), res, o, rankGraph(s.hosts()), pattern, below),
         c.live);
    return RunOutcome{false, wrongBytes(res), "byte(s) received wrong"};
  });
  // 3 as the gate's "inconclusive": neither healthy nor a suspect.
  if (rc != 0) return rc;
  return outcome.tooNoisy ? kExitTooNoisy : outcome.healthy ? 0 : 1;
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
  o.timeoutSeconds = c.links.live.measure.timeout;
  const LiveOptions& live = c.links.live;
  const std::vector<InjectSpec> specs = parseInjects(live.inject);
  checkWritable(live.jsonPath, "--json");
  checkWritable(live.csvPath, "--csv");
  bool healthy = true;
  const int rc = runMeasuringCommand(live.measure.session(), [&](RunSession& s) {
    const std::string transport =
        prepareLive(s, live, specs, "diag bisect", 4, "two halves of 2", injectDecorator(specs));
    s.beginRun();
    // A group's sub-team injects by world ranks.
    SubTeamHook onSubTeam = [&](Team& sub, const std::vector<int>& worldRanks) {
      sub.setTransportDecorator(injectDecorator(specs, worldRanks));
    };
    DiagBisectResult res = runDiagBisect(s.team(), transport, o, {}, onSubTeam);
    if (!s.root()) return RunOutcome{};
    healthy = bisectHealthy(res);
    emit(s,
         bisectDocuments(diagRun(s, transport, specs), res, o, rankGraph(s.hosts()),
                         s.team().size()),
         live);
    return RunOutcome{false, wrongBytes(res.links), "byte(s) received wrong"};
  });
  return rc == 0 && !healthy ? 1 : rc;
}

// ---- ranks ----

int doRanks(const RanksCli& c) {
  DiagRanksOptions o;
  o.suspect = suspectOptions(c.live.k, c.live.gap);
  o.bytes = parseSize(c.size);
  if (o.bytes < 4 || o.bytes > (1ull << 30)) throw UsageError("--size must be 4 B..1G");
  if (c.iters < 3) throw UsageError(fmt::format("-n {} must be at least 3", c.iters));
  if (c.warmup < 0) throw UsageError("-w must not be negative");
  if (!(c.live.measure.timeout > 0)) throw UsageError("-T must be positive");
  o.iterations = c.iters;
  o.warmup = c.warmup;
  o.timeoutSeconds = c.live.measure.timeout;
  const std::vector<InjectSpec> specs = parseInjects(c.live.inject);
  checkWritable(c.live.jsonPath, "--json");
  checkWritable(c.live.csvPath, "--csv");
  bool healthy = true;
  const int rc = runMeasuringCommand(c.live.measure.session(), [&](RunSession& s) {
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
    healthy = res.verdict.healthy();
    emit(s, ranksDocuments(diagRun(s, transport, specs), res, o, s.team().size()), c.live);
    return RunOutcome{};
  });
  return rc == 0 && !healthy ? 1 : rc;
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
  const PairwiseLogs logs = pairwiseLinks(inputs);
  LogsDiagnosis diag = logsDocuments(logs, c.files, so);
  fmt::print("{}", diag.docs.text);
  if (!c.jsonPath.empty()) writeOutputFile(c.jsonPath, diag.docs.json, "--json");
  if (!c.csvPath.empty()) writeOutputFile(c.csvPath, diag.docs.csv, "--csv");
  if (!c.noDb) {
    Store store = Store::open(c.db);
    const int64_t id = store.beginRun(logsRunRecord(logs, c.label, commandLine()));
    for (ResultRecord& r : diag.docs.records) r.runId = id;
    store.addResults(diag.docs.records);
    store.finishRun(id, RunStatus::kOk);
    fmt::print("# stored as run {} in {}\n", id, c.db);
  }
  return diag.healthy ? 0 : 1;
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
  sub->add_option("--json", o.jsonPath, "Write the matrix and verdict as JSON to this file");
  sub->add_option("--csv", o.csvPath, "Write the links as CSV to this file");
  addMeasureOptions(sub, o.measure, "wait", "Ranks of the local world (threads)", false);
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
      "Stragglers: which rank arrives last at an allreduce, how often, by how much; and, from "
      "who "
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
