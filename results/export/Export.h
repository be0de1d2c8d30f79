// Exports of stored runs into the formats other tools read: Prometheus' text exposition format
// (node_exporter's textfile collector, or one scrape), NCCL's example tuner plugin (its
// performance-data CSV and its nccl_tuner.conf), and networks fitted for simulators (ASTRA-sim's
// analytical network YAML, SimAI's busbw.yaml). Pure functions of the records: the CLI loads the
// runs (loadExportRun) and writes the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/Records.h"

namespace cb {

class Store;

struct ExportRun {
  RunRecord run;
  std::vector<ResultRecord> results;  // in the order measured, without samples
  // The widest link class between any two of the run's ranks ("network" when it spans hosts,
  // "cross-numa", "numa", ... inside one), from its stored topology; "" when unknown (imports).
  std::string linkClass;
  int nodes = 0;           // hosts of the run (0 unknown)
  std::string slurmJobId;  // "" outside Slurm
};

ExportRun loadExportRun(const Store& store, const RunRecord& run);

// ---- NCCL Inspector's vocabulary (plugins/profiler/inspector in NVIDIA/nccl) ----

// "allreduce" -> "AllReduce", as ncclFuncToString spells it; "" for what NCCL has no name for.
std::string inspectorCollectiveName(std::string_view collective);
// The inverse ("AllReduce" -> "allreduce", "All2All" -> "alltoall"); nullopt if unknown.
std::optional<std::string> collectiveFromInspector(std::string_view name);
// Inspector's message_size label: the size in the largest unit (B, KB, MB, GB, TB of 1024) that
// keeps it >= 1, floored to N, as "N-(N+1)UNIT" (64 MiB: "64-65MB"; 0: "0B").
std::string inspectorMessageSizeBucket(uint64_t bytes);

// ---- Prometheus ----

// Every ok result of the runs as gauges, one series per result (labels below), with HELP and
// TYPE once per metric. Metric names, labels and their Inspector counterparts: docs/EXPORT.md.
std::string prometheusText(const std::vector<ExportRun>& runs);

// ---- NCCL tuner ----

// The NCCL algorithm and protocol a result's variant forced ("nccl:Ring/LL" -> {"ring", "ll"},
// in the tuner plugin's spelling); nullopt when either was left to NCCL or it is no NCCL column.
struct TunerChoice {
  std::string algorithm, protocol;
};
std::optional<TunerChoice> tunerChoiceOfVariant(std::string_view variant);

// The performance-data CSV the example plugin's scripts/optimize_config.py reads:
// collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,
// bandwidth_gbps,latency_us — one row per ok result of a forced algorithm x protocol column.
// UsageError when the runs have none.
std::string ncclTunerData(const std::vector<ExportRun>& runs);
// The plugin's own config (nccl_tuner.conf): per collective, node and rank count, the fastest
// forced pair at each measured size, over the size range up to it (the last to 4294967295),
// neighbouring ranges with the same pair merged:
// collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
std::string ncclTunerConf(const std::vector<ExportRun>& runs);

// ---- simulator networks ----

// t(S) = alpha + S * f / B fitted to the ok results of one (link class, collective, variant,
// ranks): S the size, f the collective's bus factor (busbw / algbw), weighted least squares on
// relative error over the lower envelope of the fastest time per size (a size's time is capped
// by any larger size's). busGbps is B, the bus bandwidth the largest sizes approach.
struct AlphaBetaFit {
  std::string linkClass, collective, variant;
  int nranks = 0, nodes = 0;
  int points = 0;  // distinct sizes fitted
  uint64_t minBytes = 0, maxBytes = 0;
  double alphaUs = 0, busGbps = 0;
  double rmsRelError = 0, maxRelError = 0;  // of the fitted times against the measured ones
};
// Groups with fewer than two distinct sizes are left out, and so are groups whose time does not
// grow with size (each named in `leftOut` when given). UsageError when no group is left.
std::vector<AlphaBetaFit> fitAlphaBeta(const std::vector<ExportRun>& runs,
                                       std::vector<std::string>* leftOut = nullptr);
// CSV of the fits, one per line, with their errors.
std::string fitsCsv(const std::vector<AlphaBetaFit>& fits);
// ASTRA-sim's analytical network (topology, npus_count, bandwidth GB/s, latency ns per
// dimension): one dimension per link class, innermost first, from each class's fastest allreduce
// fit (else its fastest fit) read as a ring; the fits and errors as comments.
std::string astraSimNetworkYaml(const std::vector<AlphaBetaFit>& fits);
// SimAI-Analytical's busbw.yaml: TP (inside a host), DP and EP (between hosts) sections of
// "collective,: busbw GB/s" lines and PP's busbw; null where nothing was measured.
std::string simaiBusbwYaml(const std::vector<AlphaBetaFit>& fits);

}  // namespace cb
