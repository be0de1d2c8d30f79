// What else ran on the CPUs a rank runs on while it measured. A timing taken while another
// process held the rank's CPU is the scheduler's time slice (milliseconds), not the link or the
// collective (microseconds), and it can be steady from repeat to repeat, so no agreement between
// repeats reveals it; the CPU accounting does. Snapshots are taken before and after a measurement:
// the host's busy time on the rank's allowed CPUs (/proc/stat, per CPU: user, nice and system,
// and steal, the time a hypervisor gave the CPU to another machine) less this process's own
// (getrusage) is what other processes used. System time counts: a busy loop beside 4 ranks on 2
// cores was charged two thirds of its time as system (its ticks land while the ranks' wake-ups
// interrupt it). Interrupts and softirqs do not: they serve the ranks' own traffic too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/Communicator.h"

namespace cb {

struct CpuUse {
  std::vector<int> cpus;            // the calling thread's allowed CPUs
  std::vector<double> busySeconds;  // per entry of `cpus`: user + nice + system + steal
  double processSeconds = 0;        // user + system of this process, all its threads
  double wallSeconds = 0;           // steady clock
  long pid = 0;
  bool known = false;  // false where /proc/stat could not be read: nothing is judged
};

// A snapshot now, of `cpus` (empty: the calling thread's allowed CPUs; pass the first
// snapshot's to the second, as a rank may be pinned elsewhere in between).
CpuUse readCpuUse(std::vector<int> cpus = {});

// Per CPU of `cpus`, user + nice + system + steal from /proc/stat's text (`ticksPerSecond`:
// USER_HZ), in seconds; 0 for a CPU the text does not list.
std::vector<double> procStatBusySeconds(std::string_view stat, const std::vector<int>& cpus,
                                        double ticksPerSecond);

// One rank's share between two snapshots, as the text every rank gathers: "pid wall process
// cpu:busy cpu:busy ...", the deltas. "" when either snapshot is unknown.
std::string cpuDeltaText(const CpuUse& before, const CpuUse& after);

// What other processes took from the ranks of one host.
struct CpuContention {
  std::string host;
  int cpus = 0;              // the CPUs the host's ranks may run on (their masks' union)
  int ranks = 0;             // ranks on the host
  double seconds = 0;        // the measurement's wall time (the longest rank's)
  double foreignCpus = 0;    // CPUs' worth of others' time on those CPUs, on average
  double competingCpus = 0;  // of it, beyond the CPUs the ranks left free
  bool contended = false;    // competingCpus >= kContendedCpus, over kContendedSeconds in all
};

// A tenth of a CPU taken from ranks that need every CPU they have. On a 2-core VM, 4 thread ranks
// of `diag links` measured 0.00-0.04 on the idle host (30 runs), 0.84-0.87 beside one busy loop
// and 0.03-1.16 beside a compile (see docs/ARCHITECTURE.md, Diagnosis). A stranger's tick or two
// in a run is absorbed by the median over schedules; a tenth of the run is not.
inline constexpr double kContendedCpus = 0.1;
// And at least this much CPU time: /proc/stat counts in ticks of 1/100 s (USER_HZ), truncated per
// CPU at each snapshot and sampled (who ran at each tick), so a short run reads a stray tick or
// two as a large share: idle, 75 runs of 2-30 ms read up to 0.82 CPUs, at most 0.022 CPU-s; a
// fresh-clone CI run read 0.036 CPU-s of others (0.12 CPUs) in a 0.3 s bisect alone on the host.
inline constexpr double kContendedSeconds = 0.05;

// Per host (in order of first appearance), from every rank's cpuDeltaText and its host name: the
// union of the ranks' CPUs with the largest delta any rank read for each, less the time of the
// distinct processes (a thread world is one process), over the longest wall time. The ranks
// need min(ranks, cpus) CPUs; what others used beyond the rest competed with them. Hosts where no
// rank could read its accounting are left out.
std::vector<CpuContention> cpuContention(const std::vector<std::string>& deltas,
                                         const std::vector<std::string>& hostOfRank);

// Collective: every rank's share since `before` (its own snapshot, taken when the measurement
// began), judged per host on rank 0 (empty elsewhere). `hostOfRank` empty: one host.
std::vector<CpuContention> gatherCpuContention(Communicator& comm, const CpuUse& before,
                                               const std::vector<std::string>& hostOfRank,
                                               Deadline d);

// The host whose ranks lost the most CPU to others, when that made them wait (null: none did).
const CpuContention* mostContended(const std::vector<CpuContention>& hosts);

// "other processes used 1.82 of the 2 CPUs that host vm's 4 ranks run on (they leave none free)":
// what the verdict lines of diag and run say (not "busy": scripts grep logs for SQLite's "busy").
std::string contentionFacts(const CpuContention& c);

}  // namespace cb
