// `collbench topo`: the machine as collbench sees it (hwloc with I/O, NVML, sysfs) or as recorded
// in hwloc XML exports (--topology, one per host): a tree, the GPU/NIC matrix in the legend of
// `nvidia-smi topo -m`, --json; --check runs the preflight (degraded links, ports down, hosts
// that differ) and --strict makes a finding an exit status of 1.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/Command.h"
#include "core/Error.h"
#include "topology/Preflight.h"
#include "topology/Render.h"
#include "topology/Topology.h"

namespace cb::cli {
namespace {

struct TopoOptions {
  std::vector<std::string> files;
  bool json = false;
  bool check = false;
  bool strict = false;
  std::string sysRoot = "/sys";
  bool noNvml = false;
};

int doTopo(const TopoOptions& o) {
  std::vector<MachineTopology> hosts;
  if (o.files.empty()) {
    // A --sys-root that names nothing would read as a machine without NICs or PCIe links.
    std::error_code ec;
    if (!std::filesystem::is_directory(o.sysRoot, ec)) {
      throw UsageError(fmt::format("--sys-root {}: not a directory (a sysfs tree)", o.sysRoot));
    }
    LiveOptions live;
    live.sysRoot = o.sysRoot;
    live.nvml = !o.noNvml;
    hosts.push_back(detectTopology(live));
  }
  for (const auto& f : o.files) {
    MachineTopology t = loadTopologyXml(f);
    // An export without a HostName is named after its file, so findings can tell hosts apart.
    if (t.host.empty()) {
      std::string base = f.substr(f.find_last_of('/') + 1);
      t.host = base.substr(0, base.rfind(".xml"));
    }
    hosts.push_back(std::move(t));
  }
  std::vector<Finding> findings;
  if (o.check) {
    for (const auto& h : hosts) {
      auto f = checkMachine(h);
      findings.insert(findings.end(), f.begin(), f.end());
    }
    auto fh = checkHosts(hosts);
    findings.insert(findings.end(), fh.begin(), fh.end());
  }
  if (o.json) {
    nlohmann::json j;
    j["hosts"] = nlohmann::json::array();
    for (const auto& h : hosts) j["hosts"].push_back(nlohmann::json::parse(topologyToJson(h)));
    if (o.check) {
      j["findings"] = nlohmann::json::array();
      for (const auto& f : findings) {
        j["findings"].push_back({{"host", f.host},
                                 {"device", f.device},
                                 {"what", f.what},
                                 {"expected", f.expected},
                                 {"seen", f.seen},
                                 {"line", f.line()}});
      }
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (i > 0) fmt::print("\n");
      fmt::print("{}\n{}", renderTree(hosts[i]), renderMatrix(hosts[i]));
    }
    if (o.check) {
      fmt::print("\n# preflight: {} finding{}\n", findings.size(), findings.size() == 1 ? "" : "s");
      for (const auto& f : findings) fmt::print("{}\n", f.line());
    }
  }
  return o.strict && !findings.empty() ? 1 : 0;
}

}  // namespace

void setupTopoCommand(CLI::App* sub, Action& action) {
  auto o = std::make_shared<TopoOptions>();
  sub->add_option("--topology", o->files,
                  "Read an hwloc XML export (lstopo FILE.xml) instead of this machine; repeat "
                  "for several hosts")
      ->check(CLI::ExistingFile);
  sub->add_flag("--json", o->json, "Print JSON instead of the tree and matrix");
  sub->add_flag("--check", o->check,
                "Preflight: PCIe links below their maximum or their peers, NVLinks down, RDMA "
                "ports down or slower than their peers, hosts with other GPUs");
  sub->add_flag("--strict", o->strict, "With --check: exit 1 when anything is found");
  sub->add_option("--sys-root", o->sysRoot,
                  "sysfs root for NICs and PCIe link states (a copied tree)")
      ->capture_default_str();
  sub->add_flag("--no-nvml", o->noNvml, "Do not load NVML (libnvidia-ml.so.1)");
  sub->callback([o, &action] {
    if (o->strict && !o->check) throw CLI::ValidationError("--strict", "needs --check");
    action = [o] { return doTopo(*o); };
  });
}

}  // namespace cb::cli
