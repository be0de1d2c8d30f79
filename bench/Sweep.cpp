#include "bench/Sweep.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <thread>

#include "bench/SweepPlan.h"
#include "bench/TimingLoops.h"
#include "bench/Verify.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/RankBoard.h"
#include "core/Size.h"

namespace cb {

std::string_view rankCombineName(RankCombine c) {
  static constexpr std::string_view kNames[] = {"rank0", "avg", "min", "max"};
  return kNames[static_cast<size_t>(c)];
}

std::string_view placementName(Placement p) { return p == Placement::kOut ? "out" : "in"; }

std::vector<uint64_t> sweepSizes(const SweepOptions& o) {
  std::vector<uint64_t> sizes;
  uint64_t s = o.minBytes;
  while (s <= o.maxBytes) {
    sizes.push_back(s);
    uint64_t next =
        o.stepBytes > 0
            ? s + o.stepBytes
            : static_cast<uint64_t>(std::llround(static_cast<double>(s) * o.stepFactor));
    if (next <= s) break;  // -f 1 or min 0: one point, as nccl-tests does
    s = next;
  }
  return sizes;
}

}  // namespace cb

namespace cb {
namespace {

// The buffers of one point. They come from a pool that keeps the largest buffers of each memory
// kind for the whole sweep: allocating and faulting in fresh memory for every point would cost
// more than the measurement (first touch runs at a tenth of memcpy speed here).
struct Buffers {
  void* send = nullptr;
  void* recv = nullptr;
  size_t sendOffset = 0;  // bytes of `send` inside the storage holding it
  size_t recvOffset = 0;
  DataBuffer* sendStore = nullptr;
  DataBuffer* recvStore = nullptr;
};

class BufferPool {
 public:
  // `reserve`: allocate at least this many bytes per buffer the first time (nccl-tests mode: the
  // run's largest side, so every point's calls can move through it as nccl-tests' do).
  Buffers get(BufferAllocator& alloc, MemoryKind kind, const CollArgs& args, int rank, int n,
              Placement p, size_t reserve = 0) {
    const size_t es = dataTypeSize(args.dtype);
    const size_t sb = sendCount(args, n) * es, rb = recvCount(args, n) * es;
    auto& slot = slots_[kind];
    Buffers buf;
    if (p == Placement::kOut) {
      buf.sendStore = ensure(alloc, slot.a, sb, reserve);
      buf.recvStore = ensure(alloc, slot.b, rb, reserve);
    } else {
      buf.sendStore = buf.recvStore = ensure(alloc, slot.a, std::max(sb, rb), reserve);
      buf.sendOffset = inPlaceSendOffset(args, rank) * es;
      buf.recvOffset = inPlaceRecvOffset(args, rank) * es;
    }
    buf.send = static_cast<char*>(buf.sendStore->data()) + buf.sendOffset;
    buf.recv = static_cast<char*>(buf.recvStore->data()) + buf.recvOffset;
    return buf;
  }

