#include "results/CpuLoadDetail.h"

#include <nlohmann/json.hpp>

#include "results/Store.h"

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

json roundTripJson(const CpuRoundTrip& t) {
  return {{"cpus", {t.a, t.b}}, {"p10_ns", t.p10Ns}, {"median_ns", t.medianNs}, {"trips", t.trips}};
}

CpuRoundTrip roundTripOf(const json& t) {
  CpuRoundTrip out;
  if (!t.is_object()) return out;
  if (t.contains("cpus") && t["cpus"].is_array() && t["cpus"].size() == 2 &&
      t["cpus"][0].is_number_integer() && t["cpus"][1].is_number_integer()) {
    out.a = t["cpus"][0].get<int>();
    out.b = t["cpus"][1].get<int>();
  }
  out.p10Ns = t.value("p10_ns", 0.0);
  out.medianNs = t.value("median_ns", 0.0);
  out.trips = t.value("trips", 0);
  return out;
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
  if (r.roundTrip.known()) j["round_trip"] = roundTripJson(r.roundTrip);
  if (r.roundTripAfter.known()) j["round_trip_after"] = roundTripJson(r.roundTripAfter);
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
  if (j.contains("round_trip")) out.roundTrip = roundTripOf(j["round_trip"]);
  if (j.contains("round_trip_after")) out.roundTripAfter = roundTripOf(j["round_trip_after"]);
  return out;
}

std::pair<double, double> storedRoundTrips(const Store& store, int64_t runId) {
  std::optional<std::string> doc = store.runDetail(runId, kCpuLoadDetail);
  if (!doc) return {-1, -1};
  const CpuLoadRecord rec = parseCpuLoadDetail(*doc);
  return {rec.roundTrip.known() ? rec.roundTrip.medianNs : -1,
          rec.roundTripAfter.known() ? rec.roundTripAfter.medianNs : -1};
}

}  // namespace cb
