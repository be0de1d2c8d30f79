#include "session/Slurm.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/Communicator.h"

namespace cb {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::optional<int> envInt(const char* name) {
  std::string v = env(name);
  int out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return out;
}

// Launcher variables of an MPI rank (Open MPI's mpirun, or a PMIx/PMI connection srun made).
bool mpiLauncherVariables() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD"}) {
    if (std::getenv(v)) return true;
  }
  return false;
}

nlohmann::json orNull(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::optional<SlurmJob> slurmJobOfThisProcess() {
  SlurmJob job;
  job.jobId = env("SLURM_JOB_ID");
  if (job.jobId.empty()) job.jobId = env("SLURM_JOBID");
  if (job.jobId.empty()) return std::nullopt;
  job.stepId = env("SLURM_STEP_ID");
  job.cluster = env("SLURM_CLUSTER_NAME");
  job.partition = env("SLURM_JOB_PARTITION");
  job.jobNodeList = env("SLURM_JOB_NODELIST");
  job.stepNodeList = env("SLURM_STEP_NODELIST");
  job.numNodes = env("SLURM_JOB_NUM_NODES");
  // mpirun's ranks carry OMPI_COMM_WORLD_* from their orted; srun's PMIx ranks do not.
  job.launcher = std::getenv("OMPI_COMM_WORLD_SIZE") ? "mpirun" : "srun";
  return job;
}

std::optional<SlurmJob> gatherSlurmJob(Communicator& comm, const std::string& host,
                                       const Deadline& d) {
  std::optional<SlurmJob> job = slurmJobOfThisProcess();
  nlohmann::json mine = {{"host", host},
                         {"procid", orNull(envInt("SLURM_PROCID"))},
                         {"nodeid", orNull(envInt("SLURM_NODEID"))},
                         {"localid", orNull(envInt("SLURM_LOCALID"))}};
  // Every rank takes part, inside Slurm or not, so the collective call matches.
  std::vector<std::string> all = comm.allgatherStrings(mine.dump(), d);
  if (!job) return std::nullopt;
  for (size_t r = 0; r < all.size(); ++r) {
    nlohmann::json j = nlohmann::json::parse(all[r]);
    SlurmTask t;
    t.rank = static_cast<int>(r);
    t.host = j.value("host", "");
    auto opt = [&](const char* k) -> std::optional<int> {
      return j[k].is_number_integer() ? std::optional<int>(j[k].get<int>()) : std::nullopt;
    };
    t.procId = opt("procid");
    t.nodeId = opt("nodeid");
    t.localId = opt("localid");
    job->tasks.push_back(t);
  }
  return job;
}

std::string SlurmJob::toJson() const {
  nlohmann::json ranks = nlohmann::json::array();
  for (const SlurmTask& t : tasks) {
    ranks.push_back({{"rank", t.rank},
                     {"host", t.host},
                     {"procid", orNull(t.procId)},
                     {"nodeid", orNull(t.nodeId)},
                     {"localid", orNull(t.localId)}});
  }
  return nlohmann::json{
      {"job_id", jobId},        {"step_id", stepId},           {"cluster", cluster},
      {"partition", partition}, {"job_nodelist", jobNodeList}, {"step_nodelist", stepNodeList},
      {"num_nodes", numNodes},  {"launcher", launcher},        {"ranks", ranks}}
      .dump();
}

std::string SlurmJob::summary() const {
  std::string where = stepNodeList.empty() ? jobNodeList : stepNodeList;
  std::string s = fmt::format("job {}", jobId);
  if (!stepId.empty()) s += fmt::format(" step {}", stepId);
  s += fmt::format(" on {}", where.empty() ? "?" : where);
  if (!partition.empty() || !cluster.empty()) {
    s += fmt::format(" (partition {}, cluster {})", partition.empty() ? "?" : partition,
                     cluster.empty() ? "?" : cluster);
  }
  return s + fmt::format(", ranks started by {}", launcher);
}

std::map<std::string, std::string> SlurmJob::informative() const {
  std::map<std::string, std::string> out{
      {"slurm_job_id", jobId}, {"slurm_nodelist", jobNodeList}, {"slurm_launcher", launcher}};
  if (!stepId.empty()) out["slurm_step_id"] = stepId;
  if (!partition.empty()) out["slurm_partition"] = partition;
  if (!cluster.empty()) out["slurm_cluster"] = cluster;
  return out;
}

std::optional<std::string> srunWithoutMpiPlugin() {
  std::optional<int> tasks = envInt("SLURM_STEP_NUM_TASKS");
  if (!tasks || *tasks < 2 || env("SLURM_STEP_ID").empty() || mpiLauncherVariables()) {
    return std::nullopt;
  }
  return fmt::format(
      "srun started {} tasks without an MPI plugin (no PMIx/PMI variables), so each would run "
      "alone: run srun --mpi=pmix (Open MPI 4.1 connects through PMIx, not PMI2), or set "
      "MpiDefault=pmix in slurm.conf",
      *tasks);
}

}  // namespace cb
