#include "replay/Replay.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <tuple>

#include "bench/Verify.h"
#include "core/Buffer.h"
#include "core/Clock.h"
#include "core/Error.h"
#include "core/Interrupt.h"

namespace cb::replay {
namespace {

const VariantInfo* pick(const Registry& reg, Collective c, const std::vector<std::string>& algos) {
  for (const auto& a : algos) {
    if (const VariantInfo* v = reg.find(c, a)) return v;
  }
  return nullptr;
}

// The byte pattern of data-movement checks: what group rank `src` sends group rank `dst`.
uint8_t patternByte(int src, int dst, uint64_t k, uint64_t seed) {
  return static_cast<uint8_t>(src * 131 + dst * 37 + k * 7 + seed * 11 + (k >> 8));
}
void fillPattern(uint8_t* p, size_t n, int src, int dst, uint64_t seed) {
  for (size_t k = 0; k < n; ++k) p[k] = patternByte(src, dst, k, seed);
}
int64_t wrongPattern(const uint8_t* p, size_t n, int src, int dst, uint64_t seed) {
  int64_t wrong = 0;
  for (size_t k = 0; k < n; ++k) wrong += p[k] != patternByte(src, dst, k, seed);
  return wrong;
}

}  // namespace

std::map<OpKind, std::string> chooseVariants(const TraceSet& s, const ReplayOptions& o,
                                             const std::string& transport) {
  const Registry& reg = Registry::orBuiltin(o.registry);
  std::map<OpKind, std::string> out;
  for (const auto& t : s.ranks) {
    for (const auto& op : t.ops) {
      if (out.count(op.kind)) continue;
      auto c = collectiveOf(op.kind);
      const VariantInfo* v = c ? pick(reg, *c, o.algos) : nullptr;
      if (v) {
        out[op.kind] = v->backend == "hand" ? v->name + "/" + transport : v->name;
      } else if (op.kind == OpKind::kBarrier) {
        out[op.kind] = "barrier";
      } else if (!c || op.kind == OpKind::kAllToAll) {
        // No registry variant moves uneven splits or single messages; an even all_to_all falls
        // back on the same pairwise exchange when --algo names none.
        out[op.kind] = "pairwise/" + transport;
      } else {
        std::string names;
        names = fmt::format("{}", fmt::join(o.algos, ","));
        throw UsageError(fmt::format(
            "--algo {}: no {} variant of those names (see collbench list; give a list, e.g. "
            "ring,binomial)",
            names, opKindName(op.kind)));
      }
    }
  }
  return out;
}

struct ReplayEngine::Impl {
  Team& world;
  const TraceSet& set;
  ReplayOptions o;
  int rank;
  const std::vector<CommOp>& ops;
  std::map<std::string, std::unique_ptr<Team>> owned;  // split sub-teams
  std::map<std::string, Team*> teams;                  // group -> team (world for everyone)
  std::map<std::string, Transport*> transports;
  std::map<std::string, std::unique_ptr<Transport>> deviceTransports;  // by group
  struct Call {
    size_t first = 0, last = 0;  // ops [first, last] run as one unit
    Team* team = nullptr;
    Transport* transport = nullptr;
    const VariantInfo* variant = nullptr;  // a registry collective's variant
    PreparedCollective* prepared = nullptr;
    CollArgs args;
    int n = 1, grank = 0;
    // An exchange's pieces (offsets into the send or receive buffer), and the posted form of
    // them, built once so the timed loop allocates nothing.
    struct Piece {
      bool send, p2p;
      int peer;  // the transport's rank (group rank; world rank for send/recv)
      size_t offset, bytes;
    };
    std::vector<Piece> pieces;
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    struct Copy {
      size_t from, to, bytes;
    };
    std::vector<Copy> self;  // an all_to_all(v)'s block to itself
  };
  std::vector<Call> calls;
  std::map<std::tuple<std::string, int, int, uint64_t, int>, std::unique_ptr<PreparedCollective>>
      prepared;
  std::unique_ptr<DataBuffer> sendBuf, recvBuf;
  std::map<OpKind, std::string> variants;

  Impl(Team& w, const TraceSet& s, const ReplayOptions& opts)
      : world(w), set(s), o(opts), rank(w.rank()), ops(s.ranks.at(w.rank()).ops) {}

  Deadline deadline() const { return Deadline::after(o.timeoutSeconds); }

