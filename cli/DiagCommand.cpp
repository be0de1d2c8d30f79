// `collbench diag links|ranks|bisect|logs|nodes`: find the slow link, the slow rank, the slow node,
// and say so. The measurements, the verdict rules and each command's documents live in diagnosis/;
// this file parses and checks the flags, runs the world, prints, writes and stores what
// diagnosis/DiagDocuments returns. Exit codes fit scripts: 0 healthy, 1 suspects, 2 usage or
// environment, 3 too noisy to judge (other processes held the ranks' CPUs; diag links: or its
// schedules disagreed).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <span>
#include <sstream>

#include "adapters/FleetInputs.h"
#include "adapters/PeakJudge.h"
#include "cli/Command.h"
#include "cli/DiagFlags.h"
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

// A live diagnosis's exit: the run's own failure first, then 0 healthy, 3 too noisy (as the gate's
// "inconclusive": neither healthy nor a suspect), 1 suspects.
int exitFor(int rc, const DiagOutcome& outcome) {
  if (rc != 0) return rc;
  return outcome.tooNoisy ? kExitTooNoisy : outcome.healthy ? 0 : 1;
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

int doLinks(const LinksCli& c) {
  const DiagLinksOptions o = toLinksOptions(c);
  const std::vector<InjectSpec> specs = parseInjects(c.live.inject);
  checkWritable(c.live.jsonPath, "--json");
  checkWritable(c.live.csvPath, "--csv");
  DiagOutcome outcome{true, false};  // what the ranks other than 0 return
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
  return exitFor(rc, outcome);
}

// ---- bisect ----

int doBisect(const BisectCli& c) {
  const DiagBisectOptions o = toBisectOptions(c);
  const LiveOptions& live = c.links.live;
  const std::vector<InjectSpec> specs = parseInjects(live.inject);
  checkWritable(live.jsonPath, "--json");
  checkWritable(live.csvPath, "--csv");
  DiagOutcome outcome{true, false};  // what the ranks other than 0 return
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
    outcome = bisectOutcome(res);
    emit(s,
         bisectDocuments(diagRun(s, transport, specs), res, o, rankGraph(s.hosts()),
                         s.team().size()),
         live);
    return RunOutcome{false, wrongBytes(res.links), "byte(s) received wrong"};
  });
  return exitFor(rc, outcome);
}

// ---- ranks ----

int doRanks(const RanksCli& c) {
  const DiagRanksOptions o = toRanksOptions(c);
  const std::vector<InjectSpec> specs = parseInjects(c.live.inject);
  checkWritable(c.live.jsonPath, "--json");
  checkWritable(c.live.csvPath, "--csv");
  DiagOutcome outcome{true, false};
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
    outcome = ranksOutcome(res);
    emit(s, ranksDocuments(diagRun(s, transport, specs), res, o, s.team().size()), c.live);
    return RunOutcome{};
  });
  return exitFor(rc, outcome);
}

// ---- logs ----

int doLogs(const LogsCli& c) {
  const SuspectOptions so = suspectOptions(c.k, c.gap);
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

// ---- nodes ----

int doNodes(const NodesCli& c) {
  const FleetOptions o = toFleetOptions(c);
  KindReferences refs = minimumReferences(c.minimums);
  if (!c.baseline.empty()) {
    for (auto& [kind, rows] : referencesFromBaseline(readText(c.baseline), c.baseline)) {
      auto& to = refs[kind];
      to.insert(to.end(), rows.begin(), rows.end());
    }
  }
  if (c.files.empty() && !c.stored) {
    throw UsageError("diag nodes: give per-node logs, or --stored for the runs in --db");
  }
  checkWritable(c.jsonPath, "--json");
  checkWritable(c.saveBaseline, "--save-baseline");
  checkWritable(c.htmlPath, "--html");
  std::vector<std::string> notes;
  std::vector<FleetNode> nodes;
  for (const std::string& file : c.files) {
    ImportOptions io;
    io.path = file;
    const std::string text = readText(file);
    const auto runs = parseImport(text, detectImportFormat(text, file), io);
    if (runs.size() != 1) {
      throw UsageError(
          fmt::format("diag nodes: {}: {} runs in one log; give one node's run per "
                      "file",
                      file, runs.size()));
    }
    nodes.push_back(nodeFromImport(runs.front(), file));
  }
  nameNodesApart(nodes);
  if (c.stored) {
    if (!std::filesystem::exists(c.db)) {
      throw UsageError(fmt::format("diag nodes: --stored: no database {}", c.db));
    }
    Store store = Store::open(c.db, false);
    for (auto& n : storedNodes(store, c.label, notes)) nodes.push_back(std::move(n));
  }
  std::set<std::string> names;
  for (const auto& n : nodes) {
    if (!names.insert(n.name).second) {
      throw UsageError(fmt::format("diag nodes: node {} is given twice ({})", n.name, n.source));
    }
  }
  if (nodes.empty()) throw UsageError("diag nodes: no node to judge");
  FleetReport report = judgeFleet(nodes, o, refs);
  report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
  // The fleet beside published nodes of its kinds (core/Reference): notes, not verdicts.
  for (std::string& line : publishedComparison(report)) report.notes.push_back(std::move(line));
  fmt::print("{}", fleetText(report));
  if (!c.jsonPath.empty()) writeOutputFile(c.jsonPath, fleetJson(report, o), "--json");
  if (!c.htmlPath.empty()) writeOutputFile(c.htmlPath, fleetHtml(report), "--html");
  if (!c.saveBaseline.empty()) {
    writeOutputFile(c.saveBaseline, baselineJson(report), "--save-baseline");
  }
  return report.outliers() > 0 ? 1 : 0;
}

// One `diag` subcommand: its options (kept alive by the action), its flags and what it runs.
template <class Args>
void addDiagSubcommand(CLI::App* diag, Action& action, const char* name, const char* help,
                       void (*addFlags)(CLI::App*, Args&), int (*run)(const Args&)) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = diag->add_subcommand(name, help);
  addFlags(sub, *args);
  runOnParse(sub, action, args, run);
}

}  // namespace

void setupDiagCommand(CLI::App* diag, Action& action) {
  diag->require_subcommand(1);
  addDiagSubcommand(
      diag, action, "links",
      "Every rank pair in n-1 rounds of disjoint pairs at once (circle method): bandwidth and "
      "latency matrices and the suspects, re-measured alone",
      addLinksFlags, doLinks);
  addDiagSubcommand(
      diag, action, "bisect",
      "An allreduce on both halves at once, into the slower half, in about log2(n) rounds; the "
      "pair matrix decides when the halves are alike",
      addBisectFlags, doBisect);
  addDiagSubcommand(
      diag, action, "ranks",
      "Stragglers: which rank arrives last at an allreduce, how often, by how much; and, from "
      "who finishes last in each direction of the ring, which rank sends or receives slowly or "
      "which link is slow",
      addRanksFlags, doRanks);
  addDiagSubcommand(
      diag, action, "logs",
      "The same verdict over existing nccl-tests logs of node pairs (one pair per file)",
      addLogsFlags, doLogs);
  addDiagSubcommand(
      diag, action, "nodes",
      "The slow node among many: per node kind a baseline (median and robust spread per "
      "collective and size) from per-node logs or stored runs, each node's place, the nodes "
      "that fall out with the evidence",
      addNodesFlags, doNodes);
}

}  // namespace cb::cli
