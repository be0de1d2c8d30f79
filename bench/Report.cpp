#include "bench/Report.h"

#include <fmt/format.h>
#include <fmt/printf.h>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/Error.h"
#include "core/OutputFile.h"
#include "core/PeakModel.h"
#include "core/Text.h"

namespace cb {

void TextOut::write(std::string_view text) const {
  if (str_) {
    str_->append(text);
  } else if (file_) {
    std::fwrite(text.data(), 1, text.size(), file_);
    std::fflush(file_);
  }
}

std::string_view ncclTestsBinaryName(Collective c) {
  static constexpr std::string_view kNames[] = {
      "all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "broadcast_perf",
      "reduce_perf",     "alltoall_perf",   "sendrecv_perf"};
  return kNames[static_cast<size_t>(c)];
}

std::string ncclTestsTime(double us) {
  // nccl-tests' BenchTime(): the precision drops as the time grows so the column stays 7 wide.
  if (us >= 10000.0) return fmt::sprintf("%7.0f", us);
  if (us >= 100.0) return fmt::sprintf("%7.1f", us);
  return fmt::sprintf("%7.2f", us);
}

// --- NcclTestsTable --------------------------------------------------------------------------

bool printsRedOp(Collective c) {
  return c != Collective::kAllGather && c != Collective::kBroadcast && c != Collective::kAllToAll;
}

bool ncclTestsPrintable(const ResultRecord& p) {
  try {
    // The tests without an op print "none" whatever the record holds.
    if (printsRedOp(parseCollective(p.collective))) parseRedOp(p.op);
    parseDataType(p.dtype);
  } catch (const UsageError&) {
    return false;
  }
  return true;
}

namespace {

bool measured(const ResultRecord* p) { return p && p->ok(); }

// A stored point's typed collective; what the table options and side-by-side titles need.
Collective collectiveOf(const ResultRecord& p) { return parseCollective(p.collective); }

}  // namespace

NcclTestsTable::NcclTestsTable(Collective coll, TextOut out, NcclTestsTableOptions o)
    : coll_(coll), out_(out), expectOut_(o.outOfPlace), expectIn_(o.inPlace) {}

void NcclTestsTable::writeHeader() {
  if (headerWritten_) return;
  headerWritten_ = true;
  // The format strings of nccl-tests (src/common.cu, 2022+), trailing spaces included.
  std::string h = fmt::sprintf(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
      "\n",
      "", "", "", "", "");
  h += fmt::sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
                    "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                    "algbw", "busbw", "#wrong");
  h += fmt::sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
                    "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                    "(GB/s)", "");
  out_.write(h);
}

bool NcclTestsTable::complete(const Pending& p) const {
  if (!expectOut_ && !expectIn_) return p.out || p.in;
  return (!expectOut_ || p.out) && (!expectIn_ || p.in);
}

void NcclTestsTable::add(const ResultRecord& p) {
  writeHeader();
  const bool out = p.placement != "in";
  // The row of this size that still lacks this placement, or a new row (a repeated sweep, -N,
  // measures the same sizes again).
  auto same = [&](const Pending& r) {
    const auto& slot = out ? r.out : r.in;
    return !slot && r.dtype == p.dtype && r.op == p.op && r.root == p.root &&
           r.bytes == p.sizeBytes && r.count == p.count;
  };
  auto it = std::find_if(pending_.begin(), pending_.end(), same);
  if (it == pending_.end()) {
    pending_.push_back(Pending{p.dtype, p.op, p.root, p.sizeBytes, p.count, nullptr, nullptr});
    it = pending_.end() - 1;
  }
  (out ? it->out : it->in) = std::make_unique<ResultRecord>(p);
  // Rows go out in arrival order: a completed row waits for the rows before it.
  while (!pending_.empty() && complete(pending_.front())) {
    writeRow(pending_.front());
    pending_.pop_front();
  }
}

void NcclTestsTable::flush() {
  while (!pending_.empty()) {
    writeRow(pending_.front());
    pending_.pop_front();
  }
}

std::string NcclTestsTable::placementColumns(const ResultRecord* p) {
  if (!measured(p)) return fmt::sprintf("  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
  const double algbw = p->algbw.value_or(0), busbw = p->busbw.value_or(0);
  busBwSum_ += busbw;
  ++busBwCount_;
  if (p->wrong > 0) ++outOfBounds_;
  std::string s = fmt::sprintf("  %7s  %6.2f  %6.2f", ncclTestsTime(p->timeKnown ? p->timeUs : 0),
                               algbw, busbw);
  if (!p->wrong) return s + fmt::sprintf("  %5s", "N/A");
  return s + fmt::sprintf("  %5g", static_cast<double>(*p->wrong));
}

void NcclTestsTable::writeRow(const Pending& r) {
  // sendrecv's test prints the op it was given (sum unless -o), though its record says none.
  std::string op = !printsRedOp(coll_) ? "none" : r.op == "none" ? "sum" : r.op;
  int root = hasRoot(coll_) ? r.root.value_or(-1) : -1;
  std::string line = fmt::sprintf("%12li  %12li  %8s  %6s  %6i", static_cast<long>(r.bytes),
                                  static_cast<long>(r.count.value_or(0)), r.dtype, op, root);
  line += placementColumns(r.out.get());
  line += placementColumns(r.in.get());
  line += '\n';
  // Why a row is N/A: '#' lines, which nccl-tests parsers skip.
  for (const ResultRecord* p : {r.out.get(), r.in.get()}) {
    if (p && p->status == ResultStatus::kFailed) {
      line += fmt::format("#   failed ({}): {}\n", p->placement, p->message);
    }
  }
  out_.write(line);
  ++rows_;
}

void NcclTestsTable::finish() {
  writeHeader();
  flush();
  out_.write(fmt::sprintf("# Out of bounds values : %d %s\n", outOfBounds_,
                          outOfBounds_ ? "FAILED" : "OK"));
  out_.write(fmt::sprintf("# Avg bus bandwidth    : %g \n#\n", averageBusBw()));
}

// --- SideBySideTable -------------------------------------------------------------------------

SideMetric parseSideMetric(std::string_view s) {
  if (s == "busbw") return SideMetric::kBusBw;
  if (s == "time") return SideMetric::kTime;
  throw UsageError(fmt::format("side-by-side metric '{}' is not one of busbw, time", s));
}

namespace {

// The time the table shows and ranks by, in us; 0 when not timed.
double shownTime(const ResultRecord& p) { return p.timeKnown ? p.timeUs : 0; }

bool validForRanking(const ResultRecord& p) {
  return p.ok() && p.wrong.value_or(0) <= 0 && shownTime(p) > 0;
}

// The memcpy reference (run --reference) is shown for comparison but never wins.
bool competes(const ResultRecord& p) { return validForRanking(p) && p.variant != "memcpy"; }

// The interquartile range of a point's iteration times, widened to hold its statistic; just the
// statistic when there are too few samples for quartiles.
std::pair<double, double> spread(const ResultRecord& p) {
  const double t = shownTime(p);
  if (p.samplesUs.size() < 4) return {t, t};
  return {std::min(t, percentile(p.samplesUs, 0.25)), std::max(t, percentile(p.samplesUs, 0.75))};
}

bool matchesVariant(const std::string& label, const std::string& name) {
  return label == name || (label.size() > name.size() && label.compare(0, name.size(), name) == 0 &&
                           label[name.size()] == '/');
}

}  // namespace

void SideBySideTable::add(const ResultRecord& p) {
  if (p.placement != placementName(placement_)) return;
  if (std::find(variants_.begin(), variants_.end(), p.variant) == variants_.end()) {
    variants_.push_back(p.variant);
  }
  if (std::find(sizes_.begin(), sizes_.end(), p.sizeBytes) == sizes_.end()) {
    sizes_.push_back(p.sizeBytes);
  }
  cells_.insert_or_assign({p.sizeBytes, p.variant}, p);
}

std::vector<bool> SideBySideTable::fastest(uint64_t bytes) const {
  std::vector<bool> out(variants_.size(), false);
  if (bytes == 0) return out;  // nothing moved: no winner
  int best = -1;
  for (size_t i = 0; i < variants_.size(); ++i) {
    auto it = cells_.find({bytes, variants_[i]});
    if (it == cells_.end() || !competes(it->second)) continue;
    if (best < 0 || shownTime(it->second) < shownTime(cells_.at({bytes, variants_[best]}))) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0) return out;
  // The winner's slow quartile must beat every other variant's fast quartile.
  const double bestHigh = spread(cells_.at({bytes, variants_[best]})).second;
  for (size_t i = 0; i < variants_.size(); ++i) {
    auto it = cells_.find({bytes, variants_[i]});
    if (static_cast<int>(i) == best || it == cells_.end() || !competes(it->second)) continue;
    if (spread(it->second).first <= bestHigh) return out;
  }
  out[best] = true;
  return out;
}

int SideBySideTable::baselineIndex() const {
  if (baseline_.empty()) return -1;
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (matchesVariant(variants_[i], baseline_)) return static_cast<int>(i);
  }
  return -1;
}

std::string SideBySideTable::ratioTable(const std::vector<bool>& shown,
                                        const std::vector<size_t>& width) const {
  const int base = baselineIndex();
  if (base < 0) return "";
  std::string text =
      fmt::format("# relative to {}: its time / the variant's time (above 1.00x: faster than {})\n",
                  variants_[base], variants_[base]);
  text += fmt::format("# {:>10}", "size");
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (shown[i] && static_cast<int>(i) != base)
      text += fmt::format("  {:>{}} ", variants_[i], width[i]);
  }
  text += '\n';
  bool any = false;
  for (uint64_t b : sizes_) {
    auto ref = cells_.find({b, variants_[base]});
    const bool haveRef = ref != cells_.end() && validForRanking(ref->second);
    text += fmt::format("{:>12}", b);
    for (size_t i = 0; i < variants_.size(); ++i) {
      if (!shown[i] || static_cast<int>(i) == base) continue;
      auto it = cells_.find({b, variants_[i]});
      std::string cell = "-";
      if (haveRef && it != cells_.end() && validForRanking(it->second)) {
        cell = fmt::format("{:.2f}x", shownTime(ref->second) / shownTime(it->second));
        any = true;
      }
      text += fmt::format("  {:>{}} ", cell, width[i]);
    }
    text += '\n';
  }
  return any ? text + "#\n" : "";
}