  void makeTeams() {
    // Every rank walks the groups in the same (name) order: one split per group.
    for (const auto& [name, g] : set.groups) {
      if (g.members.empty()) continue;
      if (static_cast<int>(g.members.size()) == world.size()) {
        bool identity = true;
        for (size_t j = 0; j < g.members.size(); ++j) identity &= g.members[j] == int(j);
        if (identity) {
          teams[name] = &world;
          continue;
        }
      }
      auto at = std::find(g.members.begin(), g.members.end(), rank);
      const bool member = at != g.members.end();
      auto sub = world.split(member ? 0 : 1, member ? int(at - g.members.begin()) : rank);
      if (member) {
        teams[name] = sub.get();
        owned[name] = std::move(sub);
      }
    }
  }

  Transport& transportOf(const std::string& group) {
    auto it = transports.find(group);
    if (it != transports.end()) return *it->second;
    Team& t = *teams.at(group);
    const std::string& name =
        o.variant.schedule.transport.empty() ? t.defaultTransport() : o.variant.schedule.transport;
    Transport* tr = &t.transport(name);
    transports[group] = tr;
    return *tr;
  }

  // Call c's pieces (c.transport's exchange): each send/receive of the batch, or an
  // all_to_all(v)'s block per group rank; sendBytes/recvBytes grow to what they need.
  void planExchange(Call& c, size_t& sendBytes, size_t& recvBytes) {
    size_t so = 0, ro = 0;
    for (size_t j = c.first; j <= c.last; ++j) {
      const CommOp& x = ops[j];
      if (x.kind == OpKind::kSend) {
        c.pieces.push_back({true, true, x.peer, so, x.bytes()});
        so += x.bytes();
      } else if (x.kind == OpKind::kRecv) {
        c.pieces.push_back({false, true, x.peer, ro, x.bytes()});
        ro += x.bytes();
      } else {
        const bool v = x.kind == OpKind::kAllToAllV;
        const size_t xe = dataTypeSize(x.dtype);
        for (int p = 0; p < c.n; ++p) {
          const size_t sb = (v ? x.inSplits[p] : x.count / c.n) * xe;
          const size_t rb = (v ? x.outSplits[p] : x.count / c.n) * xe;
          c.pieces.push_back({true, false, p, so, sb});
          c.pieces.push_back({false, false, p, ro, rb});
          if (p == c.grank) c.self.push_back({so, ro, std::min(sb, rb)});
          so += sb;
          ro += rb;
        }
      }
    }
    sendBytes = std::max(sendBytes, so);
    recvBytes = std::max(recvBytes, ro);
  }

  // The calls: one per op, consecutive sends/receives as one; a registry collective's key in
  // `prepared`; sendBytes/recvBytes grow to the largest call's buffers.
  void planCalls(const Registry& reg, size_t& sendBytes, size_t& recvBytes) {
    for (size_t i = 0; i < ops.size(); ++i) {
      Call c;
      c.first = c.last = i;
      while (c.last + 1 < ops.size() && ops[c.last + 1].withPrevious) ++c.last;
      const CommOp& op = ops[i];
      const std::string group = isPointToPoint(op.kind) ? "" : op.group;
      c.team = teams.at(group);
      c.n = c.team->size();
      c.grank = c.team->rank();
      const size_t e = dataTypeSize(op.dtype);
      auto coll = collectiveOf(op.kind);
      const VariantInfo* v = coll ? pick(reg, *coll, o.algos) : nullptr;
      if (v) {
        c.variant = v;
        c.args.coll = *coll;
        c.args.dtype = op.dtype;
        c.args.op = RedOp::kSum;
        c.args.root = std::max(op.root, 0);
        c.args.count = (op.kind == OpKind::kReduceScatter || op.kind == OpKind::kAllToAll)
                           ? op.count / c.n
                           : op.count;
        sendBytes = std::max(sendBytes, sendCount(c.args, c.n) * e);
        recvBytes = std::max(recvBytes, recvCount(c.args, c.n) * e);
        auto key = std::make_tuple(op.group, int(*coll), int(op.dtype), uint64_t(c.args.count),
                                   c.args.root);
        if (!prepared.count(key)) prepared[key] = nullptr;
      } else if (op.kind != OpKind::kBarrier) {
        c.transport = &transportOf(group);
        planExchange(c, sendBytes, recvBytes);
      }
      calls.push_back(c);
      i = c.last;
    }
  }

