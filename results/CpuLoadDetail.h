// The stored form of what other processes took from a run's CPUs (core/CpuLoad.h): the run detail
// "cpu-load" that `run` writes, `gate` reads to tell each side's conditions, and the
// `cpu_contention` array of the diag documents.
#pragma once

#include <string>
#include <vector>

#include "core/CpuLoad.h"

namespace cb {

inline constexpr const char* kCpuLoadDetail = "cpu-load";

// A JSON array, one object per host: host, cpus, ranks, seconds, foreign_cpus, competing_cpus,
// contended.
std::string cpuContentionJson(const std::vector<CpuContention>& hosts);
// The run detail: {"format": "collbench-cpu-load", "version": 1, "hosts": [...]}.
std::string cpuLoadDetail(const std::vector<CpuContention>& hosts);
// Its hosts; empty when the text is not such a document.
std::vector<CpuContention> parseCpuLoadDetail(const std::string& json);

}  // namespace cb
