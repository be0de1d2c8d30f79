// What each `collbench diag` command prints, writes (--json, --csv) and stores, from its
// measurement's result: the text after the run header, the JSON document, the CSV and the result
// records (results/DiagRecords.h: the stored form). The command (cli/DiagCommand.cpp) parses
// flags, runs the measurement and hands the documents out; nothing here does I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnosis/DiagBisect.h"
#include "diagnosis/DiagLinks.h"
#include "diagnosis/DiagRanks.h"
#include "diagnosis/DiagReport.h"
#include "results/Records.h"

namespace cb {

// What every live diagnosis's documents share: the run they are stored under, the transport
// measured and the injected faults, described ("slow-link 0-1 x4").
struct DiagRun {
  int64_t runId = 0;
  std::string transport;
  std::vector<std::string> injected;
};

// The documents of one diagnosis: `text` to print after the header, `json` (a whole document,
// indented, newline-ended), `csv` ("" when the command has none), the records to store.
struct DiagDocuments {
  std::string text, json, csv;
  std::vector<ResultRecord> records;
};

// A live diagnosis's outcome: healthy (exit 0), too noisy to judge (exit 3), else suspects
// (exit 1). Every live diagnosis is too noisy when other processes held its ranks' CPUs
// (core/CpuLoad.h): its figures are then the scheduler's.
struct DiagOutcome {
  bool healthy = false, tooNoisy = false;
};

// ---- diag links ----
// `belowBound` holds the "below bound" lines of the links under the physical bound
// (cli/PeakJudge), "" when none is. Healthy: no suspect and none below bound; too noisy also when
// healthy but the schedules disagreed beyond the asked resolution.
DiagOutcome linksOutcome(const DiagLinksResult& res, const std::string& belowBound);
// `pattern` names how the pairs were scheduled (quick, sequential, circle method).
DiagDocuments linksDocuments(const DiagRun& run, const DiagLinksResult& res,
                             const DiagLinksOptions& o, const LinkGraph& graph,
                             const std::string& pattern, const std::string& belowBound);

// ---- diag bisect ----
// Healthy: no slow rank and, when the pair matrix decided, no suspect link.
DiagOutcome bisectOutcome(const DiagBisectResult& res);
DiagDocuments bisectDocuments(const DiagRun& run, const DiagBisectResult& res,
                              const DiagBisectOptions& o, const LinkGraph& graph, int ranks);

// ---- diag ranks ----
DiagOutcome ranksOutcome(const DiagRanksResult& res);
DiagDocuments ranksDocuments(const DiagRun& run, const DiagRanksResult& res,
                             const DiagRanksOptions& o, int ranks);

// ---- diag logs ----
// The verdict over imported pairwise logs (`files` as given): per collective a heat map and
// verdict, failed links named, records per link (runId 0: the caller's run sets it).
struct LogsDiagnosis {
  DiagDocuments docs;
  bool healthy = true;
};
LogsDiagnosis logsDocuments(const PairwiseLogs& logs, const std::vector<std::string>& files,
                            const SuspectOptions& so);
// The run record `diag logs` stores its links under (world "imported", the logs' hosts).
RunRecord logsRunRecord(const PairwiseLogs& logs, const std::string& label,
                        const std::string& commandLine);

}  // namespace cb
