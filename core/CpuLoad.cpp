#include "core/CpuLoad.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "core/Clock.h"

namespace cb {

std::vector<double> procStatBusySeconds(std::string_view stat, const std::vector<int>& cpus,
                                        double ticksPerSecond) {
  std::vector<double> out(cpus.size(), 0.0);
  std::istringstream in{std::string(stat)};
  std::string line;
  while (std::getline(in, line)) {
    // "cpuN user nice system idle iowait irq softirq steal ..."; the "cpu " total is skipped.
    // irq and softirq are left out: the kernel's work for the ranks' own traffic.
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] == ' ') continue;
    std::istringstream f(line.substr(3));
    int cpu = -1;
    double v[8] = {};
    if (!(f >> cpu)) continue;
    for (double& x : v) f >> x;  // a short line leaves its missing columns 0 (older kernels)
    auto it = std::find(cpus.begin(), cpus.end(), cpu);
    if (it == cpus.end()) continue;
    out[static_cast<size_t>(it - cpus.begin())] = (v[0] + v[1] + v[2] + v[7]) / ticksPerSecond;
  }
  return out;
}

CpuUse readCpuUse(std::vector<int> cpus) {
  CpuUse u;
  u.wallSeconds = nowSeconds();
  u.pid = static_cast<long>(getpid());
  u.cpus = std::move(cpus);
  if (u.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return u;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) u.cpus.push_back(c);
    }
  }
  std::ifstream f("/proc/stat");
  const long ticks = sysconf(_SC_CLK_TCK);
  if (!f || ticks <= 0) return u;
  std::ostringstream text;
  text << f.rdbuf();
  u.busySeconds = procStatBusySeconds(text.str(), u.cpus, static_cast<double>(ticks));
  rusage r{};
  if (getrusage(RUSAGE_SELF, &r) != 0) return u;
  u.processSeconds = static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
                     (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
  u.known = true;
  return u;
}

std::string cpuDeltaText(const CpuUse& before, const CpuUse& after) {
  if (!before.known || !after.known || before.cpus != after.cpus) return "";
  std::string s = fmt::format("{} {:.6f} {:.6f}", after.pid, after.wallSeconds - before.wallSeconds,
                              after.processSeconds - before.processSeconds);
  for (size_t i = 0; i < after.cpus.size(); ++i) {
    s += fmt::format(" {}:{:.2f}", after.cpus[i], after.busySeconds[i] - before.busySeconds[i]);
  }
  return s;
}

std::vector<CpuContention> cpuContention(const std::vector<std::string>& deltas,
                                         const std::vector<std::string>& hostOfRank) {
  struct HostSums {
    std::map<int, double> busy;        // CPU -> the largest delta read
    std::map<long, double> processes;  // pid -> the largest CPU-time delta read
    double seconds = 0;
    int ranks = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, HostSums> sums;
  for (size_t r = 0; r < deltas.size() && r < hostOfRank.size(); ++r) {
    const std::string& host = hostOfRank[r];
    if (!sums.count(host)) order.push_back(host);
    HostSums& h = sums[host];
    ++h.ranks;
    std::istringstream in(deltas[r]);
    long pid = 0;
    double wall = 0, used = 0;
    if (!(in >> pid >> wall >> used)) continue;  // this rank could not read its accounting
    h.seconds = std::max(h.seconds, wall);
    h.processes[pid] = std::max(h.processes[pid], used);
    std::string item;
    while (in >> item) {
      int cpu = -1;
      double busy = 0;
      if (std::sscanf(item.c_str(), "%d:%lf", &cpu, &busy) != 2) continue;
      double& slot = h.busy[cpu];
      slot = std::max(slot, busy);
    }
  }
  std::vector<CpuContention> out;
  for (const std::string& host : order) {
    const HostSums& h = sums[host];
    if (h.busy.empty() || h.seconds <= 0) continue;
    double busy = 0, ours = 0;
    for (const auto& [cpu, b] : h.busy) busy += b;
    for (const auto& [pid, u] : h.processes) ours += u;
    CpuContention c;
    c.host = host;
    c.cpus = static_cast<int>(h.busy.size());
    c.ranks = h.ranks;
    c.seconds = h.seconds;
    c.foreignCpus = std::max(0.0, busy - ours) / h.seconds;
    const int free = c.cpus - std::min(c.ranks, c.cpus);
    c.competingCpus = std::max(0.0, c.foreignCpus - free);
    c.contended =
        c.competingCpus >= kContendedCpus && c.competingCpus * c.seconds >= kContendedSeconds;
    out.push_back(c);
  }
  return out;
}

std::vector<CpuContention> gatherCpuContention(Communicator& comm, const CpuUse& before,
                                               const std::vector<std::string>& hostOfRank,
                                               Deadline d) {
  const std::vector<std::string> deltas =
      comm.allgatherStrings(cpuDeltaText(before, readCpuUse(before.cpus)), d);
  if (comm.rank() != 0) return {};
  return cpuContention(deltas, hostOfRank.empty()
                                   ? std::vector<std::string>(deltas.size(), "this host")
                                   : hostOfRank);
}

const CpuContention* mostContended(const std::vector<CpuContention>& hosts) {
  const CpuContention* worst = nullptr;
  for (const CpuContention& c : hosts) {
    if (c.contended && (!worst || c.competingCpus > worst->competingCpus)) worst = &c;
  }
  return worst;
}

std::string contentionFacts(const CpuContention& c) {
  const int free = c.cpus - std::min(c.cpus, c.ranks);
  return fmt::format(
      "other processes used {:.2f} of the {} CPUs that host {}'s {} ranks run on (they "
      "leave {} free)",
      c.foreignCpus, c.cpus, c.host, c.ranks, free == 0 ? "none" : std::to_string(free));
}

}  // namespace cb