  // One pair of buffers for every op, of the memory the variants use (device memory for GPU
  // variants: their allocator, as the sweep does). The pairwise exchanges move host memory.
  // Returns the variant whose memory the buffers are (nullptr: host memory).
  const VariantInfo* bufferMemory() const {
    const VariantInfo* memoryOf = nullptr;
    bool exchanges = false;
    for (const auto& c : calls) {
      exchanges = exchanges || c.transport;
      const VariantInfo* v = c.variant;
      if (!v) continue;
      if (!memoryOf) memoryOf = v;
      if (v->memory != memoryOf->memory) {
        throw UsageError(
            fmt::format("--algo: {} and {} use different memory; replay runs every "
                        "op on one pair of buffers",
                        memoryOf->name, v->name));
      }
    }
    if (memoryOf && memoryOf->memory != MemoryKind::kHost && exchanges &&
        !memoryOf->deviceTransport) {
      throw UsageError(fmt::format(
          "--algo {}: device memory, but this trace's all_to_allv/send/recv have no device "
          "point-to-point with it (leave them out with --ops, or give a host variant)",
          memoryOf->name));
    }
    return memoryOf;
  }

  // Device buffers: the exchanges (all_to_allv, send/recv batches) move over the variant's own
  // point-to-point (NCCL's grouped ncclSend/ncclRecv), one transport per group, made in group
  // order. Every member of a group holds the same collective ops; send/recv run on the world,
  // which every rank joins when any rank has one.
  void useDeviceTransports(const VariantInfo& memoryOf) {
    std::set<std::string> groups;
    bool pointToPoint = false;
    for (const auto& c : calls) {
      if (!c.transport) continue;
      if (isPointToPoint(ops[c.first].kind)) {
        pointToPoint = true;
      } else {
        groups.insert(ops[c.first].group);
      }
    }
    for (const auto& any : world.comm().allgatherStrings(pointToPoint ? "1" : "", deadline())) {
      if (!any.empty()) groups.insert("");
    }
    try {
      for (const auto& g : groups) {
        deviceTransports[g] = memoryOf.deviceTransport(*teams.at(g), o.variant);
      }
    } catch (const EnvironmentError& e) {
      throw EnvironmentError(fmt::format(
          "--algo {}: this trace's all_to_allv/send/recv need its device point-to-point: {}",
          memoryOf.name, e.what()));
    }
    for (auto& c : calls) {
      if (!c.transport) continue;
      const CommOp& op = ops[c.first];
      c.transport = deviceTransports.at(isPointToPoint(op.kind) ? "" : op.group).get();
    }
  }

  // Prepare every distinct call once, in key order (the same on every member of a group).
  void prepareCalls(const Registry& reg) {
    for (auto& [key, prep] : prepared) {
      const auto& [group, coll, dtype, count, root] = key;
      Team& t = *teams.at(group);
      const VariantInfo* v = pick(reg, Collective(coll), o.algos);
      CollArgs a{Collective(coll), DataType(dtype), RedOp::kSum, root, size_t(count)};
      std::optional<std::string> why;
      if (v->unsupported) why = v->unsupported(t, a, o.variant);
      for (const auto& r : t.comm().allgatherStrings(why ? *why : "", deadline())) {
        if (!r.empty()) {
          throw EnvironmentError(fmt::format("{} {} can't run here: {}",
                                             collectiveName(Collective(coll)), v->name, r));
        }
      }
      prep = v->prepare(t, a, o.variant);
    }
    for (auto& c : calls) {
      const CommOp& op = ops[c.first];
      auto coll = collectiveOf(op.kind);
      if (coll && pick(reg, *coll, o.algos)) {
        c.prepared = prepared
                         .at(std::make_tuple(op.group, int(*coll), int(op.dtype),
                                             uint64_t(c.args.count), c.args.root))
                         .get();
      }
    }
  }

  // The two buffers, filled; in host memory, each exchange's sends and receives posted on them.
  void allocateBuffers(const VariantInfo* memoryOf, size_t sendBytes, size_t recvBytes) {
    std::unique_ptr<BufferAllocator> alloc = memoryOf && memoryOf->allocator
                                                 ? memoryOf->allocator(world.comm())
                                                 : std::make_unique<HostAllocator>();
    sendBuf = alloc->allocate(sendBytes);
    recvBuf = alloc->allocate(recvBytes);
    sendBuf->faultIn();
    recvBuf->faultIn();
    // A fixed pattern: timed data is never denormal.
    sendBuf->upload(0, std::vector<uint8_t>(sendBytes, 0x3c).data(), sendBytes);
    // On device memory the block to itself travels with the rest (NCCL sends to self); on the
    // host it is a memcpy (exchange()).
    const bool onDevice = sendBuf->kind() != MemoryKind::kHost;
    auto* send = static_cast<uint8_t*>(sendBuf->data());
    auto* recv = static_cast<uint8_t*>(recvBuf->data());
    for (auto& c : calls) {
      for (const auto& p : c.pieces) {
        if (p.bytes == 0 || (!p.p2p && p.peer == c.grank && !onDevice)) continue;
        if (p.send) c.sends.push_back({p.peer, send + p.offset, p.bytes});
        if (!p.send) c.recvs.push_back({p.peer, recv + p.offset, p.bytes});
      }
    }
  }

