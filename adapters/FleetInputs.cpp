#include "adapters/FleetInputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/Reference.h"
#include "core/Size.h"
#include "results/import/ImportPeak.h"
#include "topology/Topology.h"

namespace cb {
namespace {

void addPoints(FleetNode& node, const std::vector<ResultRecord>& results) {
  for (const auto& r : results) {
    if (!r.measured() || r.wrong.value_or(0) != 0 || !r.busbw || !(*r.busbw > 0)) continue;
    node.points.push_back({{r.collective, r.variant, r.placement}, r.sizeBytes, *r.busbw});
  }
}

std::string fileStem(const std::string& file) {
  return std::filesystem::path(file).stem().string();
}

// "8x H100 80GB HBM3" from a recorded host; else "<CPU model>, N CPUs".
std::string kindOfTopology(const std::string& runTopologyJson) {
  auto j = nlohmann::json::parse(runTopologyJson, nullptr, false);
  if (!j.is_object() || !j.contains("hosts") || !j["hosts"].is_array() || j["hosts"].empty()) {
    return "";
  }
  try {
    const MachineTopology t = topologyFromJson(j["hosts"][0].dump());
    if (!t.gpus.empty()) return fmt::format("{}x {}", t.gpus.size(), t.gpus.front().model);
    return fmt::format("{}, {} CPUs", t.cpuModel, t.pus);
  } catch (const std::exception&) {
    return "";
  }
}

// "8x A100-SXM4-40GB" from a log's device lines, "" when they do not say.
std::string kindOfLog(const ImportedRun& run) {
  auto m = logMachine(run);
  if (!m || m->gpuModel.empty() || m->hosts.empty()) return "";
  return fmt::format("{}x {}", m->ranks / static_cast<int>(m->hosts.size()), m->gpuModel);
}

}  // namespace

FleetNode nodeFromImport(const ImportedRun& run, const std::string& file) {
  FleetNode node;
  node.source = file;
  node.name = fileStem(file);
  if (auto m = logMachine(run)) {
    if (m->hosts.size() == 1 && !m->hosts.front().empty()) node.name = m->hosts.front();
  }
  node.kind = kindOfLog(run);
  addPoints(node, run.results);
  return node;
}

void nameNodesApart(std::vector<FleetNode>& nodes) {
  std::map<std::string, int> seen;
  for (const auto& n : nodes) ++seen[n.name];
  for (auto& n : nodes) {
    if (seen[n.name] > 1) n.name = fileStem(n.source);
  }
}

std::vector<FleetNode> storedNodes(const Store& store, const std::string& label,
                                   std::vector<std::string>& notes) {
  RunFilter f;
  if (!label.empty()) f.label = label;
  std::set<std::string> hosts;
  std::vector<FleetNode> out;
  int several = 0;
  for (const RunRecord& r : store.listRuns(f)) {  // newest first
    if (r.status != RunStatus::kOk) continue;
    if (r.hosts.empty() || r.hosts.find(',') != std::string::npos) {
      ++several;
      continue;
    }
    if (!hosts.insert(r.hosts).second) continue;
    FleetNode node;
    node.name = r.hosts;
    node.source = fmt::format("run {}", r.id);
    node.kind = kindOfTopology(store.runTopology(r.id));
    if (node.kind.empty()) node.kind = kindOfLog(ImportedRun{r, {}, {}});  // an imported log
    addPoints(node, store.results(r.id));
    out.push_back(std::move(node));
  }
  if (several > 0) {
    notes.push_back(
        fmt::format("{} stored run(s) of several hosts (or none) left out: a node's "
                    "figures come from runs of that node alone",
                    several));
  }
  return out;
}

std::vector<std::string> publishedComparison(const FleetReport& report) {
  std::vector<std::string> out;
  for (const BaselineRow& row : report.baseline) {
    if (row.from != "fleet") continue;  // a saved baseline's figure is not the fleet's
    // "8x A100-SXM4-40GB": GPUs per node, then the device name.
    const auto x = row.kind.find("x ");
    if (x == std::string::npos || x == 0) continue;
    int gpusPerNode = 0;
    try {
      gpusPerNode = std::stoi(row.kind.substr(0, x));
    } catch (const std::exception&) {
      continue;
    }
    const std::string gpu = referenceGpu(row.kind.substr(x + 2));
    if (gpu.empty() || gpusPerNode <= 0) continue;
    double lo = 0, hi = 0, minimum = 0;
    int measured = 0;
    std::string minimumSource;
    for (const ReferenceFigure& r : referenceTable()) {
      if (r.gpu != gpu || r.gpusPerNode != gpusPerNode || r.nodeCount() != 1 ||
          r.collective != row.series.collective || r.sizeBytes != row.bytes) {
        continue;
      }
      if (r.measured()) {
        lo = measured == 0 ? r.busbw : std::min(lo, r.busbw);
        hi = measured == 0 ? r.busbw : std::max(hi, r.busbw);
        ++measured;
      } else if (r.minimum() && r.busbw > minimum) {
        minimum = r.busbw;
        minimumSource = r.nodeType;
      }
    }
    if (measured == 0) continue;
    if (minimum > lo) minimum = 0;  // a pass mark above a published configuration decides nothing
    std::string line = fmt::format(
        "{} {} at {}: the fleet's median {:.1f} GB/s is {:.0f}% of the published {}", row.kind,
        row.series.text(), formatSize(row.bytes), row.median, 100 * row.median / hi,
        lo == hi ? fmt::format("{:.1f}", hi) : fmt::format("{:.1f}-{:.1f}", lo, hi));
    line += fmt::format(" ({} one-node figure{})", measured, measured == 1 ? "" : "s");
    if (minimum > 0 && row.median < minimum) {
      line += fmt::format(": below the published health minimum {:g} ({}): the whole kind is slow",
                          minimum, minimumSource);
    } else if (minimum > 0) {
      line += fmt::format("; health minimum {:g}", minimum);
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace cb
