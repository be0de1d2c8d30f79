// Reporters for sweep results (rank 0 only): the nccl-tests text table, exactly as nccl-tests
// prints it; a side-by-side view of the variants of one collective; JSON and CSV export; and
// ReportSet, which drives the tables from the sweep's sink for `collbench run`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/Sweep.h"

namespace cb {

// Where a reporter writes: a stdio stream (flushed after every write, so tables stream while
// the sweep runs) or a string.
class TextOut {
 public:
  explicit TextOut(std::FILE* file) : file_(file) {}
  explicit TextOut(std::string* str) : str_(str) {}
  void write(std::string_view text) const;

 private:
  std::FILE* file_ = nullptr;
  std::string* str_ = nullptr;
};

// nccl-tests' name of the test binary of a collective: "all_reduce_perf", "alltoall_perf", ...
std::string_view ncclTestsBinaryName(Collective c);
// nccl-tests' time column: %7.2f below 100 us, %7.1f below 10000 us, %7.0f above.
std::string ncclTestsTime(double microseconds);

struct NcclTestsTableOptions {
  // The placements the sweep measures: a row is printed once every expected placement of its
  // size has arrived (ReportSet expects no in-place point for alltoall and sendrecv, which
  // have no in-place form here).
  bool outOfPlace = true;
  bool inPlace = true;
  // A replay of stored points (`show --format nccl-tests`): expect the placements as given even
  // for alltoall and sendrecv, whose nccl-tests logs carry in-place columns.
  bool asGiven = false;
};

// The nccl-tests table (2022+ format: size, count, type, redop, root, then time, algbw, busbw,
// #wrong for out-of-place and for in-place) of one collective and one variant, fed point by
// point. Rows are printed in the order their sizes first arrive. As in nccl-tests: redop is
// "none" for allgather, broadcast and alltoall and the op's name otherwise (sendrecv's test
// prints it too); root is -1 for collectives without a root; #wrong is N/A when not checked.
// A placement that was not measured (not requested, unsupported or failed) prints N/A in all
// four of its columns and does not count in the footer's average.
// nccl-tests prints "none" in the redop column of the tests that take no op (all_gather,
// broadcast, alltoall); reduce_scatter, reduce, all_reduce and sendrecv print the op.
bool printsRedOp(Collective c);
// A stored point the table can print: a collective, type and op nccl-tests has (not a proxy
// step or an OSU point-to-point test).
bool ncclTestsPrintable(const ResultRecord& p);

class NcclTestsTable {
 public:
  NcclTestsTable(Collective coll, TextOut out, NcclTestsTableOptions o = {});

  // The three '#' header lines; add() prints them before the first row if not yet printed.
  void writeHeader();
  void add(const ResultRecord& p);
  // Prints rows still waiting for a placement (with N/A for what is missing).
  void flush();
  // flush(), then the footer: "# Out of bounds values : N OK|FAILED", "# Avg bus bandwidth
  // : X" (the mean busbw over every measured placement of every row, as nccl-tests computes it)
  // and "#".
  void finish();

  double averageBusBw() const { return busBwCount_ ? busBwSum_ / busBwCount_ : 0; }
  // Placements with #wrong > 0 (nccl-tests counts failing tests, not elements).
  int outOfBounds() const { return outOfBounds_; }
  int rowsPrinted() const { return rows_; }

 private:
  struct Pending {
    std::string dtype, op;
    std::optional<int> root;
    uint64_t bytes;
    std::optional<uint64_t> count;
    std::unique_ptr<ResultRecord> out, in;
  };
  bool complete(const Pending& p) const;
  void writeRow(const Pending& p);
  std::string placementColumns(const ResultRecord* p);

