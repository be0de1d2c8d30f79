// The stored form of the CPUs' state while a run measured: what other processes took from them
// (core/CpuLoad.h) and how far apart the first two ranks' CPUs were (core/CpuRoundTrip.h). The
// run detail "cpu-load" that `run` writes and `gate` reads to tell each side's conditions, and
// the `cpu_contention` array of the diag documents.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/CpuLoad.h"
#include "core/CpuRoundTrip.h"

namespace cb {

inline constexpr const char* kCpuLoadDetail = "cpu-load";

// A JSON array, one object per host: host, cpus, ranks, seconds, foreign_cpus, competing_cpus,
// contended.
std::string cpuContentionJson(const std::vector<CpuContention>& hosts);
// What a run stores: every host's contention, and the cache-line round trip between the CPUs of
// ranks 0 and 1 (core/CpuRoundTrip.h; not known when they are on two hosts or one CPU), probed
// before the sweep and again after it: a VM's host that moved its vCPUs during the sweep shows
// as two figures kRoundTripApart apart (runs before session 19 have the first only).
struct CpuLoadRecord {
  std::vector<CpuContention> hosts;
  CpuRoundTrip roundTrip, roundTripAfter;
};
// The run detail: {"format": "collbench-cpu-load", "version": 1, "hosts": [...], "round_trip":
// {"cpus": [a, b], "p10_ns", "median_ns", "trips"}, "round_trip_after": {the same}} (each only
// when known).
std::string cpuLoadDetail(const CpuLoadRecord& r);
// Its contents; empty when the text is not such a document.
CpuLoadRecord parseCpuLoadDetail(const std::string& json);

class Store;
// A stored run's round trips (medians, ns; -1: not stored), before and after its sweep.
std::pair<double, double> storedRoundTrips(const Store& store, int64_t runId);

}  // namespace cb