bool SideBySideTable::anyMeasured() const {
  return std::any_of(cells_.begin(), cells_.end(),
                     [](const auto& c) { return validForRanking(c.second); });
}

std::vector<int> SideBySideTable::wins() const {
  std::vector<int> w(variants_.size(), 0);
  for (uint64_t b : sizes_) {
    auto f = fastest(b);
    for (size_t i = 0; i < f.size(); ++i) w[i] += f[i] ? 1 : 0;
  }
  return w;
}

void SideBySideTable::write(TextOut out) const {
  if (sizes_.empty()) return;
  const ResultRecord& any = cells_.begin()->second;
  std::string title = fmt::format(
      "# side by side: {} {}{}, {}, {} ranks: {}; * = fastest beyond the spread (interquartile "
      "ranges apart){}\n",
      any.collective, any.dtype, hasReduction(collectiveOf(any)) ? " " + any.op : "",
      placement_ == Placement::kOut ? "out-of-place" : "in-place", any.nranks.value_or(0),
      metric_ == SideMetric::kBusBw ? "busbw (GB/s)" : "time (us)",
      std::find(variants_.begin(), variants_.end(), "memcpy") != variants_.end()
          ? "; memcpy = the copy reference, not ranked"
          : "");
  // Variants that can't run here at any size get no column (the nccl-tests section already
  // says why in one line): the view is about what was measured.
  std::vector<bool> shown;
  for (const auto& v : variants_) {
    bool measured = false;
    for (uint64_t b : sizes_) {
      auto it = cells_.find({b, v});
      if (it != cells_.end() && it->second.status != ResultStatus::kUnsupported) measured = true;
    }
    shown.push_back(measured);
  }
  std::vector<size_t> width;
  for (const auto& v : variants_) width.push_back(std::max<size_t>(v.size(), 9));
  std::string text = title + fmt::format("# {:>10}", "size");
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (shown[i]) text += fmt::format("  {:>{}} ", variants_[i], width[i]);
  }
  text += '\n';
  for (uint64_t b : sizes_) {
    auto f = fastest(b);
    text += fmt::format("{:>12}", b);
    for (size_t i = 0; i < variants_.size(); ++i) {
      if (!shown[i]) continue;
      auto it = cells_.find({b, variants_[i]});
      std::string cell;
      if (it == cells_.end()) {
        cell = "-";
      } else if (it->second.status == ResultStatus::kUnsupported) {
        cell = "unsup";
      } else if (!it->second.ok()) {
        cell = "failed";
      } else if (it->second.wrong > 0) {
        cell = "WRONG";
      } else if (metric_ == SideMetric::kBusBw) {
        // Two decimals as nccl-tests, four below 1 GB/s so small sizes still compare.
        double bw = it->second.busbw.value_or(0);
        cell = bw >= 1 ? fmt::format("{:.2f}", bw) : fmt::format("{:.4f}", bw);
      } else {
        cell = std::string(trim(ncclTestsTime(shownTime(it->second))));
      }
      text += fmt::format("  {:>{}}{}", cell, width[i], f[i] ? '*' : ' ');
    }
    text += '\n';
  }
  auto w = wins();
  text += fmt::format("# {:>10}", "wins");
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (shown[i]) text += fmt::format("  {:>{}} ", w[i], width[i]);
  }
  text += "\n#\n";
  text += ratioTable(shown, width);
  out.write(text);
}

