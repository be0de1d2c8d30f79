// The stored form of a diagnosis, which the store and the HTML report read without knowing how
// it was judged (diagnosis/ writes it): one ResultRecord per link (or rank, or bisection group)
// and metric, collective "diag-<metric>" (`DiagMetric`; from pairwise logs "diag-<collective>"),
// variant "<source>@<A>,<B>" for a link (source: the transport, or "nccl-tests"), busbw = the
// link's bandwidth (GB/s) or timeUs = its latency, and a message beginning "suspect" for what the
// verdict names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "results/Records.h"

namespace cb {

inline constexpr const char* kDiagPrefix = "diag-";

// The metrics live diagnoses store, by name.
enum class DiagMetric : uint8_t {
  kBibw,     // diag links: a link's bidirectional bandwidth
  kLatency,  // diag links: a link's ping-pong latency
  kBisect,   // diag bisect: a group's allreduce busbw
  kArrival,  // diag ranks: when a rank posts its first message
  kFinish,   // diag ranks: when a rank's call returns
};
// "diag-bibw", ...; and the collective of a link from pairwise logs ("diag-all_reduce_perf").
std::string diagCollective(DiagMetric m);
std::string diagCollective(std::string_view logCollective);
bool isDiagResult(const ResultRecord& r);

// The variant of a stored link, and back: "shm@0,3" <-> ("shm", "0", "3").
std::string diagVariant(const std::string& source, const std::string& a, const std::string& b);
bool parseDiagVariant(const std::string& variant, std::string& source, std::string& a,
                      std::string& b);

// A matrix cell's number: 3 significant digits, at least 2 decimals below 10.
std::string diagCellNumber(double v);

// The HTML section of a run's diagnosis results: per metric, a heat map (SVG) of the link
// matrix coloured by each link against the median, suspects outlined and marked "!", and the
// suspect list. "" when the results hold none.
std::string diagHtmlSection(const std::vector<ResultRecord>& results);

}  // namespace cb