  void plan() {
    const Registry& reg = Registry::orBuiltin(o.registry);
    size_t sendBytes = 1, recvBytes = 1;
    planCalls(reg, sendBytes, recvBytes);
    const VariantInfo* memoryOf = bufferMemory();
    prepareCalls(reg);  // first: a variant that can't run here says so in its own words
    if (memoryOf && memoryOf->memory != MemoryKind::kHost) useDeviceTransports(*memoryOf);
    allocateBuffers(memoryOf, sendBytes, recvBytes);
  }

  // An all_to_all(v) or a batch of sends/receives: the block to itself copied, the rest posted
  // at once.
  void exchange(const Call& c) {
    if (sendBuf->kind() == MemoryKind::kHost) {
      auto* send = static_cast<const uint8_t*>(sendBuf->data());
      auto* recv = static_cast<uint8_t*>(recvBuf->data());
      for (const auto& k : c.self) std::memcpy(recv + k.to, send + k.from, k.bytes);
    }
    c.transport->exchange(c.sends, c.recvs, deadline());
  }

  void runCall(const Call& c) {
    if (c.prepared) {
      c.prepared->run(sendBuf->data(), recvBuf->data(), deadline());
    } else if (c.transport) {
      exchange(c);
    } else {
      c.team->comm().barrier(deadline());
    }
  }

