// What every command that measures needs: the world (local threads or MPI processes, detected
// from the environment), the run header (versions, hosts), and the translation of bench results
// into store records. Shared by `run` and `p2p`.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/Sweep.h"
#include "core/Communicator.h"
#include "results/Records.h"
#include "results/Store.h"

namespace cb::cli {

// --np not given: the local world gets one rank per core, at least 2. (Not -1: a user's --np -1
// must be refused, not taken as the default.)
inline constexpr int kNpNotGiven = std::numeric_limits<int>::min();

struct WorldOptions {
  int np = kNpNotGiven;  // local world ranks
};

// Runs fn on every rank of the world the environment asks for: under mpirun/srun an MPI world of
// processes, else a local world of threads. Throws UsageError for --np under a launcher or out
// of range.
void runInWorld(const WorldOptions& o, const std::function<void(Communicator&)>& fn);

// The database of a run, opened by rank 0 before anything is measured so an unwritable or foreign
// file fails fast; other ranks learn the outcome and fail with the same line.
struct RunStore {
  std::optional<Store> store;
  int64_t runId = 0;
};

struct RunHeader {
  RunRecord record;  // id 0, status running
  std::vector<std::string> hostsPerRank;
};

// Collective: gathers hosts and versions; fills the record.
RunHeader collectHeader(Communicator& comm, const std::string& label,
                        const std::string& commandLine);
// One line per fact, "# key : value", printed by rank 0.
void printHeader(std::FILE* out, const RunHeader& h, const SweepOptions* sweep);

// Collective: rank 0 opens `path` (unless empty) and begins the run; all ranks throw the same
// DatabaseError if that fails.
RunStore openRunStore(Communicator& comm, const std::string& path, const RunRecord& record);

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic);
// The timing part of a record (seconds in, microseconds stored), shared by every measurement.
void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples);

// This process's command line (from /proc/self/cmdline), for the run record.
std::string commandLine();

}  // namespace cb::cli
