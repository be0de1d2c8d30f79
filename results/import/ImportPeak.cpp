#include "results/import/ImportPeak.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/Collective.h"

namespace cb {

std::optional<LogMachine> logMachine(const ImportedRun& run) {
  auto env = nlohmann::json::parse(run.run.environmentJson, nullptr, false);
  if (!env.is_object() || !env.contains("devices") || !env["devices"].is_array() ||
      env["devices"].empty()) {
    return std::nullopt;
  }
  LogMachine m;
  bool first = true;
  std::map<std::string, int> perHost;
  for (const auto& d : env["devices"]) {
    std::string model = d.value("name", "");
    std::string host = d.value("host", "");
    if (first) m.gpuModel = model;
    if (model != m.gpuModel) m.gpuModel.clear();
    m.named = m.named || !model.empty();
    if (d.value("rank", -1) != m.ranks) m.cut = true;
    first = false;
    if (std::find(m.hosts.begin(), m.hosts.end(), host) == m.hosts.end()) m.hosts.push_back(host);
    m.rankHosts.push_back(host);
    m.localRanks.push_back(perHost[host]++);
    ++m.ranks;
  }
  if (run.run.worldSize > 0 && m.ranks != run.run.worldSize) m.cut = true;
  return m;
}

NodeKind logNodeKind(const ImportedRun& run) {
  NodeKind k;
  k.how = "device lines";
  auto env = nlohmann::json::parse(run.run.environmentJson, nullptr, false);
  if (!env.is_object() || !env.contains("devices") || !env["devices"].is_array() ||
      env["devices"].empty()) {
    return k;
  }
  auto m = logMachine(run);
  if (!m || m->gpuModel.empty()) return k;
  k.gpu = referenceGpu(m->gpuModel);
  std::map<std::string, int> perHost;
  int highestDevice = -1;
  for (const auto& d : env["devices"]) {
    ++perHost[d.value("host", "")];
    if (d.contains("device") && d["device"].is_number_integer()) {
      highestDevice = std::max(highestDevice, d["device"].get<int>());
    }
  }
  const int world = run.run.worldSize;
  if (world > 0 && m->ranks == world) {
    for (const auto& [host, n] : perHost) k.gpusPerNode = std::max(k.gpusPerNode, n);
    k.nodes = static_cast<int>(perHost.size());
  } else {
    // A cut device list (the publisher kept a few lines): device indices still tell the node.
    k.gpusPerNode = highestDevice + 1;
    if (world > 0 && k.gpusPerNode > 0 && world % k.gpusPerNode == 0) {
      k.nodes = world / k.gpusPerNode;
    }
  }
  return k;
}

void judgeImportedRun(ImportedRun& run, const std::function<Bound(const std::string&)>& boundOf,
                      const std::string& boundSource, const NodeKind* knownKind) {
  std::vector<std::string> colls;
  for (const auto& r : run.results) {
    if (std::find(colls.begin(), colls.end(), r.collective) == colls.end()) {
      colls.push_back(r.collective);
    }
  }
  auto env = nlohmann::ordered_json::parse(run.run.environmentJson, nullptr, false);
  if (!env.is_object()) env = nlohmann::ordered_json::object();
  nlohmann::ordered_json verdicts = nlohmann::ordered_json::array();
  const NodeKind kind = knownKind ? *knownKind : logNodeKind(run);
  if (kind.known()) run.notes.push_back(fmt::format("node type ({}): {}", kind.how, kind.label()));
  for (const auto& c : colls) {
    Bound b = boundOf(c);
    std::vector<std::pair<uint64_t, double>> figures;
    std::string variant;
    for (auto& r : run.results) {
      if (r.collective != c) continue;
      if (variant.empty()) variant = r.variant;
      // One rank: algbw out of place, nothing in place (core/PeakModel.h, judgedFigure).
      if (b.known() && judgedPoint(r.nranks.value_or(0), r.placement == "in")) {
        r.peakGBps = b.busbw;
        r.peakLimit = b.limit;
      }
      if (r.status != ResultStatus::kOk || !r.busbw || !r.algbw || r.wrong.value_or(0) != 0)
        continue;
      if (auto f = judgedFigure(r.nranks.value_or(0), r.placement == "in", *r.algbw, *r.busbw)) {
        figures.emplace_back(r.sizeBytes, f.value());
      }
    }
    Verdict v = judge(figures, b);
    // For its kind: busbw against what published nodes of this type reach (core/Reference.h).
    std::vector<std::pair<uint64_t, double>> busbws;
    for (const auto& r : run.results) {
      if (r.collective == c && r.status == ResultStatus::kOk && r.busbw &&
          r.wrong.value_or(0) == 0) {
        busbws.emplace_back(r.sizeBytes, *r.busbw);
      }
    }
    KindVerdict kv = judgeForKind(kind, c, algoClassOf(variant), busbws);
    const std::string line = verdictText(v) + "; " + kv.line;
    run.notes.push_back(fmt::format("verdict {} {}: {}", c, variant, line));
    nlohmann::ordered_json j = {{"collective", c},
                                {"variant", variant},
                                {"verdict", std::string(verdictKindName(v.kind))},
                                {"line", line},
                                {"kind_verdict", std::string(kindVerdictName(kv.kind))},
                                {"reference_lines", kv.figureLines}};
    if (kind.known()) j["node_kind"] = kind.label();
    if (b.known()) {
      j["peak_gbps"] = b.busbw;
      j["limit"] = b.limit;
      j["basis"] = b.basis;
    }
    verdicts.push_back(std::move(j));
  }
  env["peak"] = {{"from", boundSource}, {"verdicts", std::move(verdicts)}};
  env["importNotes"] = run.notes;
  run.run.environmentJson =
      env.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace cb
