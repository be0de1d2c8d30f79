// Micro-benchmarks of the hand-written collectives' host-side costs: building every algorithm's
// schedules for a whole world (n = 8, 64, 1024 ranks; items/s = rank schedules built per second),
// and the host reduction kernels (cb::reduce) per dtype and op, in GB/s of reduced output
// (dst = a op b reads two buffers and writes one: memory traffic is three times that). Rates are
// per CPU second, Google Benchmark's default, so a loaded machine skews them less than wall time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "collectives/algorithms/Algorithms.h"
#include "core/Half.h"
#include "core/Reduce.h"

namespace cb {
namespace {

constexpr uint64_t kScheduleBytes = 4 << 20;  // collective size S the schedules are built for

void buildSchedules(benchmark::State& state, const AlgorithmInfo& algo, int n) {
  CollArgs args{algo.coll, DataType::kFloat, RedOp::kSum, 0,
                countForBytes(algo.coll, DataType::kFloat, kScheduleBytes, n)};
  AlgoOptions opts;
  opts.ranksPerNode = 8;  // hierarchical: nodes of 8, as on a typical GPU server
  size_t steps = 0;
  for (auto _ : state) {
    steps = 0;
    for (int r = 0; r < n; ++r) {
      Schedule s = algo.build(r, n, args, opts);
      for (const auto& ph : s.phases) steps += ph.steps.size();
      benchmark::DoNotOptimize(s.phases.data());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n);
  state.counters["steps/rank"] = static_cast<double>(steps) / n;
}

void fillOnes(DataType t, void* p, size_t count) {
  dispatchDataType(t, [&]<class T>() {
    T one{};
    if constexpr (std::is_same_v<T, Half>) {
      one = floatToHalf(1.0f);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      one = floatToBf16(1.0f);
    } else {
      one = static_cast<T>(1);
    }
    std::fill_n(static_cast<T*>(p), count, one);
  });
}

void reduceKernel(benchmark::State& state, DataType t, RedOp op, size_t bytes) {
  const size_t count = bytes / dataTypeSize(t);
  // Filled (so faulted in) before timing; ones keep products and sums away from denormals.
  std::vector<std::byte> a(bytes), b(bytes), dst(bytes);
  fillOnes(t, a.data(), count);
  fillOnes(t, b.data(), count);
  fillOnes(t, dst.data(), count);
  for (auto _ : state) {
    reduce(t, op, dst.data(), a.data(), b.data(), count);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(count * dataTypeSize(t)));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(count * dataTypeSize(t)) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

bool registerAll() {
  for (const AlgorithmInfo& algo : algorithms()) {
    for (int n : {8, 64, 1024}) {
      auto name = fmt::format("build/{}/{}/n:{}", collectiveName(algo.coll), algo.name, n);
      benchmark::RegisterBenchmark(name.c_str(), buildSchedules, std::cref(algo), n)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (DataType t : allDataTypes()) {
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kBand, RedOp::kBor,
                     RedOp::kBxor}) {
      if (!redOpValidFor(op, t)) continue;
      for (size_t mib : {1, 64}) {
        auto name = fmt::format("reduce/{}/{}/{}MiB", dataTypeName(t), redOpName(op), mib);
        benchmark::RegisterBenchmark(name.c_str(), reduceKernel, t, op, mib << 20)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  return true;
}

// Google Benchmark's main (benchmark_main) runs what is registered before it starts.
[[maybe_unused]] const bool kRegistered = registerAll();

}  // namespace
}  // namespace cb