 private:
  struct Slot {
    std::unique_ptr<DataBuffer> a, b;
  };
  static DataBuffer* ensure(BufferAllocator& alloc, std::unique_ptr<DataBuffer>& buf, size_t bytes,
                            size_t reserve) {
    if (!buf || buf->bytes() < bytes) {
      buf.reset();  // free first: the old and the new buffer may not fit together
      buf = alloc.allocate(std::max(bytes, reserve));
      buf->faultIn();
    }
    return buf.get();
  }
  std::map<MemoryKind, Slot> slots_;
};

double combine(RankCombine how, const std::vector<double>& all, int nranks, int iters, int i) {
  double acc = how == RankCombine::kRank0 ? all[i] : (how == RankCombine::kMin ? 1e300 : 0);
  for (int r = 0; r < nranks; ++r) {
    double v = all[static_cast<size_t>(r) * iters + i];
    switch (how) {
      case RankCombine::kMax: acc = std::max(acc, v); break;
      case RankCombine::kMin: acc = std::min(acc, v); break;
      case RankCombine::kAvg: acc += v / nranks; break;
      case RankCombine::kRank0: break;
    }
  }
  return acc;
}

// nccl-tests' per-call move (src/common.cu, startColl): by the point's larger side, as many
// steps as fit in the buffers behind both sides.
BatchShift batchShift(const Buffers& buf, const CollArgs& args, int n) {
  const size_t es = dataTypeSize(args.dtype);
  const size_t sb = sendCount(args, n) * es, rb = recvCount(args, n) * es;
  const size_t step = std::max(sb, rb);
  if (step == 0 || !buf.sendStore || !buf.recvStore) return {};
  const size_t sendRoom = buf.sendStore->bytes() - buf.sendOffset - sb;
  const size_t recvRoom = buf.recvStore->bytes() - buf.recvOffset - rb;
  const size_t extra = std::min(sendRoom, recvRoom) / step;
  return {step, static_cast<int>(std::min<size_t>(extra + 1, 1u << 20))};
}

// A point's identity before it is measured, nothing timed yet: no root for a collective without
// one, op "none" for one without a reduction.
ResultRecord pointAt(const CollArgs& args, std::string variant, Placement placement, int n,
                     Statistic statistic) {
  ResultRecord p;
  p.collective = std::string(collectiveName(args.coll));
  p.variant = std::move(variant);
  p.dtype = std::string(dataTypeName(args.dtype));
  p.op = hasReduction(args.coll) ? std::string(redOpName(args.op)) : "none";
  if (hasRoot(args.coll)) p.root = args.root;
  p.sizeBytes = algBytes(args, n);
  p.count = args.count;
  p.placement = std::string(placementName(placement));
  p.nranks = n;
  setTiming(p, Summary{}, 0, 0, statistic, {}, {});
  return p;
}

// The measured part of a point from every rank's iteration times (seconds, rank-major): the
// combined series, its summary, the chosen statistic and the bandwidths (algbw: `bytes` per
// second).
void setMeasured(ResultRecord& p, const std::vector<double>& rankSamples, int n, int iterations,
                 RankCombine how, Statistic statistic, uint64_t bytes, double busFactor) {
  const int samples = n > 0 ? static_cast<int>(rankSamples.size()) / n : 0;
  std::vector<double> combined(samples);
  for (int i = 0; i < samples; ++i) combined[i] = combine(how, rankSamples, n, samples, i);
  const Summary summary = summarize(combined);
  const double time = pick(summary, statistic);
  setTiming(p, summary, time, iterations, statistic, combined, rankSamples);
  p.algbw = time > 0 ? static_cast<double>(bytes) / time / 1e9 : 0;
  p.busbw = *p.algbw * busFactor;
}

// rank-major doubles from an allgather of each rank's bytes.
std::vector<double> asDoubles(const std::vector<std::byte>& bytes) {
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

VariantOptions withTransport(Team& team, const SweepPlan& plan) {
  VariantOptions v = plan.options().variantOptions;
  if (v.schedule.transport.empty()) v.schedule.transport = team.defaultTransport();
  v.gpu.largestBytes = plan.largestSide();
  return v;
}

class Engine {
 public:
  Engine(Team& team, const SweepPlan& plan, const SweepSink& sink)
      : team_(team),
        comm_(team.comm()),
        plan_(plan),
        o_(plan.options()),
        sink_(sink),
        variantOptions_(withTransport(team, plan)) {}

  SweepSummary run() {
    for (const PlannedPoint& point : plan_.points()) {
      if (stop_) break;
      if (!point.variant) {
        measureReference(point.args);
      } else {
        measurePoint(*onDevice(point.variant), point.args, point.placement, point.cycle);
        checkInterrupt();
      }
      if (point.endsGroup || stop_) {  // an interrupted group ends where it stopped
        if (comm_.rank() == 0 && sink_.onGroupEnd) sink_.onGroupEnd();
      }
    }
    summary_.interrupted = stop_;
    return summary_;
  }

 private:
  Deadline deadline() const { return Deadline::after(o_.timeoutSeconds); }

  // --transport cuda: hand-written algorithms run by the CUDA executor on device buffers.
  const VariantInfo* onDevice(const VariantInfo* v) const {
    return variantOnTransport(v, variantOptions_.schedule.transport);
  }

  std::string variantLabel(const VariantInfo& v) const {
    if (v.backend != "hand") return v.name;
    return v.name + "/" + variantOptions_.schedule.transport;
  }

  void checkInterrupt() {
    if (!stop_ && interruptAgreed(comm_, deadline())) stop_ = true;
  }

  // All ranks agree on one reason (the first rank's that has one), or none.
  std::optional<std::string> agreeOnReason(const std::optional<std::string>& mine) {
    auto all = comm_.allgatherStrings(mine ? "!" + *mine : std::string(), deadline());
    for (const auto& s : all) {
      if (!s.empty()) return s.substr(1);
    }
    return std::nullopt;
  }

  void emit(ResultRecord& pr) {
    ++summary_.points;
    if (pr.status == ResultStatus::kUnsupported) ++summary_.unsupported;
    if (pr.status == ResultStatus::kFailed) ++summary_.failed;
    if (pr.wrong > 0) summary_.wrongTotal += *pr.wrong;
    if (comm_.rank() == 0 && sink_.onPoint) sink_.onPoint(pr);
  }

  // Every rank copies its send buffer into its receive buffer at the same time: the memory
  // bandwidth a host collective competes for. algbw = bytes one rank copied per second, busbw =
  // the aggregate over ranks.
  void measureReference(const CollArgs& args) {
    const int n = comm_.size();
    const size_t bytes = sendCount(args, n) * dataTypeSize(args.dtype);
    ResultRecord pr = pointAt(args, "memcpy", Placement::kOut, n, o_.statistic);
    HostAllocator alloc;
    CollArgs copyArgs = args;
    copyArgs.coll = Collective::kBroadcast;  // same-size send and receive buffers
    copyArgs.count = bytes / dataTypeSize(args.dtype);
    Buffers buf = pool_.get(alloc, MemoryKind::kHost, copyArgs, comm_.rank(), n, Placement::kOut);
    auto timed = [&] {
      comm_.barrier(deadline());
      double t0 = nowSeconds();
      if (bytes) std::memcpy(buf.recv, buf.send, bytes);
      return nowSeconds() - t0;
    };
    for (int i = 0; i < o_.warmup; ++i) timed();
    std::vector<double> mine(o_.iterations);
    for (auto& t : mine) t = timed();
    auto all = comm_.allgatherBytes(mine.data(), mine.size() * sizeof(double), deadline());
    setMeasured(pr, asDoubles(all), n, o_.iterations, RankCombine::kMax, o_.statistic, bytes, n);
    emit(pr);
  }

  void measurePoint(const VariantInfo& v, const CollArgs& args, Placement p, int cycle) {
    const int n = comm_.size();
    ResultRecord pr = pointAt(args, variantLabel(v), p, n, o_.statistic);
    std::optional<std::string> why;
    if (v.unsupported) why = v.unsupported(team_, args, variantOptions_);
    if (auto agreed = agreeOnReason(why)) {
      pr.status = ResultStatus::kUnsupported;
      pr.message = *agreed;
      emit(pr);
      return;
    }
    std::unique_ptr<BufferAllocator> alloc =
        v.allocator ? v.allocator(comm_) : std::make_unique<HostAllocator>();
    Buffers buf;
    std::unique_ptr<PreparedCollective> prepared, checker;
    std::optional<std::string> failure, missing;
    try {
      buf = pool_.get(*alloc, v.memory, args, comm_.rank(), n, p,
                      o_.timing == TimingMode::kNcclTests ? plan_.largestSide() : 0);
      prepared = v.prepare(team_, args, variantOptions_);
      if (variantOptions_.gpu.graphLaunches > 0 && o_.checkRounds > 0) {
        // A graph replays the call N times: in-place reductions would apply N times, so the
        // check rounds use a plain instance (cheap: backends reuse their communicator).
        VariantOptions plain = variantOptions_;
        plain.gpu.graphLaunches = 0;
        checker = v.prepare(team_, args, plain);
      }
    } catch (const EnvironmentError& e) {
      missing = e.what();  // something this machine lacks: unsupported, not failed
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (auto agreed = agreeOnReason(missing)) {
      pr.status = ResultStatus::kUnsupported;
      pr.message = *agreed;
      emit(pr);
      return;
    }
    if (auto agreed = agreeOnReason(failure)) {
      pr.status = ResultStatus::kFailed;
      pr.message = *agreed;
      emit(pr);
      return;
    }
    PreparedCollective& checked = checker ? *checker : *prepared;
    // A run-time error is this point's "failed" (or "unsupported" for an EnvironmentError, e.g.
    // NCCL refusing a forced algorithm), not the end of the sweep. The ranks agree on it after
    // the point. Timeouts and interrupts still end the sweep: a rank is then stuck or gone, and
    // the communicator can't be trusted with another point.
    try {
      timeAndCheck(v, args, buf, *prepared, checked, cycle, pr);
    } catch (const TimeoutError&) {
      throw;
    } catch (const InterruptedError&) {
      throw;
    } catch (const EnvironmentError& e) {
      missing = e.what();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (auto agreed = agreeOnReason(missing)) {
      dropMeasurement(pr, ResultStatus::kUnsupported, *agreed);
    } else if (auto failed = agreeOnReason(failure)) {
      dropMeasurement(pr, ResultStatus::kFailed, *failed);
    }
    emit(pr);
  }

  // A point that failed part-way keeps nothing it measured: its status and reason only.
  void dropMeasurement(ResultRecord& pr, ResultStatus status, const std::string& why) const {
    pr.status = status;
    pr.message = why;
    setTiming(pr, Summary{}, 0, 0, o_.statistic, {}, {});
    pr.algbw.reset();
    pr.busbw.reset();
    pr.wrong.reset();
  }

  // The timed iterations (TimingLoops.h) and the check rounds of one point; fills `pr`. Throws on
  // a failure of the collective; every rank returns or throws at the same call when the failure
  // is the collective's own.
  void timeAndCheck(const VariantInfo& v, const CollArgs& args, const Buffers& buf,
                    PreparedCollective& prepared, PreparedCollective& checked, int cycle,
                    ResultRecord& pr) {
    const int n = comm_.size();
    const size_t es = dataTypeSize(args.dtype);
    const size_t rb = recvCount(args, n) * es;
    auto upload = [&](DataBuffer* store, size_t base) {
      return [store, base](size_t off, const void* host, size_t bytes) {
        store->upload(base + off, host, bytes);
      };
    };
    uploadInput(args, comm_.rank(), n, 1, upload(buf.sendStore, buf.sendOffset));

    const bool injected = (o_.injectDelayUs > 0 || o_.injectDelayFraction > 0) &&
                          (o_.injectDelayVariant.empty() || o_.injectDelayVariant == v.name ||
                           o_.injectDelayVariant == pr.variant) &&
                          (o_.injectDelaySize == 0 || o_.injectDelaySize == pr.sizeBytes);
    TimedTarget target{
        comm_,
        prepared,
        buf.send,
        buf.recv,
        o_.timeoutSeconds,
        injected ? o_.injectDelayUs * 1e-6 : 0.0,
        variantOptions_.gpu.blockingWait == 1,
        o_.timing == TimingMode::kNcclTests ? batchShift(buf, args, n) : BatchShift{}};
    if (injected) target.injectScale = 1 + o_.injectDelayFraction;

    int iters = o_.iterations;
    if (o_.timeBudgetSeconds > 0) {
      // Adaptive: the warm-up tells the time per call; all ranks take the slowest estimate.
      // The first call may pay one-off costs (connection set-up, caches): it is not counted.
      int probes = std::max(o_.warmup, 2);
      auto t = runTimingLoop(TimingMode::kPerCall, target, 0, probes);
      double perCall = percentile(std::span<const double>(t).subspan(1), 0.5);
      auto all = comm_.allgather(perCall, deadline());
      perCall = *std::max_element(all.begin(), all.end());
      double want = o_.timeBudgetSeconds / std::max(perCall, 1e-7);
      iters = static_cast<int>(std::clamp(want, 5.0, 100000.0));
    }
    const int warmup = o_.timeBudgetSeconds > 0 ? 0 : o_.warmup;
    publishActivity(fmt::format("{} {} {}", collectiveName(args.coll),
                                formatSize(args.count * dataTypeSize(args.dtype)), pr.variant),
                    warmup + iters);
    std::vector<double> mine = runTimingLoop(o_.timing, target, warmup, iters);
    auto bytes = comm_.allgatherBytes(mine.data(), mine.size() * sizeof(double), deadline());
    setMeasured(pr, asDoubles(bytes), n, iters, o_.combine, o_.statistic, pr.sizeBytes,
                busBwFactor(args.coll, n));

    if (o_.checkRounds > 0) {
      int64_t wrong = 0;
      DataBuffer* recvStore = buf.recvStore;
      const size_t recvBase = buf.recvOffset;
      auto download = [recvStore, recvBase](size_t off, void* host, size_t bytes) {
        recvStore->download(recvBase + off, host, bytes);
      };
      for (int round = 0; round < o_.checkRounds; ++round) {
        uint64_t seed =
            1000003ull * static_cast<uint64_t>(cycle + 1) + static_cast<uint64_t>(round) + 2;
        // Poison the output first so an output the collective never wrote is caught, then
        // write the input (in place the input lives inside the output).
        uploadPoison(upload(buf.recvStore, buf.recvOffset), rb);
        uploadInput(args, comm_.rank(), n, seed, upload(buf.sendStore, buf.sendOffset));
        comm_.barrier(deadline());
        checked.run(buf.send, buf.recv, deadline());
        int64_t w = checkOutput(args, comm_.rank(), n, seed, download, verifyThreads_);
        if (w > 0) wrong += w;
      }
      auto all = comm_.allgather<int64_t>(wrong, deadline());
      pr.wrong = std::accumulate(all.begin(), all.end(), int64_t{0});
    }
    if (auto note = prepared.note()) pr.message = *note;
  }

  Team& team_;
  Communicator& comm_;
  const SweepPlan& plan_;
  const SweepOptions& o_;
  const SweepSink& sink_;
  // The user's variant options with the transport resolved once: the default transport is the
  // same for every point, and finding it is collective.
  const VariantOptions variantOptions_;
  SweepSummary summary_;
  BufferPool pool_;
  // Host verification threads per rank: the host's CPUs shared by the ranks (assumed all on one
  // host when the world is not larger than the CPUs), at most 8.
  const int verifyThreads_ = std::clamp(
      static_cast<int>(std::thread::hardware_concurrency()) / std::max(comm_.size(), 1), 1, 8);
  bool stop_ = false;
};

}  // namespace

void checkStepFactor(double factor, uint64_t minBytes, uint64_t maxBytes) {
  if (!std::isfinite(factor)) throw UsageError(fmt::format("-f {} is not a number", factor));
  if (factor < 1) {
    throw UsageError(fmt::format("-f {} is below 1: the size grows by this factor", factor));
  }
  if (factor == 1 && minBytes != maxBytes) {
    throw UsageError(fmt::format(
        "-f {} would never grow the size from -b {} to -e {}: use -f > 1, -i, or -b = -e for one "
        "size",
        factor, minBytes, maxBytes));
  }
}

void checkStepFactor(const SweepOptions& s) {
  checkStepFactor(s.stepFactor, s.minBytes, s.maxBytes);
}

const Registry& sweepRegistry(const SweepOptions& o) { return Registry::orBuiltin(o.registry); }

bool runsEveryVariant(const SweepOptions& o) {
  return o.variants.empty() ||
         std::find(o.variants.begin(), o.variants.end(), "all") != o.variants.end();
}

bool variantSelected(const SweepOptions& o, std::string_view name) {
  return runsEveryVariant(o) ||
         std::find(o.variants.begin(), o.variants.end(), name) != o.variants.end();
}

std::vector<const VariantInfo*> selectedVariants(const SweepOptions& o, Collective c) {
  std::vector<const VariantInfo*> out;
  for (const auto* v : sweepRegistry(o).forCollective(c)) {
    if (variantSelected(o, v->name)) out.push_back(v);
  }
  return out;
}

bool onlyGpuVariants(const SweepOptions& sweep, const Registry& registry) {
  if (runsEveryVariant(sweep)) return false;
  for (const auto& name : sweep.variants) {
    for (Collective c : sweep.collectives) {
      const VariantInfo* v = registry.find(c, name);
      if (!v) continue;
      v = variantOnTransport(v, sweep.variantOptions.schedule.transport);
      if (v->memory != MemoryKind::kDevice) return false;
    }
  }
  return true;
}

SweepSummary runSweep(Team& team, const SweepPlan& plan, const SweepSink& sink) {
  return Engine(team, plan, sink).run();
}

SweepSummary runSweep(Team& team, const SweepOptions& o, const SweepSink& sink) {
  return runSweep(team, SweepPlan::checked(team, o), sink);
}

}  // namespace cb
