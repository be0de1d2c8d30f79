#include "adapters/ReplayRecords.h"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>

namespace cb {

using namespace cb::replay;

namespace {

std::string variantOf(const ReplayTimes& t, OpKind k) {
  return t.variants.count(k) ? t.variants.at(k) : "?";
}

ResultRecord rowRecord(const ReplayRow& r, const ReplayTimes& t, Statistic stat, int iterations,
                       int64_t runId) {
  ResultRecord rec;
  rec.runId = runId;
  rec.collective = fmt::format("replay-{}", opKindName(r.kind));
  rec.variant = replayRowVariant(variantOf(t, r.kind), r.group);
  rec.dtype = std::string(dataTypeName(r.dtype));
  rec.op =
      r.kind == OpKind::kAllReduce || r.kind == OpKind::kReduceScatter || r.kind == OpKind::kReduce
          ? "sum"
          : "none";
  rec.sizeBytes = r.bytes;
  rec.count = r.count;
  rec.placement = "out";  // replay buffers are out of place
  rec.nranks = r.nranks;
  rec.algbw = r.algbw;
  rec.busbw = r.busbw;
  setTiming(rec, r.summary, r.timeSeconds, iterations, stat, r.samples, {});
  return rec;
}

ResultRecord totalRecord(const TraceSet& set, const ReplaySummary& sum, const ReplayTimes& t,
                         Statistic stat, int iterations, int64_t runId) {
  ResultRecord total;
  total.runId = runId;
  total.collective = "replay-total";
  std::string variants;
  for (const auto& [k, name] : t.variants) {
    if (variants.find(name) == std::string::npos)
      if (!variants.empty()) variants += '+';
    variants += name;
  }
  total.variant = variants;
  total.dtype = "";
  total.op = "none";
  total.sizeBytes = sum.bytesPerReplay;
  total.placement = "out";
  total.nranks = static_cast<int>(set.ranks.size());
  if (t.wrong >= 0) total.wrong = t.wrong;
  const double tt = pick(sum.comm, stat);
  if (tt > 0) total.algbw = total.busbw = sum.bytesPerReplay / tt / 1e9;
  setTiming(total, sum.comm, tt, iterations, stat, sum.commSamples, {});
  return total;
}

nlohmann::json rowsJson(const ReplaySummary& sum) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : sum.rows) {
    nlohmann::json x{{"op", opKindName(r.kind)},       {"group", r.group},
                     {"dtype", dataTypeName(r.dtype)}, {"bytes", r.bytes},
                     {"instances", r.instances},       {"time_us", r.timeSeconds * 1e6}};
    if (r.recordedUs >= 0) {
      x["recorded_us"] = r.recordedUs;
      x["ratio"] = r.timeSeconds * 1e6 / r.recordedUs;
    }
    rows.push_back(x);
  }
  return rows;
}

// Every rank's first timed replay, op by op ([rank][op] us), and the same laid end to end as the
// report's timeline (results/HtmlReplay.cpp).
void addFirstIteration(nlohmann::json& d, const TraceSet& set, const ReplayTimes& t) {
  nlohmann::json tl = nlohmann::json::array();
  nlohmann::json timeline = nlohmann::json::array();
  for (size_t r = 0; r < t.op.size(); ++r) {
    nlohmann::json ops = nlohmann::json::array();
    nlohmann::json lane = nlohmann::json::array();
    const std::vector<CommOp>& traced = set.ranks.at(r).ops;
    double at = 0;
    for (size_t i = 0; i < t.op[r].size(); ++i) {
      const double us = t.op[r][i].empty() ? 0 : t.op[r][i][0] * 1e6;
      ops.push_back(us);
      const std::string name =
          i < traced.size() ? fmt::format("{} {} B", opKindName(traced[i].kind), traced[i].bytes())
                            : fmt::format("op {}", i);
      lane.push_back({{"lane", "comm"}, {"name", name}, {"start_us", at}, {"end_us", at + us}});
      at += us;
    }
    tl.push_back(ops);
    timeline.push_back(lane);
  }
  d["op_us_first_iteration"] = tl;
  d["timeline"] = timeline;
}

}  // namespace

std::string replayRowVariant(const std::string& variant, const std::string& group) {
  return group.empty() ? variant : fmt::format("{}@pg{}", variant, group);
}

void printReplayDryRun(std::FILE* out, const TraceSet& set, int world, bool allRanks) {
  for (const auto& n : set.notes) std::fprintf(out, "# %s\n", n.c_str());
  std::fprintf(out, "# trace %s (%s), %d rank trace(s), replayed on %d ranks\n", set.name.c_str(),
               set.hash.c_str(), set.recordedRanks, world);
  printOpTable(out, set, allRanks);
}

