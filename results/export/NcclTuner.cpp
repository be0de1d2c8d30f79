// NCCL's example tuner plugin (plugins/tuner/example in NVIDIA/nccl): its performance-data CSV
// (scripts/optimize_config.py's input) and its CSV config, from results of forced
// --nccl-algo/--nccl-proto columns ("nccl:Ring/LL").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "core/Error.h"
#include "results/export/Export.h"
#include "results/export/Spelling.h"

namespace cb {
namespace {

using exporting::Spelling;
// NCCL's names (ncclAlgoStr / ncclProtoStr), then the tuner config's (README of the example).
constexpr std::array<Spelling, 7> kAlgos{{{"Ring", "ring"},
                                          {"Tree", "tree"},
                                          {"CollNetDirect", "collnet_direct"},
                                          {"CollNetChain", "collnet_chain"},
                                          {"NVLS", "nvls"},
                                          {"NVLSTree", "nvls_tree"},
                                          {"PAT", "pat"}}};
constexpr std::array<Spelling, 3> kProtos{{{"LL", "ll"}, {"LL128", "ll128"}, {"Simple", "simple"}}};
// collbench's collectives, then the plugin's config names (collective_type).
constexpr std::array<Spelling, 5> kCollectives{{{"allreduce", "allreduce"},
                                                {"allgather", "allgather"},
                                                {"reduce_scatter", "reducescatter"},
                                                {"broadcast", "broadcast"},
                                                {"reduce", "reduce"}}};

// The plugin matches sizes up to this (its README's "covers all sizes").
constexpr uint64_t kMaxBytes = 4294967295ull;

struct Row {
  std::string collective;  // tuner spelling
  uint64_t size = 0;
  TunerChoice choice;
  int nodes = -1, ranks = -1;
  double busGbps = 0, timeUs = 0;
};

std::vector<Row> tunerRows(const std::vector<ExportRun>& runs) {
  std::vector<Row> rows;
  for (const ExportRun& er : runs) {
    for (const ResultRecord& r : er.results) {
      if (r.status != ResultStatus::kOk || !r.timeKnown) continue;
      auto choice = tunerChoiceOfVariant(r.variant);
      auto coll = exporting::theirName(kCollectives, r.collective);
      if (!choice || !coll) continue;
      Row row;
      row.collective = *coll;
      row.size = r.sizeBytes;
      row.choice = *choice;
      row.nodes = er.nodes > 0 ? er.nodes : -1;
      row.ranks = r.nranks ? *r.nranks : (er.run.worldSize > 0 ? er.run.worldSize : -1);
      row.busGbps = r.busbw.value_or(0);
      row.timeUs = r.timeUs;
      rows.push_back(row);
    }
  }
  if (rows.empty()) {
    throw UsageError(
        "export: no result of a forced NCCL algorithm and protocol (run with --nccl-algo and "
        "--nccl-proto, e.g. --nccl-algo Ring,Tree --nccl-proto LL,Simple)");
  }
  return rows;
}

}  // namespace

std::optional<TunerChoice> tunerChoiceOfVariant(std::string_view variant) {
  constexpr std::string_view kPrefix = "nccl:";
  if (variant.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = variant.substr(kPrefix.size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto algo = exporting::theirName(kAlgos, rest.substr(0, slash));
  auto proto = exporting::theirName(kProtos, rest.substr(slash + 1));
  if (!algo || !proto) return std::nullopt;  // "auto": NCCL chose, nothing to tune
  return TunerChoice{*algo, *proto};
}

std::string ncclTunerData(const std::vector<ExportRun>& runs) {
  std::string out =
      "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,"
      "cost_metric,bandwidth_gbps,latency_us\n";
  for (const Row& r : tunerRows(runs)) {
    // channels, pipeOps and regBuff were not forced: -1, "any", as the plugin reads it.
    // cost_metric: the time, lower is better, as optimize_config.py's default metric is.
    out += fmt::format("{},{},{},{},-1,{},{},-1,-1,{},{},{}\n", r.collective, r.size,
                       r.choice.algorithm, r.choice.protocol, r.nodes, r.ranks, r.timeUs, r.busGbps,
                       r.timeUs);
  }
  return out;
}

std::string ncclTunerConf(const std::vector<ExportRun>& runs) {
  // Fastest pair per (collective, nodes, ranks, size).
  using Key = std::tuple<std::string, int, int>;
  std::map<Key, std::map<uint64_t, Row>> best;
  for (const Row& r : tunerRows(runs)) {
    auto& slot = best[{r.collective, r.nodes, r.ranks}];
    auto it = slot.find(r.size);
    if (it == slot.end() || r.timeUs < it->second.timeUs) slot[r.size] = r;
  }
  std::string out =
      "# NCCL tuner config written by collbench export --format nccl-tuner-conf: the fastest\n"
      "# measured algorithm x protocol per size (each range ends at a measured size).\n"
      "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
      "numPipeOps,regBuff\n";
  for (const auto& [key, sizes] : best) {
    const auto& [coll, nodes, ranks] = key;
    uint64_t lo = 0;
    const Row* open = nullptr;
    uint64_t openLo = 0, openHi = 0;
    auto flush = [&] {
      if (!open) return;
      out += fmt::format("{},{},{},{},{},-1,{},{},-1,-1\n", coll, openLo, openHi,
                         open->choice.algorithm, open->choice.protocol, nodes, ranks);
    };
    size_t i = 0;
    for (const auto& [size, row] : sizes) {
      const uint64_t hi = ++i == sizes.size() ? std::max(size, kMaxBytes) : size;
      if (open && open->choice.algorithm == row.choice.algorithm &&
          open->choice.protocol == row.choice.protocol) {
        openHi = hi;
      } else {
        flush();
        open = &row;
        openLo = lo;
        openHi = hi;
      }
      lo = hi + 1;
    }
    flush();
  }
  return out;
}

}  // namespace cb
