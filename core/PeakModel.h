// The peak model: what the hardware under a collective can move, and how close a measurement
// came. One table of link rates with their sources (docs/PEAK.md prints the same table), the
// host-memory traffic model of the collectives, the bound a log's own device lines give, and the
// verdict. In core, as plain data and pure functions, so the engine's reports, the importers and
// the store judge alike; topology/LinkBounds turns a recorded machine into a Bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/Collective.h"

namespace cb {

// One row of the peak table: a link class and generation.
struct LinkPeak {
  std::string_view id;    // "nvlink4", "pcie3", "ib-hdr", ...
  std::string_view name;  // "NVLink4", "PCIe gen3", "InfiniBand HDR"
  // GB/s per direction of one unit: an NVLink link, a PCIe lane, a network port.
  double unitGBps = 0;
  std::string_view unit;  // "link", "lane", "port"
  std::string_view source;
  // Fraction of the bound NCCL's busbw usually reaches, where a public figure exists (0: none).
  double typical = 0;
  std::string_view typicalSource;
};

const std::vector<LinkPeak>& peakTable();
const LinkPeak* findLinkPeak(std::string_view id);

// The bound of one collective on the ranks it ran on: the busbw (GB/s) it cannot pass.
struct Bound {
  double busbw = 0;    // GB/s; 0: no bound known
  std::string limit;   // what bounds it, short: "NVLink4 x18", "host memory"
  std::string basis;   // how it was worked out, one line
  double typical = 0;  // fraction usually reached (0: no public figure)
  std::string typicalSource;
  std::string unknownWhy;  // when busbw == 0
  // One rank: the bound is on algbw (busbw is 0 there for most collectives), see oneRankBound.
  bool onAlgbw = false;
  bool known() const { return busbw > 0; }
  std::string_view figure() const { return onAlgbw ? "algbw" : "busbw"; }
};

// The threshold below which a figure is low: `override` when > 0 (run --expect-fraction), else a
// tenth below the usual fraction (0.9 x typical), else kDefaultExpectedFraction.
inline constexpr double kDefaultExpectedFraction = 0.5;
double expectedFraction(const Bound& b, double override = 0);

// Bandwidth bounds hold where bandwidth dominates: points below this size are not judged.
inline constexpr uint64_t kJudgeMinBytes = 16ull << 20;

// Host memory: the bytes a rank reads plus writes per byte of S (algBytes) in a ring-style
// collective of n ranks through shared memory with the fewest copies (reductions read two
// inputs and write one; a piece received is read once and written once). 0: no model (reduce).
//   allreduce 5(n-1)/n, reduce_scatter 3(n-1)/n, allgather and alltoall 2(n-1)/n,
//   broadcast and sendrecv 2.
double memoryTrafficPerByte(Collective c, int nranks);
// The busbw bound from the copy bandwidth every rank reaches when all copy at once
// (`copyGBpsPerRank`: bytes copied per second per rank; a copy reads and writes each byte, so
// the memory moves twice that): busBwFactor * 2 * copy / traffic.
Bound memoryBound(Collective c, int nranks, double copyGBpsPerRank);

// One rank: nothing crosses a link. Out of place a collective copies S from its send buffer to
// its receive buffer (a reduction of one input is a copy), so its algbw cannot pass the rate the
// rank copies at: `copyGBps`, bytes copied per second (a GPU: its memory bandwidth / 2, since a
// copy reads and writes each byte). In place it moves nothing and is not judged.
Bound oneRankBound(double copyGBps, std::string limit, std::string basis);

// Whether a point has a bound at all: not a one-rank collective in place, which moves nothing.
inline bool judgedPoint(int nranks, bool inPlace) { return nranks != 1 || !inPlace; }
// The figure a point is set against its bound: busbw; with one rank, algbw out of place and
// nothing in place (see oneRankBound). nullopt: the point is not judged.
std::optional<double> judgedFigure(int nranks, bool inPlace, double algbw, double busbw);

// A GPU model's memory bandwidth as its datasheet gives it (GB/s, read + write).
struct GpuMemory {
  double gbps = 0;
  std::string_view name;    // "HBM3"
  std::string_view source;  // the datasheet
};
std::optional<GpuMemory> gpuMemory(std::string_view model);
// The one-rank bound of a GPU of this model (unknown, with the reason, when not in the table).
Bound gpuOneRankBound(std::string_view model);

// What a GPU model name says about its links ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM3-32GB").
struct GpuLinks {
  std::string_view nvlink;  // peak id ("nvlink4"), "" for a PCIe card without NVLink
  int nvlinkLinks = 0;      // links per GPU
  bool nvswitch = false;    // boards of this model with 4+ GPUs sit on NVSwitches
  std::string_view pcie;    // "pcie3" ... of its x16 slot
  bool p2p = true;          // false: the driver does not allow PCIe peer-to-peer (GeForce)
};
std::optional<GpuLinks> gpuLinks(std::string_view model);

// Bound of an NVLink fabric through NVSwitch: the GPU's links x the generation's link rate.
Bound nvlinkBound(std::string_view peakId, int links, bool nvswitch);
// Bound of a PCIe link of `gbps` per direction (0: the generation's x16), `p2p` false: through
// host memory.
Bound pcieBound(std::string_view peakId, int width, bool p2p);
// A network port: "InfiniBand" or "Ethernet" with its rate in Gb/s, shared by `sharers` ranks.
Bound nicBound(std::string_view linkLayer, double rateGbps, int sharers);

// The bound a log's own device lines give: `gpus` GPUs of one model on `nodes` nodes.
Bound deviceLinesBound(std::string_view gpuModel, int gpus, int nodes);

struct Verdict {
  enum class Kind { kNormal, kLow, kNoBound, kNotJudged };
  Kind kind = Kind::kNotJudged;
  double best = 0;     // best busbw (GB/s) among judged points
  uint64_t bytes = 0;  // where
  double fraction = 0;
  double expected = 0;
  std::string_view figure = "busbw";  // what `best` is ("algbw" for one rank)
  std::string line;  // "normal: 82% of ..." / "low: 41% of ..." / "no bound known ..."
};
std::string_view verdictKindName(Verdict::Kind k);  // normal, low, no-bound, not-judged

// Judges the best figure among points at kJudgeMinBytes and up (`points`: bytes, busbw, or
// algbw where the bound is onAlgbw; see judgedFigure).
Verdict judge(const std::vector<std::pair<uint64_t, double>>& points, const Bound& b,
              double expectedOverride = 0);

// "best 369.02 GB/s busbw: normal: 82% of ..." (the line alone when nothing was judged).
std::string verdictText(const Verdict& v);

// "82%" of a figure (judgedFigure) against the bound, "" when the bound is unknown.
std::string percentOfPeak(double figure, double peak);

}  // namespace cb
