#include "diagnosis/DiagBisect.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "core/Clock.h"
#include "core/Collective.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/SharedMemory.h"

namespace cb {
namespace {

// Per group, per repeat: busbw of the group's time (its slowest member's); groups[g] lists world
// ranks, every rank in at most one. Collective over the world.
std::vector<std::vector<double>> measureGroups(Team& worldTeam, const std::string& transport,
                                               const SubTeamHook& onSubTeam,
                                               const std::vector<std::vector<int>>& groups,
                                               const DiagBisectOptions& o) {
  Communicator& world = worldTeam.comm();
  auto deadline = [&] { return Deadline::after(o.timeoutSeconds); };
  const int me = world.rank();
  int color = static_cast<int>(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    if (std::find(groups[g].begin(), groups[g].end(), me) != groups[g].end()) {
      color = static_cast<int>(g);
    }
  }
  std::unique_ptr<Team> sub = worldTeam.split(color, me);
  std::unique_ptr<HostExecutor> exec;
  CollArgs args;
  args.coll = Collective::kAllReduce;
  args.dtype = DataType::kFloat;
  args.op = RedOp::kSum;
  args.count = static_cast<size_t>(o.bytes / 4);
  SharedHostBuffer send, recv;
  if (color < static_cast<int>(groups.size())) {
    std::vector<int> members = groups[static_cast<size_t>(color)];
    std::sort(members.begin(), members.end());  // the split orders by world rank
    if (onSubTeam) onSubTeam(*sub, members);
    exec = std::make_unique<HostExecutor>(sub->transport(transport),
                                          ringAllReduce(sub->rank(), sub->size(), args, {}), args);
    send = SharedHostBuffer(args.count * 4);
    recv = SharedHostBuffer(args.count * 4);
    send.faultIn();
    recv.faultIn();
    exec->run(send.data(), recv.data(), deadline());  // warm-up
  }
  std::vector<std::vector<double>> times(groups.size());
  for (int rep = 0; rep < o.repeats; ++rep) {
    stopIfInterrupted(world, deadline());  // the repeat's agreed stop point
    world.barrier(deadline());
    double mine = 0;
    if (exec) {
      double t0 = nowSeconds();
      for (int i = 0; i < o.iterations; ++i) exec->run(send.data(), recv.data(), deadline());
      mine = (nowSeconds() - t0) / o.iterations;
    }
    auto all = world.allgather<double>(mine, deadline());
    for (size_t g = 0; g < groups.size(); ++g) {
      double worst = 0;
      for (int r : groups[g]) worst = std::max(worst, all[static_cast<size_t>(r)]);
      times[g].push_back(worst);
    }
  }
  std::vector<std::vector<double>> busbw(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const int n = static_cast<int>(groups[g].size());
    const double bytes = static_cast<double>(algBytes(args, n));
    for (double t : times[g]) {
      busbw[g].push_back(t > 0 ? bytes / t / 1e9 * busBwFactor(Collective::kAllReduce, n) : 0);
    }
  }
  return busbw;
}

double median(const std::vector<double>& v) { return medianMad(v).first; }

// x slower than y: below it by the gap in the median ratio and in all repeats but one, so one
// noisy repeat decides nothing.
bool slower(const std::vector<double>& x, const std::vector<double>& y, double gap) {
  std::vector<double> ratios;
  size_t below = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    double r = y[i] > 0 ? x[i] / y[i] : 1;
    ratios.push_back(r);
    below += r < 1 - gap;
  }
  return !ratios.empty() && median(ratios) < 1 - gap &&
         below + 1 >= std::max<size_t>(ratios.size(), 2);
}

}  // namespace

DiagBisectResult runDiagBisect(Team& world, const std::string& transport,
                               const DiagBisectOptions& o, const LinkClassOf& linkClass,
                               const SubTeamHook& onSubTeam) {
  const int n = world.size();
  requireRanks(n, 4, "diag bisect", "two halves of 2");
  DiagBisectResult res;
  const CpuUse cpuBefore = readCpuUse();
  std::vector<int> group(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) group[static_cast<size_t>(r)] = r;
  std::vector<int> good;
  res.worldBusbw = median(measureGroups(world, transport, onSubTeam, {group}, o)[0]);
  bool decided = false;
  while (group.size() >= 2) {
    const size_t h = group.size() / 2;
    std::vector<int> a(group.begin(), group.begin() + static_cast<long>(h));
    std::vector<int> b(group.begin() + static_cast<long>(h), group.end());
    // A lone rank is measured with a rank found fast before (a different one per group).
    size_t pad = 0;
    if (a.size() == 1 && pad < good.size()) a.push_back(good.at(pad++));
    if (b.size() == 1 && pad < good.size()) b.push_back(good.at(pad++));
    if (a.size() < 2 || b.size() < 2) break;  // no fast rank to pair with: the matrix decides
    auto reps = measureGroups(world, transport, onSubTeam, {a, b}, o);
    std::vector<double> busbw{median(reps[0]), median(reps[1])};
    BisectRound round{a, b, busbw[0], busbw[1], "alike"};
    const double gap = 1 - o.suspect.gap;
    std::vector<int> slowHalf, fastHalf;
    if (slower(reps[0], reps[1], o.suspect.gap)) {
      round.decision = "a slower";
      slowHalf.assign(group.begin(), group.begin() + static_cast<long>(h));
      fastHalf.assign(group.begin() + static_cast<long>(h), group.end());
    } else if (slower(reps[1], reps[0], o.suspect.gap)) {
      round.decision = "b slower";
      slowHalf.assign(group.begin() + static_cast<long>(h), group.end());
      fastHalf.assign(group.begin(), group.begin() + static_cast<long>(h));
    }
    res.rounds.push_back(round);
    if (slowHalf.empty()) {
      // At the top: halves alike and the world no slower than them is healthy.
      if (res.rounds.size() == 1 && res.worldBusbw >= gap * std::min(busbw[0], busbw[1])) {
        res.healthy = true;
        decided = true;
      }
      break;
    }
    good.insert(good.end(), fastHalf.begin(), fastHalf.end());
    group = slowHalf;
    if (group.size() == 1) {
      res.slowRank = group[0];
      decided = true;
    }
  }
  if (!decided) {
    res.fellBack = true;
    res.links = runDiagLinks(world, transport, o.fallback, linkClass);
  }
  res.cpu = gatherCpuContention(world.comm(), cpuBefore, world.hosts().hostOfRank,
                                Deadline::after(o.timeoutSeconds));
  // The matrix's verdict is judged under the whole bisection's load, which holds its own.
  if (res.fellBack) res.links.cpu = res.cpu;
  return res;
}

}  // namespace cb
