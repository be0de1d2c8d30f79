// How diagnosis results read: the text heat map and verdict lines printed by `collbench diag`,
// CSV and JSON of a link matrix, the message stored with each link, and the link matrix built
// from imported pairwise logs (`diag logs`). Pure functions over diagnosis/Diagnosis.h verdicts.
// The stored form and its HTML heat map are results/DiagRecords.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "diagnosis/Diagnosis.h"
#include "results/DiagRecords.h"
#include "results/Records.h"
#include "results/import/Import.h"

namespace cb {

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