std::vector<std::string> replayHeaderLines(const TraceSet& set, const ReplayOptions& o,
                                           const std::string& gaps) {
  std::vector<std::string> lines{
      fmt::format("# replay {} ({}, {}), {} rank trace(s) on {} ranks, -n {} -w {} -c {}, "
                  "--gaps {}{}",
                  set.name, set.ranks[0].format, set.hash, set.recordedRanks, set.ranks.size(),
                  o.iterations, o.warmup, o.checkRounds, gaps, o.syncOps ? ", --sync" : "")};
  for (const auto& n : set.notes) lines.push_back("# " + n);
  return lines;
}

std::string replaySummaryText(const ReplaySummary& sum, const ReplayTimes& t, Statistic stat) {
  std::string s;
  auto out = std::back_inserter(s);
  fmt::format_to(out,
                 "# per op kind and size: time = {} over instances x iterations of the slowest "
                 "member (send/recv: each rank's own)\n",
                 statisticName(stat));
  fmt::format_to(out, "{:<14} {:<8} {:<9} {:>12} {:>5} {:>5} {:>12} {:>9} {:>9} {:>13} {:>7}  {}\n",
                 "op", "group", "dtype", "bytes", "n", "inst", "time_us", "algbw", "busbw",
                 "recorded_us", "ratio", "variant");
  for (const auto& r : sum.rows) {
    fmt::format_to(
        out, "{:<14} {:<8} {:<9} {:>12} {:>5} {:>5} {:>12.2f} {:>9.3f} {:>9.3f} {:>13} {:>7}  {}\n",
        opKindName(r.kind), r.group.empty() ? "world" : r.group, dataTypeName(r.dtype), r.bytes,
        r.nranks, r.instances, r.timeSeconds * 1e6, r.algbw, r.busbw,
        r.recordedUs >= 0 ? fmt::format("{:.1f}", r.recordedUs) : "-",
        r.recordedUs > 0 ? fmt::format("{:.2f}", r.timeSeconds * 1e6 / r.recordedUs) : "-",
        variantOf(t, r.kind));
  }
  fmt::format_to(out,
                 "# per replay: communication {:.1f} us (median; min {:.1f}, max {:.1f}) of the "
                 "slowest rank, {} B over all ranks",
                 sum.comm.median * 1e6, sum.comm.min * 1e6, sum.comm.max * 1e6, sum.bytesPerReplay);
  if (sum.recordedCommUs >= 0) {
    fmt::format_to(out, "; recorded on rank 0: {:.1f} us (ratio {:.2f})", sum.recordedCommUs,
                   sum.comm.median * 1e6 / sum.recordedCommUs);
  }
  const Summary wall = summarize(sum.wallSamples);
  fmt::format_to(out, "; wall {:.1f} us with gaps\n", wall.median * 1e6);
  if (t.wrong >= 0) fmt::format_to(out, "# verified once: {} wrong element(s)\n", t.wrong);
  return s;
}

std::vector<ResultRecord> replayRecords(const TraceSet& set, const ReplaySummary& sum,
                                        const ReplayTimes& t, Statistic stat, int iterations,
                                        int64_t runId) {
  std::vector<ResultRecord> records;
  for (const auto& r : sum.rows) records.push_back(rowRecord(r, t, stat, iterations, runId));
  records.push_back(totalRecord(set, sum, t, stat, iterations, runId));
  return records;
}

ReplayDetail replayDetail(const TraceSet& set, const ReplaySummary& sum, const ReplayTimes& t,
                          const std::string& gaps, int iterations, bool forFile) {
  nlohmann::json d;
  d["trace"] = set.name;
  d["hash"] = set.hash;
  // The document names itself as run --json's does; the trace's own format is trace_format.
  d["format"] = "collbench-replay";
  d["version"] = 1;
  d["trace_format"] = set.ranks.at(0).format;
  d["recorded_ranks"] = set.recordedRanks;
  d["ranks"] = set.ranks.size();
  d["notes"] = set.notes;
  d["gaps"] = gaps;
  d["iterations"] = iterations;
  nlohmann::json v = nlohmann::json::object();
  for (const auto& [k, name] : t.variants) v[std::string(opKindName(k))] = name;
  d["variants"] = v;
  d["comm_us_median"] = sum.comm.median * 1e6;
  if (sum.recordedCommUs >= 0) d["recorded_comm_us_rank0"] = sum.recordedCommUs;
  d["rows"] = rowsJson(sum);
  addFirstIteration(d, set, t);
  ReplayDetail out;
  out.stored = d.dump();
  if (forFile) out.file = d.dump(2) + "\n";
  return out;
}

}  // namespace cb
