// Prometheus text exposition format (version 0.0.4) of stored results, with the names and
// labels of NCCL Inspector's textfile output where they mean the same (docs/EXPORT.md).
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/LinkClass.h"
#include "results/Store.h"
#include "results/export/Export.h"
#include "results/export/Spelling.h"

namespace cb {
namespace {

using exporting::Spelling;
// ncclFuncToString's spellings (NCCL 2.28, plugins/profiler/inspector/inspector.cc).
constexpr std::array<Spelling, 7> kCollectiveNames{{{"allreduce", "AllReduce"},
                                                    {"allgather", "AllGather"},
                                                    {"reduce_scatter", "ReduceScatter"},
                                                    {"broadcast", "Broadcast"},
                                                    {"reduce", "Reduce"},
                                                    {"alltoall", "All2All"},
                                                    {"sendrecv", "SendRecv"}}};

// Label values: backslash, double quote and line feed escaped (exposition format 0.0.4).
std::string escapeLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

struct Metric {
  std::string_view name, help;
  std::string body;
};

}  // namespace

std::string inspectorCollectiveName(std::string_view collective) {
  return exporting::theirName(kCollectiveNames, collective).value_or("");
}

std::optional<std::string> collectiveFromInspector(std::string_view name) {
  return exporting::ourName(kCollectiveNames, name);
}

std::string inspectorMessageSizeBucket(uint64_t bytes) {
  if (bytes == 0) return "0B";
  static constexpr std::array<std::string_view, 5> kUnits{"B", "KB", "MB", "GB", "TB"};
  size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  const double lower = std::max(1.0, std::floor(value));
  return fmt::format("{:.0f}-{:.0f}{}", lower, lower + 1, kUnits[unit]);
}

ExportRun loadExportRun(const Store& store, const RunRecord& run) {
  ExportRun out;
  out.run = run;
  out.results = store.results(run.id, false);
  nlohmann::json env = nlohmann::json::parse(run.environmentJson, nullptr, false);
  if (env.is_object() && env.contains("informative") && env["informative"].is_object()) {
    out.slurmJobId = env["informative"].value("slurm_job_id", "");
  }
  size_t hosts = 0;
  for (size_t start = 0; !run.hosts.empty() && start != std::string::npos;) {
    ++hosts;
    size_t comma = run.hosts.find(',', start);
    start = comma == std::string::npos ? comma : comma + 1;
  }
  out.nodes = static_cast<int>(hosts);
  nlohmann::json topo = nlohmann::json::parse(store.runTopology(run.id), nullptr, false);
  if (topo.is_object() && topo.contains("link_classes") && topo["link_classes"].is_array()) {
    std::optional<LinkClass> widest;
    for (const auto& row : topo["link_classes"]) {
      if (!row.is_array()) continue;
      for (const auto& cell : row) {
        if (!cell.is_string()) continue;
        auto c = parseLinkClass(cell.get<std::string>());
        if (c && *c != LinkClass::kSelf && (!widest || *c > *widest)) widest = c;
      }
    }
    if (widest) out.linkClass = std::string(linkClassName(*widest));
  }
  return out;
}

std::string prometheusText(const std::vector<ExportRun>& runs) {
  std::array<Metric, 4> metrics{{
      {"collbench_bus_bandwidth_gbs",
       "Bus bandwidth in GB/s (nccl-tests' busbw; NCCL Inspector: nccl_bus_bandwidth_gbs)", ""},
      {"collbench_alg_bandwidth_gbs",
       "Algorithm bandwidth in GB/s (size / time; NCCL Inspector JSON: coll_algobw_gbs)", ""},
      {"collbench_collective_exec_time_microseconds",
       "Time of one call in microseconds, by statistic over the timed iterations (NCCL "
       "Inspector: nccl_collective_exec_time_microseconds, a mean)",
       ""},
      {"collbench_result_wrong_elements",
       "Elements that failed verification (0: verified; absent: not checked)", ""},
  }};
  for (const ExportRun& er : runs) {
    const RunRecord& run = er.run;
    for (const ResultRecord& r : er.results) {
      if (r.status != ResultStatus::kOk) continue;
      const auto choice = tunerChoiceOfVariant(r.variant);
      const std::string coll = inspectorCollectiveName(r.collective);
      // Inspector's labels first (same names, same spellings), then collbench's own.
      std::string labels = fmt::format(
          "slurm_job_id=\"{}\",node=\"{}\",n_nodes=\"{}\",nranks=\"{}\",collective=\"{}\","
          "message_size=\"{}\",algo_proto=\"{}\",run_id=\"{}\",label=\"{}\",source=\"{}\","
          "hosts=\"{}\",variant=\"{}\",coll=\"{}\",dtype=\"{}\",op=\"{}\",root=\"{}\","
          "placement=\"{}\",size_bytes=\"{}\",link_class=\"{}\"",
          escapeLabel(er.slurmJobId.empty() ? "unknown" : er.slurmJobId),
          escapeLabel(run.host.empty() ? "unknown" : run.host), er.nodes,
          r.nranks ? *r.nranks : run.worldSize, escapeLabel(coll.empty() ? r.collective : coll),
          inspectorMessageSizeBucket(r.sizeBytes),
          choice ? fmt::format("{}_{}", choice->algorithm, choice->protocol) : "unknown", run.id,
          escapeLabel(run.label), escapeLabel(run.source), escapeLabel(run.hosts),
          escapeLabel(r.variant), escapeLabel(r.collective), escapeLabel(r.dtype),
          escapeLabel(r.op), r.root ? std::to_string(*r.root) : "", escapeLabel(r.placement),
          r.sizeBytes, escapeLabel(er.linkClass));
      if (r.busbw)
        metrics[0].body += fmt::format("{}{{{}}} {}\n", metrics[0].name, labels, number(*r.busbw));
      if (r.algbw)
        metrics[1].body += fmt::format("{}{{{}}} {}\n", metrics[1].name, labels, number(*r.algbw));
      auto stat = [&](std::string_view name, std::optional<double> v) {
        if (v) {
          metrics[2].body +=
              fmt::format("{}{{{},stat=\"{}\"}} {}\n", metrics[2].name, labels, name, number(*v));
        }
      };
      if (r.medianKnown) stat("median", r.medianUs);
      stat("mean", r.meanUs);
      stat("min", r.minUs);
      stat("max", r.maxUs);
      stat("p99", r.p99Us);
      if (r.wrong) {
        metrics[3].body += fmt::format("{}{{{}}} {}\n", metrics[3].name, labels, *r.wrong);
      }
    }
  }
  std::string out;
  for (const Metric& m : metrics) {
    if (m.body.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}", m.name, m.help, m.name, m.body);
  }
  return out;
}

}  // namespace cb
