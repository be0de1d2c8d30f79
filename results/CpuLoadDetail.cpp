#include "results/CpuLoadDetail.h"

#include <nlohmann/json.hpp>

namespace cb {
namespace {

using json = nlohmann::ordered_json;

json hostsJson(const std::vector<CpuContention>& hosts) {
  json a = json::array();
  for (const CpuContention& c : hosts) {
    a.push_back({{"host", c.host},
                 {"cpus", c.cpus},
                 {"ranks", c.ranks},
                 {"seconds", c.seconds},
                 {"foreign_cpus", c.foreignCpus},
                 {"competing_cpus", c.competingCpus},
                 {"contended", c.contended}});
  }
  return a;
}

}  // namespace

std::string cpuContentionJson(const std::vector<CpuContention>& hosts) {
  return hostsJson(hosts).dump();
}

std::string cpuLoadDetail(const std::vector<CpuContention>& hosts) {
  json j;
  j["format"] = "collbench-cpu-load";
  j["version"] = 1;
  j["hosts"] = hostsJson(hosts);
  return j.dump();
}

std::vector<CpuContention> parseCpuLoadDetail(const std::string& text) {
  std::vector<CpuContention> out;
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || j.value("format", "") != "collbench-cpu-load" || !j.contains("hosts") ||
      !j["hosts"].is_array()) {
    return out;
  }
  for (const json& h : j["hosts"]) {
    if (!h.is_object()) continue;
    CpuContention c;
    c.host = h.value("host", "");
    c.cpus = h.value("cpus", 0);
    c.ranks = h.value("ranks", 0);
    c.seconds = h.value("seconds", 0.0);
    c.foreignCpus = h.value("foreign_cpus", 0.0);
    c.competingCpus = h.value("competing_cpus", 0.0);
    c.contended = h.value("contended", false);
    out.push_back(c);
  }
  return out;
}

}  // namespace cb
