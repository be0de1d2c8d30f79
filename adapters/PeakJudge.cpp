#include "adapters/PeakJudge.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/Error.h"
#include "core/Text.h"
#include "results/import/ImportPeak.h"
#include "topology/LinkBounds.h"
#include "topology/NodeKind.h"

namespace cb {

MachineTopology loadTopologyFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UsageError(fmt::format("--topology {}: cannot read", path));
  std::stringstream text;
  text << f.rdbuf();
  const std::string s = text.str();
  try {
    if (startsWith(trim(s), "{")) {
      // `topo --json` prints {"hosts": [...]}: the first host is the machine.
      auto j = nlohmann::json::parse(s, nullptr, false);
      if (j.is_object() && j.contains("hosts") && j["hosts"].is_array() && !j["hosts"].empty()) {
        return topologyFromJson(j["hosts"][0].dump());
      }
      return topologyFromJson(s);
    }
    return loadTopologyXmlText(s, path);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--topology {}: {}", path, printable(e.what())));
  }
}

namespace {

Bound noBound(std::string why) {
  Bound b;
  b.unknownWhy = std::move(why);
  return b;
}

}  // namespace

void judgeImport(ImportedRun& run, const MachineTopology* machine, const std::string& machinePath) {
  auto log = logMachine(run);
  if (!log) {
    // No device lines: with --topology the recorded machine is the node type, its GPUs per node,
    // and the world size / that the node count.
    NodeKind kind;
    if (machine) {
      kind = machineNodeKind(*machine, 0);
      const int world = run.run.worldSize;
      if (world > 0 && kind.gpusPerNode > 0 && world % kind.gpusPerNode == 0) {
        kind.nodes = world / kind.gpusPerNode;
      }
      kind.how = "topology " + machinePath;
    }
    judgeImportedRun(
        run, [](const std::string&) { return noBound("the log names no devices"); }, "none",
        machine ? &kind : nullptr);
    return;
  }
  // A cut device list ("Rank 71" of 72) gives the model and the node, not every rank: the
  // world size and the node type's count stand for the ranks and nodes.
  const NodeKind logKind = logNodeKind(run);
  const int world = run.run.worldSize;
  const bool cutUnknown = log->cut && (world <= 0 || logKind.nodes <= 0);
  const std::string cutWhy =
      "the device lines are a cut list and the world size or node count is not known";
  if (!machine) {
    const int nodes = log->cut ? logKind.nodes : static_cast<int>(log->hosts.size());
    const int ranks = log->cut ? world : log->ranks;
    judgeImportedRun(
        run,
        [&](const std::string& collective) {
          if (!log->named) return noBound("the device lines name no GPU model");
          if (log->gpuModel.empty()) return noBound("the ranks name different GPU models");
          if (cutUnknown) return noBound(cutWhy);
          Bound b = deviceLinesBound(log->gpuModel, ranks, nodes);
          // What the collective adds (NVLS's reason to pass the links' rate), when it is known.
          try {
            return withCollective(std::move(b), parseCollective(collective));
          } catch (const UsageError&) {
            return b;
          }
        },
        "device lines");
    return;
  }
  // The node type: the log's device lines, the GPU model from the machine where they name none.
  NodeKind kind = logKind;
  const NodeKind recorded = machineNodeKind(*machine, static_cast<int>(log->hosts.size()));
  if (kind.gpu.empty() && !recorded.gpu.empty()) {
    kind.gpu = recorded.gpu;
    kind.how = "topology " + machinePath + " and device lines";
  }
  // Every host of the log is the given machine; its ranks drive its GPUs in bus order.
  std::vector<MachineTopology> hosts;
  for (const auto& h : log->hosts) {
    hosts.push_back(*machine);
    hosts.back().host = h;
  }
  const std::vector<RankPlacement> placements =
      placeGpuRanks(*machine, log->rankHosts, log->localRanks);
  const std::string why = log->cut ? cutWhy.substr(0, cutWhy.find(" and")) + ": no rank layout"
                          : placements.empty()
                              ? fmt::format("{} has {} GPUs; the log runs more ranks on a host",
                                            machinePath, machine->gpus.size())
                              : "";
  judgeImportedRun(
      run,
      [&](const std::string& collective) {
        if (!why.empty()) return noBound(why);
        try {
          return collectiveLinkBound(hosts, placements, parseCollective(collective));
        } catch (const UsageError&) {
          return noBound(fmt::format("no model for {}", collective));
        }
      },
      "topology " + machinePath, &kind);
}

std::string linksBelowBound(const std::vector<LinkSample>& links, const RunTopology& topology,
                            double linkRateGbps) {
  std::string lines;
  std::vector<double> shares;
  int judged = 0;
  std::string limit;
  double both = 0, expected = 0;
  for (const LinkSample& l : links) {
    Bound b = linkRateGbps > 0
                  ? nicBound("Ethernet", linkRateGbps, 1)
                  : pairLinkBound(topology.hosts, topology.placements, l.pair.a, l.pair.b);
    if (!b.known() || l.bandwidthGBs <= 0) continue;
    if (linkRateGbps > 0) b.limit = fmt::format("--link-rate {:g} Gb/s", linkRateGbps);
    ++judged;
    both = 2 * b.busbw;  // bibw moves both directions at once
    limit = b.limit;
    expected = expectedFraction(b);
    const double share = l.bandwidthGBs / both;
    if (share >= expected) continue;
    shares.push_back(share);
    lines += fmt::format(
        "below bound: link {}-{} {:.3f} GB/s bibw, {:.0f}% of the {} bound ({:.2f} GB/s both "
        "ways); expected >= {:.0f}%\n",
        l.pair.a, l.pair.b, l.bandwidthGBs, 100 * share, b.limit, both, 100 * expected);
  }
  if (judged > 1 && static_cast<int>(shares.size()) == judged) {
    std::sort(shares.begin(), shares.end());
    return fmt::format(
        "below bound: every link ({}) under its physical bound, median {:.0f}% of the {} bound "
        "({:.2f} GB/s both ways); expected >= {:.0f}%\n",
        judged, 100 * shares[shares.size() / 2], limit, both, 100 * expected);
  }
  return lines;
}

std::string storedVerdictLines(const Store& store, const RunRecord& run) {
  nlohmann::json peak;
  if (auto detail = store.runDetail(run.id, "peak")) {
    peak = nlohmann::json::parse(*detail, nullptr, false);
  } else {
    auto env = nlohmann::json::parse(run.environmentJson, nullptr, false);
    if (env.is_object() && env.contains("peak")) peak = env["peak"];
  }
  if (!peak.is_object() || !peak.contains("verdicts") || !peak["verdicts"].is_array()) return "";
  std::string out;
  for (const auto& v : peak["verdicts"]) {
    if (!v.is_object()) continue;
    out += fmt::format("# verdict {} {}: {}\n", printable(v.value("collective", "?")),
                       printable(v.value("variant", "?")), printable(v.value("line", "")));
  }
  return out;
}

}  // namespace cb