  Collective coll_;
  TextOut out_;
  bool expectOut_, expectIn_;
  bool headerWritten_ = false;
  std::deque<Pending> pending_;
  double busBwSum_ = 0;
  int busBwCount_ = 0;
  int outOfBounds_ = 0;
  int rows_ = 0;
};

enum class SideMetric : uint8_t { kBusBw, kTime };
SideMetric parseSideMetric(std::string_view s);  // "busbw" | "time"; UsageError otherwise

// Sizes down, variants across, for one collective / dtype / op / placement: busbw (GB/s) or time
// (us) per variant (busbw with 4 decimals below 1 GB/s), '*' after the fastest valid value of
// a size only when it wins beyond the measured spread (its interquartile range of iteration
// times lies below every other variant's; a tie within the noise has no winner, nor has a 0-byte
// row, where nothing moved), and a final row counting each variant's wins. The memcpy
// reference (run --reference) is shown, never ranked. When the baseline variant (default "mpi";
// a name such as "ring" matches "ring/shm") is in the table, a second table gives every other
// variant's speed relative to it per size (baseline time / variant time: 2.00x = twice as fast).
// A cell reads "unsup" for an unsupported variant, "failed" for a failed one, "WRONG" when
// #wrong > 0 (never a winner) and "-" when the variant has no point at that size. Needs every
// variant, so it prints at the end of a group.
class SideBySideTable {
 public:
  SideBySideTable(Placement placement, SideMetric metric, std::string baseline = "mpi")
      : placement_(placement), metric_(metric), baseline_(std::move(baseline)) {}
  // Points of the other placement are ignored, so one sink can feed two tables.
  void add(const ResultRecord& p);
  bool empty() const { return sizes_.empty(); }
  int variantCount() const { return static_cast<int>(variants_.size()); }
  // True if some variant has a valid (ok, not wrong) value: else there is nothing to compare.
  bool anyMeasured() const;
  // Wins per variant, in the order variants first appeared.
  std::vector<int> wins() const;
  void write(TextOut out) const;

 private:
  Placement placement_;
  SideMetric metric_;
  std::string baseline_;
  std::vector<std::string> variants_;
  std::vector<uint64_t> sizes_;
  std::map<std::pair<uint64_t, std::string>, ResultRecord> cells_;  // (bytes, variant)
  std::vector<bool> fastest(uint64_t bytes) const;
  int baselineIndex() const;  // -1 when the baseline variant is not in the table
  std::string ratioTable(const std::vector<bool>& shown, const std::vector<size_t>& width) const;
};

// JSON export: {"format": "collbench-results", "version": 2, "header": {...},
// "points": [...]}, every field of ResultRecord, times in microseconds: time_us, summary_us
// (n, median, mean, min, max, p99, stddev; cv is a ratio), samples_us and rank_samples_us (one
// array per rank).
std::string resultsToJson(const std::map<std::string, std::string>& header,
                          const std::vector<ResultRecord>& points);
// CSV export: a header line, then one row per point (summary statistics, no raw samples).
std::string resultsToCsv(const std::vector<ResultRecord>& points);
// Write the exports to files; EnvironmentError when the file can't be written.
void writeJsonFile(const std::string& path, const std::map<std::string, std::string>& header,
                   const std::vector<ResultRecord>& points);
void writeCsvFile(const std::string& path, const std::vector<ResultRecord>& points);

// What `collbench run` prints, fed by the sweep sink on rank 0. Formats:
//   "nccl-tests": per collective and variant an nccl-tests table with its own footer, between
//     "# Collective test starting/concluded" lines as in nccl-tests logs holding several tests;
//     a variant unsupported at every size gets one "# Variant: X  unsupported here: why" line;
//   "collbench": the same tables, plus a side-by-side view of the variants (busbw or time) at
//     the end of each group that measured more than one variant, and a closing summary line;
//   "none": nothing.
// The points arrive size by size with every variant inside a size, so the first variant's table
// streams and the other variants' tables (and the side-by-side views) are held until their
// collective is complete.
class ReportSet {
 public:
  ReportSet(std::FILE* out, std::string_view format, std::string_view sideMetric, int nranks,
            NcclTestsTableOptions placements = {});
  // The variant the side-by-side views relate the others to (default "mpi").
  void setSideBaseline(std::string variant) { sideBaseline_ = std::move(variant); }
  // The placements the tables opened from now on expect (a replay sets them per group).
  void setPlacements(NcclTestsTableOptions placements) { placements_ = placements; }
  ~ReportSet();
  void add(const ResultRecord& p);
  void endGroup();
  void finish(const SweepSummary& summary);

 private:
  struct VariantTable;
  void closeCollective();

  std::FILE* out_;
  bool enabled_, sideBySide_;
  SideMetric metric_;
  int nranks_;
  NcclTestsTableOptions placements_;
  bool haveCollective_ = false;
  Collective coll_ = Collective::kAllReduce;
  std::vector<std::unique_ptr<VariantTable>> tables_;
  std::unique_ptr<SideBySideTable> sideOut_, sideIn_;
  // Variants with only unsupported points so far in this collective, with those points.
  std::vector<std::pair<std::string, std::vector<ResultRecord>>> unsupported_;
  std::string sideHeld_;  // side-by-side views, printed after the collective's tables
  std::string sideBaseline_ = "mpi";
  bool toldHeld_ = false;  // the note that held tables come at the end was printed
};

}  // namespace cb