  void gap(const Call& c) {
    if (o.gapScale <= 0) return;
    const double us = ops[c.first].gapUs * o.gapScale;
    if (us > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
  }

  // One replay; each op's time into times[op] (when given).
  double replayOnce(std::vector<double>* times) {
    double comm = 0;
    for (const auto& c : calls) {
      gap(c);
      if (o.syncOps && !isPointToPoint(ops[c.first].kind)) {
        c.team->comm().barrier(deadline());
      }
      const auto t0 = SteadyClock::now();
      runCall(c);
      double dt = std::chrono::duration<double>(SteadyClock::now() - t0).count();
      // A device call's time is its CUDA-event time, as `run` takes it: the job enqueues its
      // calls without waiting for each, so the launch and the stream synchronisation that the
      // replay's blocking call adds (about 10 us on one H200) are not the op's.
      if (c.prepared) {
        if (auto device = c.prepared->lastDeviceSeconds()) dt = *device;
      }
      comm += dt;
      if (times) {
        for (size_t j = c.first; j <= c.last; ++j) (*times)[j] = dt;
      }
    }
    return comm;
  }

  int64_t verify() {
    int64_t wrong = 0;
    auto* send = static_cast<uint8_t*>(sendBuf->data());
    auto* recv = static_cast<uint8_t*>(recvBuf->data());
    std::map<int, uint64_t> sent, got;  // messages per peer so far (send/recv patterns)
    for (size_t ci = 0; ci < calls.size(); ++ci) {
      const Call& c = calls[ci];
      const uint64_t seed = 0x5eed + ci;
      if (c.prepared) {
        // bench/Verify's chunked patterns through upload/download: host or device memory alike.
        const size_t e = dataTypeSize(c.args.dtype);
        uploadPoison([&](size_t off, const void* h, size_t n) { recvBuf->upload(off, h, n); },
                     recvCount(c.args, c.n) * e);
        uploadInput(c.args, c.grank, c.n, seed,
                    [&](size_t off, const void* h, size_t n) { sendBuf->upload(off, h, n); });
        runCall(c);
        const int64_t w = checkOutput(
            c.args, c.grank, c.n, seed,
            [&](size_t off, void* h, size_t n) { recvBuf->download(off, h, n); }, 1);
        if (w > 0) wrong += w;
        continue;
      }
      if (!c.transport) {
        runCall(c);
        continue;
      }
      // Fill every send piece with what its receiver will check, run, check every receive.
      // Sends and receives pair in order per peer, so a message's index names its pattern.
      // Device buffers are filled and read through host copies.
      const bool onHost = sendBuf->kind() == MemoryKind::kHost;
      size_t sentBytes = 0, received = 0;
      for (const auto& p : c.pieces) {
        size_t& extent = p.send ? sentBytes : received;
        extent = std::max(extent, p.offset + p.bytes);
      }
      std::vector<uint8_t> sendStage(onHost ? 0 : sentBytes), recvStage(onHost ? 0 : received);
      uint8_t* sp = onHost ? send : sendStage.data();
      uint8_t* rp = onHost ? recv : recvStage.data();
      std::vector<uint64_t> seeds;
      for (const auto& p : c.pieces) {
        const int me = p.p2p ? rank : c.grank;
        const uint64_t s = p.p2p ? (p.send ? sent[p.peer]++ : got[p.peer]++) : seed;
        seeds.push_back(s);
        if (p.send) fillPattern(sp + p.offset, p.bytes, me, p.peer, s);
      }
      std::memset(rp, 0xa5, received);
      if (!onHost) {
        sendBuf->upload(0, sp, sentBytes);
        recvBuf->upload(0, rp, received);
      }
      runCall(c);
      if (!onHost) recvBuf->download(0, rp, received);
      for (size_t k = 0; k < c.pieces.size(); ++k) {
        const auto& p = c.pieces[k];
        const int me = p.p2p ? rank : c.grank;
        if (!p.send) wrong += wrongPattern(rp + p.offset, p.bytes, p.peer, me, seeds[k]);
      }
    }
    return wrong;
  }

  ReplayTimes run() {
    Communicator& comm = world.comm();
    ReplayTimes out;
    out.variants = variants;
    for (int w = 0; w < o.warmup; ++w) {
      stopIfInterrupted(comm, deadline());  // agreed stop points, one per replay
      comm.barrier(deadline());
      replayOnce(nullptr);
    }
    const size_t nops = ops.size();
    const int iters = o.iterations;
    std::vector<double> mine(nops * iters + iters);  // op times, then the per-replay comm times
    std::vector<double> wall(iters);
    std::vector<double> times(nops);
    for (int it = 0; it < iters; ++it) {
      stopIfInterrupted(comm, deadline());
      comm.barrier(deadline());
      const auto t0 = SteadyClock::now();
      mine[nops * iters + it] = replayOnce(&times);
      wall[it] = std::chrono::duration<double>(SteadyClock::now() - t0).count();
      for (size_t i = 0; i < nops; ++i) mine[i * iters + it] = times[i];
    }
    int64_t wrong = -1;
    if (o.checkRounds > 0) {
      comm.barrier(deadline());
      wrong = 0;
      for (int64_t w : comm.allgather(verify(), deadline())) wrong += w;
    }
    // Rank 0 gathers every rank's times (each rank's op count is known from the set).
    constexpr int kTag = 0x7e91;
    if (rank != 0) {
      comm.send(0, mine.data(), mine.size() * sizeof(double), kTag, deadline());
      return out;
    }
    out.wrong = wrong;
    out.wall = wall;
    for (int r = 0; r < world.size(); ++r) {
      const size_t n = set.ranks[r].ops.size();
      std::vector<double> theirs(n * iters + iters);
      if (r == 0) {
        theirs = mine;
      } else {
        comm.recv(r, theirs.data(), theirs.size() * sizeof(double), kTag, deadline());
      }
      std::vector<std::vector<double>> perOp(n, std::vector<double>(iters));
      for (size_t i = 0; i < n; ++i) {
        for (int it = 0; it < iters; ++it) perOp[i][it] = theirs[i * iters + it];
      }
      out.op.push_back(std::move(perOp));
      out.comm.emplace_back(theirs.begin() + n * iters, theirs.end());
    }
    return out;
  }
};

ReplayEngine::ReplayEngine(Team& world, const TraceSet& set, const ReplayOptions& o)
    : impl_(std::make_unique<Impl>(world, set, o)) {
  if (o.iterations < 1) throw UsageError("--iters must be at least 1");
  // Refuses a collective no --algo name has before anything is split or prepared.
  const std::string tr = o.variant.schedule.transport.empty() ? world.defaultTransport()
                                                              : o.variant.schedule.transport;
  impl_->variants = chooseVariants(set, o, tr);
  impl_->makeTeams();
  impl_->plan();
}

ReplayEngine::~ReplayEngine() = default;

ReplayTimes ReplayEngine::run() { return impl_->run(); }

}  // namespace cb::replay
