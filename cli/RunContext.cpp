#include "cli/RunContext.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "cli/Validate.h"
#include "cli/WorldFailure.h"
#include "collectives/Versions.h"
#include "collectives/mpi/MpiWorld.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "topology/Environment.h"

namespace cb::cli {
namespace {

constexpr int kMaxLocalRanks = 1024;

std::string isoNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostName() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

void runInWorld(const WorldOptions& o, const std::function<void(Communicator&)>& fn) {
  checkNp(o.np);
  if (launchedByMpiLauncher()) {
    if (o.np != kNpNotGiven) {
      throw UsageError(
          "--np sets the size of the local (threads) world; under mpirun/srun the "
          "launcher sets the number of ranks");
    }
    MpiWorld world;
    runMpiRank(world, fn);  // an error a peer may not share aborts the job (no MPI_Finalize)
    return;
  }
  int np = o.np;
  if (np == kNpNotGiven) np = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  if (np < 1 || np > kMaxLocalRanks) {
    throw UsageError(fmt::format("--np {} is out of range (1..{})", np, kMaxLocalRanks));
  }
  LocalWorld::run(np, fn);
}

RunHeader collectHeader(Communicator& comm, const std::string& label, const std::string& cmdline) {
  RunHeader h;
  Deadline d = Deadline::after(60);
  h.hostsPerRank = comm.allgatherStrings(hostName(), d);
  auto& r = h.record;
  r.startedAt = isoNow();
  r.label = label;
  r.commandLine = cmdline;
  r.collbenchVersion = COLLBENCH_VERSION;
  auto v = libraryVersions();
  r.mpiVersion = v.mpi;
  r.ucxVersion = v.ucx;
  r.cudaVersion = v.cuda;
  r.ncclVersion = v.nccl;
  std::vector<std::string> unique;
  for (const auto& host : h.hostsPerRank) {
    if (std::find(unique.begin(), unique.end(), host) == unique.end()) unique.push_back(host);
  }
  for (const auto& host : unique) r.hosts += (r.hosts.empty() ? "" : ",") + host;
  r.worldSize = comm.size();
  r.worldKind = std::string(worldKindName(comm.worldKind()));
  r.status = RunStatus::kRunning;
  r.pid = getpid();
  r.host = hostName();
  Fingerprint fp;
  HostInfo hi = readHostInfo();
  fp.comparable["collbench"] = r.collbenchVersion;
  fp.comparable["mpi"] = r.mpiVersion;
  fp.comparable["ucx"] = r.ucxVersion;
  fp.comparable["cuda"] = r.cudaVersion;
  fp.comparable["nccl"] = r.ncclVersion;
  fp.comparable["cpu"] = hi.cpuModel;
  fp.comparable["world_kind"] = r.worldKind;
  fp.comparable["world_size"] = std::to_string(r.worldSize);
  fp.comparable["hosts_count"] = std::to_string(unique.size());
  for (const auto& [k, val] : relevantEnvironmentVariables()) fp.comparable["env:" + k] = val;
  fp.informative["hosts"] = r.hosts;
  fp.informative["kernel"] = hi.kernel;
  fp.informative["cores"] = std::to_string(hi.cores);
  fp.informative["numa_nodes"] = std::to_string(hi.numaNodes);
  r.fingerprint = fp.hash();
  r.environmentJson = fp.toJson();
  return h;
}

void printHeader(std::FILE* out, const RunHeader& h, const SweepOptions* sweep) {
  const auto& r = h.record;
  fmt::print(out, "# collbench {}  {}\n", r.collbenchVersion, r.startedAt);
  fmt::print(out, "# world : {} ({} ranks on {})\n", r.worldKind, r.worldSize, r.hosts);
  fmt::print(out, "# mpi   : {}\n", r.mpiVersion.empty() ? "-" : r.mpiVersion);
  fmt::print(out, "# ucx   : {}\n", r.ucxVersion.empty() ? "-" : r.ucxVersion);
  if (!r.cudaVersion.empty()) {
    fmt::print(out, "# cuda  : {}   nccl : {}\n", r.cudaVersion, r.ncclVersion);
  }
  if (sweep) {
    fmt::print(out,
               "# sizes {}..{} B, -n {} -w {} -c {} -N {}; time = {} over iterations of the {} "
               "over ranks (-a {})\n",
               sweep->minBytes, sweep->maxBytes, sweep->iterations, sweep->warmup,
               sweep->checkRounds, sweep->cycles, statisticName(sweep->statistic),
               rankCombineName(sweep->combine), static_cast<int>(sweep->combine));
    fmt::print(out, "# timing {}\n", timingModeDescription(sweep->timing));
    if (sweep->timeBudgetSeconds > 0) {
      fmt::print(out, "# adaptive: {:g} s per point picks the iteration count (-n ignored)\n",
                 sweep->timeBudgetSeconds);
    }
  }
  fmt::print(out, "# fingerprint {}\n#\n", r.fingerprint);
}

RunStore openRunStore(Communicator& comm, const std::string& path, const RunRecord& record) {
  RunStore rs;
  std::string error;
  if (comm.rank() == 0 && !path.empty()) {
    try {
      rs.store.emplace(Store::open(path));
      rs.store->reapDeadRuns();
      rs.runId = rs.store->beginRun(record);
    } catch (const Error& e) {
      error = e.what();
      rs.store.reset();
    }
  }
  auto errors = comm.allgatherStrings(error, Deadline::after(60));
  if (!errors[0].empty()) throw DatabaseError(errors[0]);
  return rs;
}

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic) {
  ResultRecord r;
  r.runId = runId;
  r.collective = std::string(collectiveName(p.coll));
  r.variant = p.variant;
  r.dtype = std::string(dataTypeName(p.dtype));
  r.op = hasReduction(p.coll) ? std::string(redOpName(p.op)) : "none";
  r.root = p.root;
  r.sizeBytes = p.bytes;
  r.count = p.count;
  r.placement = std::string(placementName(p.placement));
  r.nranks = p.nranks;
  r.status = p.status;
  r.message = p.message;
  r.algbw = p.algbw;
  r.busbw = p.busbw;
  r.wrong = p.wrong;
  setTiming(r, p.summary, p.timeSeconds, p.iterations, statistic, p.samples, p.rankSamples);
  return r;
}

void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples) {
  r.iterations = iterations;
  r.statistic = std::string(statisticName(statistic));
  r.timeUs = timeSeconds * 1e6;
  r.medianUs = summary.median * 1e6;
  r.meanUs = summary.mean * 1e6;
  r.minUs = summary.min * 1e6;
  r.maxUs = summary.max * 1e6;
  r.p99Us = summary.p99 * 1e6;
  r.cv = summary.cv;
  r.samplesUs.clear();
  r.rankSamplesUs.clear();
  r.samplesUs.reserve(samples.size());
  for (double x : samples) r.samplesUs.push_back(x * 1e6);
  r.rankSamplesUs.reserve(rankSamples.size());
  for (double x : rankSamples) r.rankSamplesUs.push_back(x * 1e6);
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

}  // namespace cb::cli
