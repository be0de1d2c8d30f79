// What `collbench p2p` prints (rank 0): per transport and pair an OSU-like table ("# Size" then
// "Latency (us)" or "Bandwidth (GB/s)", OSU's column widths, plus min/max/p99/iterations/#wrong),
// a side-by-side view of the transports of a pair when several ran, and for --all-pairs a matrix
// of the metric at one size per transport, naming the slowest link.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "bench/P2p.h"
#include "bench/Report.h"

namespace cb {

// The two header lines of a table: "# Transport: ..." and the OSU column titles.
std::string p2pTableHeader(P2pTest test, const std::string& transport, RankPair pair, int window,
                           LinkClass link);
// One row: OSU's "%-10d%20.2f" (bandwidth below 1 GB/s with 4 decimals), then the extra columns.
std::string p2pTableRow(const P2pPoint& p);
// Sizes down, transports across, '*' after the best value of each size, then a wins row. All
// points must belong to one pair; empty when fewer than two transports have points.
std::string p2pSideBySide(std::span<const P2pPoint> points);
// The metric between every two ranks at `bytes`, one matrix per transport (diagonal "-", pairs
// not measured "."), and the slowest link against the median link. Empty if nothing matches.
std::string p2pMatrix(std::span<const P2pPoint> points, int nranks, uint64_t bytes);

// Drives the tables from the P2pSink. The first transport's table of a pair streams row by row;
// the others are held and printed, with the side-by-side view, when the pair ends.
class P2pReportSet {
 public:
  explicit P2pReportSet(TextOut out) : out_(out) {}
  void skipped(const std::string& transport, const std::string& why);
  void add(const P2pPoint& p);
  void pairEnd(RankPair pair);
  // Matrices (when more than one pair was measured) at `matrixBytes`.
  void finish(int nranks, uint64_t matrixBytes);
  const std::vector<P2pPoint>& points() const { return all_; }

 private:
  TextOut out_;
  std::string streaming_;  // transport whose table streams in the current pair
  std::vector<std::string> order_;
  std::map<std::string, std::vector<P2pPoint>> held_;  // transport -> points of the pair
  std::vector<P2pPoint> pair_;                         // every point of the current pair
  std::vector<P2pPoint> all_;                          // every point, without samples
  bool multiplePairs_ = false;
  bool havePair_ = false;
  RankPair current_;
};

}  // namespace cb
