// What Slurm says about the job a rank runs in (its SLURM_* variables), for the run's record: the
// job and step, the node list, and each rank's task and node ids beside the placement collbench
// measures itself. A run outside Slurm has none of it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/Clock.h"

namespace cb {

class Communicator;

struct SlurmTask {
  int rank = -1;                               // collbench's rank
  std::string host;                            // as collbench saw it (gethostname)
  std::optional<int> procId, nodeId, localId;  // SLURM_PROCID, SLURM_NODEID, SLURM_LOCALID
};

struct SlurmJob {
  std::string jobId;         // SLURM_JOB_ID
  std::string stepId;        // SLURM_STEP_ID: "" in a batch script or salloc shell (mpirun there)
  std::string cluster;       // SLURM_CLUSTER_NAME
  std::string partition;     // SLURM_JOB_PARTITION
  std::string jobNodeList;   // SLURM_JOB_NODELIST, Slurm's compressed form ("node[01-04]")
  std::string stepNodeList;  // SLURM_STEP_NODELIST
  std::string numNodes;      // SLURM_JOB_NUM_NODES
  // "srun" when Slurm started the ranks (a step with PMIx), "mpirun" when mpirun did inside an
  // allocation (mpirun's orted daemons are Slurm's tasks, the ranks are not).
  std::string launcher;
  std::vector<SlurmTask> tasks;  // one per rank, in rank order

  std::string toJson() const;
  // One header line: "job 12 step 0 on node[01-02] (partition gpu, cluster c1), launched by srun".
  std::string summary() const;
  // The fields that go into the fingerprint's informative part ("slurm_job_id", ...): they
  // differ per job, so they never make runs incomparable.
  std::map<std::string, std::string> informative() const;
};

// This process's Slurm job (nullopt outside one); `tasks` empty until gathered.
std::optional<SlurmJob> slurmJobOfThisProcess();

// Collective over `comm`: every rank's task ids, in rank order, into job.tasks (or nullopt on
// every rank when rank 0 runs outside Slurm).
std::optional<SlurmJob> gatherSlurmJob(Communicator& comm, const std::string& host,
                                       const Deadline& d);

// srun started several tasks but no MPI plugin connected them (no PMIx/PMI variables): each task
// would run a world of its own. The line that says so and what to run instead; nullopt otherwise.
std::optional<std::string> srunWithoutMpiPlugin();

}  // namespace cb
