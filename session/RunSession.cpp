#include "session/RunSession.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "collectives/Versions.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "session/Fingerprint.h"
#include "topology/Environment.h"

namespace cb {

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
  Fingerprint fp = buildFingerprint(r, team_.hosts(), readHostInfo());
  r.fingerprint = fp.hash();
  r.environmentJson = fp.toJson();
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
  for (const auto& line : extra) fmt::print(out, "{}\n", line);
  fmt::print(out, "# fingerprint {}\n#\n", r.fingerprint);
}

void RunSession::beginRun() {
  std::string error;
  if (root() && !o_.dbPath.empty()) {
    try {
      store_.emplace(Store::open(o_.dbPath));
      store_->reapDeadRuns();
      runId_ = store_->beginRun(record_);
    } catch (const Error& e) {
      error = e.what();
      store_.reset();
    }
  }
  auto errors = comm().allgatherStrings(error, team_.setupDeadline());
  if (!errors[0].empty()) throw DatabaseError(errors[0]);
  begun_ = true;
}

void RunSession::addResult(const ResultRecord& r) {
  if (store_) store_->addResult(r);
}

void RunSession::setDetail(const std::string& kind, const std::string& json) {
  if (store_) store_->setRunDetail(runId_, kind, json);
}

void RunSession::endRun(RunStatus status) {
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
    if (!session.root()) return;
    session.endRun(outcome.interrupted ? RunStatus::kInterrupted : RunStatus::kOk);
    if (session.begun() && !session.dbPath().empty()) {
      fmt::print("# stored as run {} in {}\n", session.runId(), session.dbPath());
    }
    if (outcome.interrupted) {
      exitCode = 130;
    } else if (outcome.wrong > 0) {
      fmt::print(stderr, "collbench: verification failed: {} {}\n", outcome.wrong,
                 outcome.wrongUnit);
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
