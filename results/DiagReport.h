// How diagnosis results read and are kept: the text heat map and verdict lines printed by
// `collbench diag`, CSV and JSON of a link matrix, the store records of its links, the HTML heat
// map drawn for them in `collbench report`, and the link matrix built from imported pairwise logs
// (`diag logs`). Pure functions over core/Diagnosis.h verdicts and result records.
//
// Stored form: one ResultRecord per link and metric, collective "diag-<metric>" ("diag-bibw",
// "diag-latency"; from logs "diag-<collective>"), variant "<source>@<A>,<B>" (source: the
// transport, or "nccl-tests"), busbw = the link's bandwidth (GB/s) or timeUs = its latency, and a
// message beginning "suspect" for links the verdict names (or whose rank or host it names).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/Diagnosis.h"
#include "results/Records.h"
#include "results/import/Import.h"

namespace cb {

inline constexpr const char* kDiagPrefix = "diag-";
bool isDiagResult(const ResultRecord& r);

// What a verdict is about: the endpoints' names, the metric and its unit.
struct LinkMatrixInfo {
  std::string metric;              // "bandwidth", "latency", "alltoall busbw", ...
  std::string unit;                // "GB/s", "us"
  std::vector<std::string> names;  // endpoint names, index = endpoint
  std::string endpointKind = "rank";
};

// Rows and columns are endpoints; each cell the link's value with a mark: '!' suspect (or set
// aside for a named endpoint), '~' below the gap but within the robust bound, '?' not judged.
// Endpoints are numbered; names other than the numbers are listed under the map.
std::string textHeatMap(const LinkVerdict& v, const LinkMatrixInfo& info);
// The verdict in lines: one line when healthy; else the named hosts/ranks, then the suspect
// links worst first, then notes. `confirmations` (may be empty) are printed with their links.
struct ConfirmationNote {
  LinkPair pair;
  std::string text;  // "alone: 0.48 x 3 typical links alone"
};
std::string verdictText(const LinkVerdict& v, const LinkMatrixInfo& info,
                        const std::vector<ConfirmationNote>& confirmations = {});
// The message stored with a link ("" when the verdict says nothing about it).
std::string linkMessage(const LinkVerdict& v, size_t link, const LinkMatrixInfo& info);

// CSV: metric,a,b,name_a,name_b,class,value,unit,relative,class_median,judged,suspect,verdict
std::string linkCsvHeader();
std::string linkCsvRows(const LinkVerdict& v, const LinkMatrixInfo& info);
// A JSON object: metric, unit, endpoints, links (with their judgement), named endpoints,
// suspects (worst first), notes, healthy.
std::string verdictJson(const LinkVerdict& v, const LinkMatrixInfo& info);

// The variant of a stored link, and back: "shm@0,3" <-> ("shm", "0", "3").
std::string diagVariant(const std::string& source, const std::string& a, const std::string& b);
bool parseDiagVariant(const std::string& variant, std::string& source, std::string& a,
                      std::string& b);

// The HTML section of a run's diagnosis results: per metric, a heat map (SVG) of the link
// matrix coloured by each link against the median, suspects outlined and marked "!", and the
// suspect list. "" when the results hold none.
std::string diagHtmlSection(const std::vector<ResultRecord>& results);

// ---- diag logs ----

// Links from imported pairwise logs (each run: two hosts). Per collective, a link's value is the
// mean busbw over the sizes every log of that collective measured (nccl-tests' "Avg bus
// bandwidth", over a common range so logs of different ranges compare). A run that failed, or
// has no ok result at the common sizes, is a failed link.
struct PairwiseLink {
  LinkPair pair;
  std::string file;
  double value = 0;
  bool failed = false;
  std::string why;  // when failed
};
struct PairwiseMatrix {
  std::string collective;
  std::vector<uint64_t> sizes;  // common to every log
  std::vector<PairwiseLink> links;
};
struct PairwiseLogs {
  std::vector<std::string> hosts;        // endpoints, in order of first appearance
  std::vector<PairwiseMatrix> matrices;  // one per collective, in order of first appearance
  std::vector<std::string> notes;
};
struct PairwiseInput {
  std::string file;
  std::vector<ImportedRun> runs;
};
// UsageError naming the file when a run is not between two hosts.
PairwiseLogs pairwiseLinks(const std::vector<PairwiseInput>& inputs);

// One pairwise log parsed for `diag logs`: each test of a file (a "# nccl-tests version" or
// "# Collective test starting" line begins one) is parsed apart, so a test cut short (a crashed
// or killed run: a table without rows) is a failed link of that collective, not a file the whole
// verdict must refuse. A file that is no known log, or a broken test whose two hosts cannot be
// read from its device lines, is a UsageError naming FILE:LINE.
std::vector<ImportedRun> parsePairwiseLog(const std::string& text, const ImportOptions& options);

}  // namespace cb