// --- JSON and CSV -----------------------------------------------------------------------------

namespace {

nlohmann::json orNull(bool known, double v) { return known ? nlohmann::json(v) : nlohmann::json(); }
template <class T>
nlohmann::json orNull(bool known, const std::optional<T>& v) {
  return known && v ? nlohmann::json(*v) : nlohmann::json();
}

// The share of the hardware bound the point reached (bench/Peak.h's figure), when both known.
std::optional<double> pctOfPeak(const ResultRecord& p) {
  if (!p.measured() || !(p.peakGBps > 0)) return std::nullopt;
  const auto figure = judgedFigure(p.nranks.value_or(0), p.placement == "in", p.algbw.value_or(0),
                                   p.busbw.value_or(0));
  if (!figure) return std::nullopt;
  return 100 * *figure / *p.peakGBps;
}

// What a point does not know is null (JSON) or an empty field (CSV), as in the database and
// `export`: no root, not checked, or no time at all (an unsupported or failed point).
nlohmann::json pointToJson(const ResultRecord& p) {
  const bool m = p.measured();
  nlohmann::json j;
  j["collective"] = p.collective;
  j["variant"] = p.variant;
  j["dtype"] = p.dtype;
  j["op"] = p.op;
  j["root"] = orNull(true, p.root);
  j["bytes"] = p.sizeBytes;
  j["count"] = orNull(true, p.count);
  j["placement"] = p.placement;
  j["nranks"] = orNull(true, p.nranks);
  j["status"] = resultStatusName(p.status);
  j["message"] = p.message;
  j["iterations"] = p.iterations.value_or(0);
  j["time_us"] = orNull(m && p.timeKnown, p.timeUs);
  j["algbw_gbps"] = orNull(m, p.algbw);
  j["busbw_gbps"] = orNull(m, p.busbw);
  j["wrong"] = orNull(true, p.wrong);
  j["peak_gbps"] = orNull(p.peakGBps > 0, p.peakGBps);
  j["peak_limit"] = p.peakLimit;
  j["pct_of_peak"] = orNull(true, pctOfPeak(p));
  const bool hasSummary = m && !p.samplesUs.empty();
  j["summary_us"] = {{"n", p.samplesUs.size()},
                     {"median", orNull(hasSummary && p.medianKnown, p.medianUs)},
                     {"mean", orNull(hasSummary, p.meanUs)},
                     {"min", orNull(hasSummary, p.minUs)},
                     {"max", orNull(hasSummary, p.maxUs)},
                     {"p99", orNull(hasSummary, p.p99Us)},
                     {"stddev", orNull(hasSummary, p.stddevUs)},
                     {"cv", orNull(hasSummary, p.cv)}};
  j["samples_us"] = p.samplesUs;
  // rankSamplesUs is rank-major (nranks x iterations): one array per rank.
  nlohmann::json ranks = nlohmann::json::array();
  const auto& rs = p.rankSamplesUs;
  const size_t n = static_cast<size_t>(std::max(p.nranks.value_or(0), 0));
  if (n > 0 && !rs.empty() && rs.size() % n == 0) {
    const size_t per = rs.size() / n;
    for (size_t r = 0; r < n; ++r) {
      ranks.push_back(std::vector<double>(rs.begin() + static_cast<std::ptrdiff_t>(r * per),
                                          rs.begin() + static_cast<std::ptrdiff_t>((r + 1) * per)));
    }
  } else if (!rs.empty()) {
    ranks.push_back(rs);
  }
  j["rank_samples_us"] = std::move(ranks);
  return j;
}

}  // namespace

