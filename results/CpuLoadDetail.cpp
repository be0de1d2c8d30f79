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

std::string cpuLoadDetail(const CpuLoadRecord& r) {
  json j;
  j["format"] = "collbench-cpu-load";
  j["version"] = 1;
  j["hosts"] = hostsJson(r.hosts);
  if (r.roundTrip.known()) {
    j["round_trip"] = {{"cpus", {r.roundTrip.a, r.roundTrip.b}},
                       {"p10_ns", r.roundTrip.p10Ns},
                       {"median_ns", r.roundTrip.medianNs},
                       {"trips", r.roundTrip.trips}};
  }
  return j.dump();
}

CpuLoadRecord parseCpuLoadDetail(const std::string& text) {
  CpuLoadRecord out;
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
    out.hosts.push_back(c);
  }
  if (j.contains("round_trip") && j["round_trip"].is_object()) {
    const json& t = j["round_trip"];
    if (t.contains("cpus") && t["cpus"].is_array() && t["cpus"].size() == 2 &&
        t["cpus"][0].is_number_integer() && t["cpus"][1].is_number_integer()) {
      out.roundTrip.a = t["cpus"][0].get<int>();
      out.roundTrip.b = t["cpus"][1].get<int>();
    }
    out.roundTrip.p10Ns = t.value("p10_ns", 0.0);
    out.roundTrip.medianNs = t.value("median_ns", 0.0);
    out.roundTrip.trips = t.value("trips", 0);
  }
  return out;
}

}  // namespace cb
