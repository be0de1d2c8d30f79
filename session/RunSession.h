// The run session: one per run, on every rank. It owns what the run knows about its world (the
// world Team: communicator, host/rank map, transports set up once and cached), the run record
// with its fingerprint, and the run's lifecycle in the store (begin as running; end as ok,
// failed or interrupted). Commands that measure (`run`, `p2p`, and later ones) are a body
// passed to runMeasuringCommand(): it validates, calls beginRun(), hands team() to an engine,
// stores results with addResult() and returns the outcome; the lifecycle does the rest alike for
// every command.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/Team.h"
#include "results/PredictedShare.h"
#include "results/Records.h"
#include "results/Store.h"
#include "session/Slurm.h"
#include "session/World.h"

namespace cb {

// The header line for ranks that drive one GPU (each "machine gpu-bus-id" per rank; a rank
// without a GPU ends in a space), "" when every GPU has one rank. Pure, tested on the host.
std::string sharedGpuLine(const std::vector<std::string>& machineAndGpuOfRank);

struct SessionOptions {
  std::string label;            // stored with the run
  std::string commandLine;      // stored with the run
  std::string dbPath;           // "" = do not store (--no-db)
  TransportOptions transports;  // -T bounds every set-up wait; --zero-copy
  WorldOptions world;           // --np, --bind
  bool strict = false;          // --strict: the topology preflight's findings stop the run
};

class RunSession {
 public:
  // Collective over world: the world Team (one allgather of host names), the run's topology
  // (every host's machine, every rank's placement, the link class of every rank pair, the
  // preflight's findings) and the run record (versions, hosts, fingerprint). Nothing is written
  // yet.
  RunSession(Communicator& world, const SessionOptions& o);
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  Team& team() { return team_; }
  Communicator& comm() { return team_.comm(); }
  const HostMap& hosts() const { return team_.hosts(); }
  bool root() const { return team_.rank() == 0; }
  const RunRecord& record() const { return record_; }
  const RunTopology& topology() const { return topology_; }
  // The Slurm job the run is part of (job, step, node list, every rank's task ids); nullopt
  // outside Slurm. Stored as the run detail "slurm" and in the fingerprint's informative part.
  const std::optional<SlurmJob>& slurm() const { return slurm_; }
  // The class of the link between ranks a and b of the world (the team's HostMap::linkClass).
  LinkClass linkClass(int a, int b) const { return hosts().linkClass(a, b); }
  const std::string& dbPath() const { return o_.dbPath; }

  // "# key : value" lines on rank 0's output: version, world, libraries, then `extra` lines (the
  // command's description), the topology (per host, link classes, findings), the fingerprint.
  void printHeader(std::FILE* out, const std::vector<std::string>& extra = {}) const;

  // Collective: the preflight first (its findings are warnings on rank 0's stderr, or with
  // --strict an EnvironmentError on every rank before anything is stored); then rank 0 opens the
  // database (unless --no-db), reaps runs left running by dead processes and begins this run
  // (status running) with its topology. If that fails every rank throws the same DatabaseError.
  // Call it after validating the command's options, so a bad invocation leaves nothing in the
  // database.
  void beginRun();
  bool begun() const { return begun_; }
  int64_t runId() const { return runId_; }
  // Rank 0: stores one result of this run in its own transaction (no-op without a database).
  void addResult(const ResultRecord& r);
  // Rank 0: attaches a document of `kind` to this run (e.g. a training proxy's timeline and
  // scaling as JSON, which `report` draws; no-op without a database).
  void setDetail(const std::string& kind, const std::string& json);
  // Rank 0: marks the run (no-op without a database or when not begun, or once ended).
  void endRun(RunStatus status);
  // Rank 0: the CPUs' round trips (medians before and after the sweep, ns; -1: not probed) of
  // the newest `limit` runs stored ok in this environment (its fingerprint) other than this
  // one; empty without a database.
  std::vector<std::pair<double, double>> storedRoundTrips(int limit);
  // This run against the newest stored prediction at its world size, per collective (rank 0,
  // after the run is stored; empty without one).
  std::vector<PredictedShare> predictedShares();

 private:
  SessionOptions o_;
  Team team_;
  RunRecord record_;
  RunTopology topology_;
  std::optional<SlurmJob> slurm_;
  // "# gpus  : ..." when ranks of separate hosts (NCCL_HOSTID) drive one GPU; "" otherwise.
  std::string sharedGpuLine_;
  std::optional<Store> store_;
  // The store is also written by the interrupt hook, on the rank board's watchdog thread.
  std::mutex storeMutex_;
  int64_t runId_ = 0;
  bool begun_ = false, ended_ = false;
};

// What a command's body measured.
struct RunOutcome {
  bool interrupted = false;  // stopped between points on SIGINT/SIGTERM
  int64_t wrong = 0;         // > 0: verification failed (exit 1)
  std::string wrongUnit = "wrong element(s)";
  int64_t low = 0;  // > 0: figures below their expected share of the bound (run --expect; exit 1)
  int64_t failed = 0;             // > 0: points that failed (an error of the collective; exit 1)
  std::string firstFailure = {};  // the first failed point's reason, for the closing line
};

// The lifecycle every measuring command shares. Installs the SIGINT/SIGTERM handlers, starts the
// world, makes a RunSession on every rank and calls body. Then:
//  - body returned: rank 0 ends the run ok (or interrupted) and prints "# stored as run N in DB";
//    the exit code is 128 + the signal (130 SIGINT, 143 SIGTERM) when interrupted, 1 when
//    anything was wrong or a point failed, else 0;
//  - body threw after beginRun(): the run ends interrupted when a signal arrived (the error may
//    be an InterruptedError, or a peer's failure because the launcher stopped it first) and the
//    error becomes InterruptedError ("interrupted by signal N", exit 128 + N); else the run ends
//    failed and the error propagates (main prints one line, exit 2);
//  - body threw a usage or environment error before beginRun(): such errors come from checks
//    every rank makes alike, so under MPI only rank 0 reports it (one line, not one per process).
int runMeasuringCommand(const SessionOptions& o,
                        const std::function<RunOutcome(RunSession&)>& body);

// This process's command line (from /proc/self/cmdline), quoted where needed.
std::string commandLine();

}  // namespace cb