std::string resultsToJson(const std::map<std::string, std::string>& header,
                          const std::vector<ResultRecord>& points) {
  nlohmann::json j;
  j["format"] = "collbench-results";
  // 2: unknown values are null (version 1 wrote -1 and 0 for them).
  j["version"] = 2;
  j["header"] = header;
  j["points"] = nlohmann::json::array();
  for (const auto& p : points) j["points"].push_back(pointToJson(p));
  return j.dump(1) + "\n";
}

std::string resultsToCsv(const std::vector<ResultRecord>& points) {
  std::string out =
      "collective,variant,dtype,op,root,bytes,count,placement,nranks,status,iterations,time_us,"
      "algbw_gbps,busbw_gbps,wrong,median_us,mean_us,min_us,max_us,p99_us,stddev_us,cv,peak_gbps,"
      "pct_of_peak,message\n";
  auto field = [](bool known, const auto& v) {
    if constexpr (requires { v.has_value(); }) {
      return known && v ? fmt::format("{}", *v) : std::string();
    } else {
      return known ? fmt::format("{}", v) : std::string();
    }
  };
  for (const auto& p : points) {
    const bool m = p.measured();
    const bool hs = m && !p.samplesUs.empty();
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        p.collective, csvField(p.variant), p.dtype, p.op, field(true, p.root), p.sizeBytes,
        field(true, p.count), p.placement, field(true, p.nranks),
        csvField(std::string(resultStatusName(p.status))), p.iterations.value_or(0),
        field(m && p.timeKnown, p.timeUs), field(m, p.algbw), field(m, p.busbw),
        field(true, p.wrong), field(hs && p.medianKnown, p.medianUs), field(hs, p.meanUs),
        field(hs, p.minUs), field(hs, p.maxUs), field(hs, p.p99Us), field(hs, p.stddevUs),
        field(hs, p.cv), field(true, p.peakGBps), field(true, pctOfPeak(p)), csvField(p.message));
  }
  return out;
}

