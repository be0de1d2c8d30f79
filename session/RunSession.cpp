#include "session/RunSession.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>

#include "collectives/Versions.h"
#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/GpuDevice.h"
#endif
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/InterruptLine.h"
#include "results/CpuLoadDetail.h"
#include "session/Fingerprint.h"
#include "topology/Environment.h"

namespace cb {
namespace {

// The GPU this rank would drive (nccl-tests' choice: the local rank's device), "" without one.
std::string gpuBusIdOfRank(const Communicator& comm) {
#if defined(COLLBENCH_HAVE_CUDA)
  DeviceChoice choice = chooseDevice(comm);
  if (choice.device >= 0) return describeDevice(choice.device).pciBusId;
#else
  (void)comm;
#endif
  return "";
}

}  // namespace

std::string sharedGpuLine(const std::vector<std::string>& machineAndGpuOfRank) {
  std::map<std::string, std::vector<int>> ranksOf;
  for (int r = 0; r < static_cast<int>(machineAndGpuOfRank.size()); ++r) {
    const std::string& key = machineAndGpuOfRank[r];
    if (key.empty() || key.back() == ' ') continue;  // no GPU
    ranksOf[key].push_back(r);
  }
  std::vector<std::string> shared;
  for (const auto& [key, ranks] : ranksOf) {
    if (ranks.size() < 2) continue;
    const auto space = key.find(' ');
    shared.push_back(fmt::format("ranks {} share GPU {} on {}", fmt::join(ranks, ","),
                                 key.substr(space + 1), key.substr(0, space)));
  }
  if (shared.empty()) return "";
  return fmt::format(
      "# gpus  : {} (NCCL_HOSTID makes them separate hosts to NCCL, which joins them through its "
      "network transport and runs them in turn): these figures test the multi-rank path, they "
      "are not a node's",
      fmt::join(shared, "; "));
}

RunSession::RunSession(Communicator& world, const SessionOptions& o)
    : o_(o), team_(world, o.transports) {
  auto& r = record_;
  r.startedAt = utcTimestamp();
  r.label = o.label;
  r.commandLine = o.commandLine;
  r.collbenchVersion = COLLBENCH_VERSION;
  auto v = libraryVersions();
  r.mpiVersion = v.mpi;
  r.ucxVersion = v.ucx;
  r.cudaVersion = v.cuda;
  r.ncclVersion = v.nccl;
  r.hosts = team_.hosts().hostList();
  r.worldSize = team_.size();
  r.worldKind = std::string(worldKindName(team_.worldKind()));
  r.status = RunStatus::kRunning;
  r.pid = getpid();
  r.host = hostName();
  const Deadline d = team_.setupDeadline();
  const std::string gpu = gpuBusIdOfRank(team_.comm());
  topology_ = collectRunTopology(team_.comm(), team_.hosts(), d, gpu);
  sharedGpuLine_ = sharedGpuLine(comm().allgatherStrings(hostName() + " " + gpu, d));
  team_.setLinkClasses(topology_.links);
  Fingerprint fp = buildFingerprint(r, team_.hosts(), readHostInfo());
  // What each rank sees of its own environment must agree before the run-wide parts are added.
  auto differ = checkFingerprints(team_.hosts().hostOfRank, comm().allgatherStrings(fp.hash(), d));
  topology_.findings.insert(topology_.findings.end(), differ.begin(), differ.end());
  addTopology(fp, topology_);
  slurm_ = gatherSlurmJob(comm(), r.host, d);
  if (slurm_) {
    for (const auto& [k, val] : slurm_->informative()) fp.informative[k] = val;
  }
  r.fingerprint = fp.hash();
  r.environmentJson = fp.toJson();
  r.topologyJson = topology_.toJson();
}

void RunSession::printHeader(std::FILE* out, const std::vector<std::string>& extra) const {
  const auto& r = record_;
  fmt::print(out, "# collbench {}  {}\n", r.collbenchVersion, r.startedAt);
  fmt::print(out, "# world : {} ({} ranks on {})\n", r.worldKind, r.worldSize, r.hosts);
  fmt::print(out, "# mpi   : {}\n", r.mpiVersion.empty() ? "-" : r.mpiVersion);
  fmt::print(out, "# ucx   : {}\n", r.ucxVersion.empty() ? "-" : r.ucxVersion);
  if (!r.cudaVersion.empty()) {
    fmt::print(out, "# cuda  : {}   nccl : {}\n", r.cudaVersion, r.ncclVersion);
  }
  if (slurm_) fmt::print(out, "# slurm : {}\n", slurm_->summary());
  if (!sharedGpuLine_.empty()) fmt::print(out, "{}\n", sharedGpuLine_);
  for (const auto& line : extra) fmt::print(out, "{}\n", line);
  for (const auto& t : topology_.hosts) fmt::print(out, "# topology {}: {}\n", t.host, t.summary());
  const std::string links = linkClassCounts(topology_.links);
  if (!links.empty()) fmt::print(out, "# links : rank pairs by link class: {}\n", links);
  for (const auto& f : topology_.findings) fmt::print(out, "# preflight: {}\n", f.line());
  fmt::print(out, "# fingerprint {}\n#\n", r.fingerprint);
}

void RunSession::beginRun() {
  const auto& findings = topology_.findings;
  if (!findings.empty() && o_.strict) {
    // Every rank holds the same findings, so every rank stops here alike.
    throw EnvironmentError(fmt::format("preflight (--strict): {} finding{}; first: {}",
                                       findings.size(), findings.size() == 1 ? "" : "s",
                                       findings[0].line()));
  }
  if (root()) {
    for (const auto& f : findings) fmt::print(stderr, "collbench: preflight: {}\n", f.line());
  }
  std::string error;
  if (root() && !o_.dbPath.empty()) {
    try {
      store_.emplace(Store::open(o_.dbPath));
      runId_ = store_->beginRun(record_);
      if (slurm_) store_->setRunDetail(runId_, "slurm", slurm_->toJson());
    } catch (const Error& e) {
      error = e.what();
      store_.reset();
    }
  }
  auto errors = comm().allgatherStrings(error, team_.setupDeadline());
  if (!errors[0].empty()) throw DatabaseError(errors[0]);
  begun_ = true;
  if (store_) {
    setInterruptHook([this] {
      endRun(RunStatus::kInterrupted);
      printInterruptLineOnce(fmt::format("interrupted by signal {}", interruptSignal()));
    });
  }
}

void RunSession::addResult(const ResultRecord& r) {
  std::lock_guard lock(storeMutex_);
  if (store_) store_->addResult(r);
}

void RunSession::setDetail(const std::string& kind, const std::string& json) {
  std::lock_guard lock(storeMutex_);
  if (store_) store_->setRunDetail(runId_, kind, json);
}

std::vector<std::pair<double, double>> RunSession::storedRoundTrips(int limit) {
  std::lock_guard lock(storeMutex_);
  std::vector<std::pair<double, double>> out;
  if (!store_ || record_.fingerprint.empty()) return out;
  RunFilter filter;
  filter.fingerprint = record_.fingerprint;
  for (const RunRecord& r : store_->listRuns(filter)) {
    if (static_cast<int>(out.size()) >= limit) break;
    if (r.id == runId_ || r.status != RunStatus::kOk) continue;
    out.push_back(cb::storedRoundTrips(*store_, r.id));
  }
  return out;
}

std::vector<PredictedShare> RunSession::predictedShares() {
  std::lock_guard lock(storeMutex_);
  if (!store_ || !begun_) return {};
  return cb::predictedShares(*store_, record_.worldSize, store_->results(runId_), runId_);
}

RunSession::~RunSession() { setInterruptHook({}); }

void RunSession::endRun(RunStatus status) {
  std::lock_guard lock(storeMutex_);
  if (!store_ || !begun_ || ended_) return;
  ended_ = true;
  store_->finishRun(runId_, status);
}

int runMeasuringCommand(const SessionOptions& o,
                        const std::function<RunOutcome(RunSession&)>& body) {
  installInterruptHandlers();
  int exitCode = 0;
  runInWorld(o.world, [&](Communicator& world) {
    RunSession session(world, o);
    RunOutcome outcome;
    try {
      outcome = body(session);
    } catch (const Error& e) {
      const bool agreed = e.kind() == ErrorKind::kUsage || e.kind() == ErrorKind::kEnvironment;
      if (!session.begun() && agreed && world.worldKind() == WorldKind::kMpi && !session.root()) {
        exitCode = exitCodeFor(e.kind());
        return;
      }
      if (!session.begun()) throw;
      const bool interrupted = interruptRequested() || e.kind() == ErrorKind::kInterrupted;
      session.endRun(interrupted ? RunStatus::kInterrupted : RunStatus::kFailed);
      if (interrupted && world.worldKind() == WorldKind::kMpi && !session.root()) {
        exitCode = interruptExitCode();  // rank 0 prints the job's one line
        return;
      }
      if (interrupted) {
        throw InterruptedError(fmt::format("interrupted by signal {}", interruptSignal()));
      }
      throw;
    } catch (...) {
      const bool interrupted = interruptRequested();
      session.endRun(interrupted ? RunStatus::kInterrupted : RunStatus::kFailed);
      if (interrupted && session.begun()) {
        throw InterruptedError(fmt::format("interrupted by signal {}", interruptSignal()));
      }
      throw;
    }
    if (!session.root()) {
      if (outcome.interrupted) exitCode = interruptExitCode();
      return;
    }
    session.endRun(outcome.interrupted ? RunStatus::kInterrupted : RunStatus::kOk);
    if (session.begun() && !session.dbPath().empty()) {
      fmt::print("# stored as run {} in {}\n", session.runId(), session.dbPath());
      for (const auto& share : session.predictedShares()) {
        fmt::print("# {}\n", predictedShareLine(share));
      }
    }
    if (outcome.interrupted) {
      printInterruptLineOnce(fmt::format("interrupted by signal {}", interruptSignal()));
      exitCode = interruptExitCode();
    } else if (outcome.wrong > 0) {
      fmt::print(stderr, "collbench: verification failed: {} {}\n", outcome.wrong,
                 outcome.wrongUnit);
      exitCode = 1;
    } else if (outcome.failed > 0) {
      fmt::print(stderr, "collbench: {} point(s) failed; the first: {}\n", outcome.failed,
                 outcome.firstFailure);
      exitCode = 1;
    } else if (outcome.low > 0) {
      fmt::print(stderr,
                 "collbench: --expect: {} figure(s) below their expected share of the bound\n",
                 outcome.low);
      exitCode = 1;
    }
  });
  return exitCode;
}

std::string commandLine() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string out;
  size_t start = 0;
  while (start < raw.size()) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    std::string arg = raw.substr(start, end - start);
    if (!out.empty()) out += ' ';
    bool quote = arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos;
    out += quote ? "'" + arg + "'" : arg;
    start = end + 1;
  }
  return out;
}

}  // namespace cb
