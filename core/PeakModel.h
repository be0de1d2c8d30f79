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
  // Memory bounds only. The bytes of the ranks' buffers per byte of S, over all ranks, out of
  // place (workingSetPerByte), and the last-level cache they share (cacheBytes, 0: unknown;
  // cacheName "480 MiB L3"): a point whose buffers fit that cache never reaches memory, so the
  // memory bound does not apply to it (cacheResident).
  double workingSetPerByte = 0;
  uint64_t cacheBytes = 0;
  std::string cacheName;
  // The bound is a measured rate (the host's copy), which varies by a few percent between probes.
  bool measured = false;
  // An NVSwitch fabric that can reduce in the switch (NVLS: NVLink4 and later).
  bool nvls = false;
  // Why a figure may pass the bound ("" none), e.g. NVLS: see withCollective.
  std::string passReason;
  bool known() const { return busbw > 0; }
  std::string_view figure() const { return onAlgbw ? "algbw" : "busbw"; }
  uint64_t workingSet(uint64_t bytes) const {
    return static_cast<uint64_t>(workingSetPerByte * static_cast<double>(bytes));
  }
  bool cacheResident(uint64_t bytes) const {
    return cacheBytes > 0 && workingSetPerByte > 0 && workingSet(bytes) <= cacheBytes;
  }
};

// A memory bound's last-level cache: `bytes` over the caches the ranks can use ("480 MiB L3").
void setCache(Bound& b, uint64_t bytes, std::string_view level = "L3");
// What the collective adds to a bound: the reason a figure can pass it. NVLS (NVLink SHARP,
// NVSwitch gen3 and later: NVLink4 and 5 fabrics) reduces an allreduce in the switch, so each byte
// crosses a GPU's links once each way while busbw counts 2(n-1)/n of it.
Bound withCollective(Bound b, Collective c);

// A figure this much above a measured bound is within the probe's own spread (fastest of 10
// copies against a collective's median); above it, or above any datasheet bound, the verdict
// needs a reason (docs/PEAK.md "Bounds that bound").
inline constexpr double kMeasuredBoundSlack = 1.10;
// A working set up to this many times the cache still keeps part of itself there: a figure above
// the bound at such a size has that reason.
inline constexpr double kPartlyCachedFactor = 2;

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
// The bytes of send and receive buffers per byte of S on one rank, out of place (allreduce,
// alltoall, broadcast, sendrecv 2; allgather and reduce_scatter 1 + 1/n).
double buffersPerByte(Collective c, int nranks);
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
  // kAboveBound: a figure above its bound with no reason the model knows; the bound or the
  // figure is wrong, and the verdict says so rather than "normal".
  enum class Kind { kNormal, kLow, kNoBound, kNotJudged, kAboveBound };
  Kind kind = Kind::kNotJudged;
  double best = 0;     // best busbw (GB/s) among judged points
  uint64_t bytes = 0;  // where
  double fraction = 0;
  double expected = 0;
  std::string_view figure = "busbw";  // what `best` is ("algbw" for one rank)
  std::string line;  // "normal: 82% of ..." / "low: 41% of ..." / "no bound known ..."
};
// normal, low, no-bound, not-judged, above-bound
std::string_view verdictKindName(Verdict::Kind k);

// Judges the best figure among points at kJudgeMinBytes and up (`points`: bytes, busbw, or
// algbw where the bound is onAlgbw; see judgedFigure). Points whose buffers fit the bound's cache
// are left out (cache-resident); a best figure above the bound names its reason (the bound's
// passReason, a working set partly in the cache, a measured bound's slack) or is kAboveBound.
Verdict judge(const std::vector<std::pair<uint64_t, double>>& points, const Bound& b,
              double expectedOverride = 0);

// "best 369.02 GB/s busbw: normal: 82% of ..." (the line alone when nothing was judged).
std::string verdictText(const Verdict& v);

// "82%" of a figure (judgedFigure) against the bound, "" when the bound is unknown.
std::string percentOfPeak(double figure, double peak);

}  // namespace cb