void writeJsonFile(const std::string& path, const std::map<std::string, std::string>& header,
                   const std::vector<ResultRecord>& points) {
  writeOutputFile(path, resultsToJson(header, points), "--json");
}

void writeCsvFile(const std::string& path, const std::vector<ResultRecord>& points) {
  writeOutputFile(path, resultsToCsv(points), "--csv");
}

// --- ReportSet ---------------------------------------------------------------------------------

// One variant's nccl-tests table; the first variant of a collective writes straight to the
// stream, the others into `held` until the collective is complete.
struct ReportSet::VariantTable {
  std::string variant;
  std::string held;
  bool live;
  NcclTestsTable table;
  VariantTable(std::string v, Collective c, std::FILE* out, bool isLive, NcclTestsTableOptions o)
      : variant(std::move(v)), live(isLive), table(c, isLive ? TextOut(out) : TextOut(&held), o) {}
};

ReportSet::ReportSet(std::FILE* out, std::string_view format, std::string_view sideMetric,
                     int nranks, NcclTestsTableOptions placements)
    : out_(out),
      enabled_(format != "none"),
      sideBySide_(format == "collbench"),
      metric_(parseSideMetric(sideMetric)),
      nranks_(nranks),
      placements_(placements) {
  if (format != "collbench" && format != "nccl-tests" && format != "none") {
    throw UsageError(fmt::format("format '{}' is not one of collbench, nccl-tests, none", format));
  }
}

ReportSet::~ReportSet() = default;

void ReportSet::add(const ResultRecord& p) {
  if (!enabled_) return;
  const Collective coll = collectiveOf(p);
  if (haveCollective_ && coll != coll_) closeCollective();
  haveCollective_ = true;
  coll_ = coll;
  if (sideBySide_) {
    if (!sideOut_) {
      sideOut_ = std::make_unique<SideBySideTable>(Placement::kOut, metric_, sideBaseline_);
    }
    if (!sideIn_) {
      sideIn_ = std::make_unique<SideBySideTable>(Placement::kIn, metric_, sideBaseline_);
    }
    sideOut_->add(p);
    sideIn_->add(p);
  }
  auto it = std::find_if(tables_.begin(), tables_.end(),
                         [&](const auto& t) { return t->variant == p.variant; });
  // A variant that can't run here gets one line instead of a table of N/A, unless it runs at
  // some size after all: then its table starts with the points held so far.
  auto held = std::find_if(unsupported_.begin(), unsupported_.end(),
                           [&](const auto& u) { return u.first == p.variant; });
  if (it == tables_.end() && p.status == ResultStatus::kUnsupported) {
    if (held == unsupported_.end()) {
      unsupported_.emplace_back(p.variant, std::vector<ResultRecord>{});
      held = unsupported_.end() - 1;
    }
    held->second.push_back(p);
    return;
  }
  if (it == tables_.end()) {
    bool live = tables_.empty();
    if (live && sideBySide_ && !toldHeld_) {
      // Say once why the output pauses: only the first variant's table can stream.
      TextOut(out_).write(fmt::format(
          "# (the first variant's table streams; the other variants' tables and the side-by-side "
          "views print when each collective is complete)\n"));
      toldHeld_ = true;
    }
    NcclTestsTableOptions o = placements_;
    // The sweep measures no in-place alltoall or sendrecv; a replayed log may hold them.
    o.inPlace = o.inPlace && (o.asGiven || hasInPlace(coll_));
    tables_.push_back(std::make_unique<VariantTable>(p.variant, coll_, out_, live, o));
    // '#' lines, so nccl-tests parsers skip them; one "test" per variant, as in nccl-tests logs
    // that hold several tests.
    TextOut to = live ? TextOut(out_) : TextOut(&tables_.back()->held);
    to.write(fmt::format("# Collective test starting: {}\n# Variant: {}  ({} ranks)\n",
                         ncclTestsBinaryName(coll_), p.variant, nranks_));
    it = tables_.end() - 1;
    if (held != unsupported_.end()) {
      for (const auto& q : held->second) (*it)->table.add(q);
      unsupported_.erase(held);
    }
  }
  (*it)->table.add(p);
}

void ReportSet::endGroup() {
  if (!enabled_) return;
  // Every point of the group is in: rows still waiting for a placement never get it.
  for (auto& t : tables_) t->table.flush();
  if (sideBySide_) {
    for (auto* side : {sideOut_.get(), sideIn_.get()}) {
      if (side && side->variantCount() > 1 && side->anyMeasured()) {
        side->write(TextOut(&sideHeld_));
      }
    }
  }
  sideOut_.reset();
  sideIn_.reset();
}

void ReportSet::closeCollective() {
  if (!haveCollective_) return;
  endGroup();  // a sweep cut short (interrupt) may not have ended its group
  TextOut out(out_);
  for (auto& t : tables_) {
    t->table.finish();
    if (!t->live) out.write(t->held);
    out.write(fmt::format("# Collective test concluded: {}\n\n", ncclTestsBinaryName(coll_)));
  }
  for (const auto& [variant, points] : unsupported_) {
    out.write(
        fmt::format("# Variant: {}  unsupported here: {}\n", variant,
                    points.front().message.empty() ? "(no reason given)" : points.front().message));
  }
  if (!unsupported_.empty()) out.write("\n");
  unsupported_.clear();
  out.write(sideHeld_);
  sideHeld_.clear();
  tables_.clear();
  haveCollective_ = false;
}

void ReportSet::finish(const SweepSummary& summary) {
  if (!enabled_) return;
  closeCollective();
  if (sideBySide_) {
    TextOut(out_).write(
        fmt::format("# {} points: {} unsupported, {} failed, {} wrong element(s){}\n",
                    summary.points, summary.unsupported, summary.failed, summary.wrongTotal,
                    summary.interrupted ? ", interrupted" : ""));
  }
}

}  // namespace cb
