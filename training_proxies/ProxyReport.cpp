#include "training_proxies/ProxyReport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/PeakModel.h"
#include "core/Size.h"
#include "training_proxies/ProxyPeak.h"

namespace cb::proxy {

std::string variantLabel(const ProxyResult& r) {
  return r.transport.empty() ? r.algo : r.algo + "/" + r.transport;
}

namespace {

std::string ms(double s) { return fmt::format("{:.3f}", s * 1e3); }

std::string layoutText(const Layout& l) {
  return fmt::format("dp {} x tp {} x pp {}", l.dp, l.tp, l.pp);
}

std::string humanCount(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f} M", v / 1e6);
  return fmt::format("{:.0f}", v);
}

// 1557611200 -> "1,557,611,200"
std::string groupedCount(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Efficiencies and speed-ups far below 1: "< 0.1%" says what "0.0%" hides.
std::string percent(double fraction) {
  const double pct = fraction * 100;
  if (pct > 0 && pct < 0.1) return fmt::format("{:.1e}%", pct);
  return fmt::format("{:.1f}%", pct);
}

}  // namespace

void printProxySetup(std::FILE* out, const ProxyOptions& o, int worldSize, const std::string& algo,
                     const std::string& transport) {
  const Model& m = o.model;
  std::string published;
  if (m.publishedParams && m.sliced()) {
    published = fmt::format("; the whole model: published {}",
                            humanCount(static_cast<double>(m.publishedParams)));
  } else if (m.publishedParams && m.publishedExact && m.publishedParams == m.params()) {
    published = ", the published count";
  } else if (m.publishedParams) {
    published = fmt::format("; published {}{}", humanCount(static_cast<double>(m.publishedParams)),
                            m.publishedExact ? "" : ", a rounded figure");
  }
  fmt::print(out, "# proxy {}: model {} ({} parameters{}), {} layers", proxyModeName(o.mode),
             m.name, groupedCount(m.params()), published, m.layers.size());
  if (m.transformer) {
    fmt::print(out, "; hidden {}, heads {}, ffn {}, seq {}", m.hidden, m.heads, m.ffn, m.seq);
  }
  fmt::print(out, "\n");
  if (m.sliced()) {
    fmt::print(out,
               "# SLICE: {} of the model's {} blocks (--layers; embedding and head left out): "
               "figures are for this slice, not the whole model\n",
               m.slicedBlocks, m.totalBlocks);
  }
  Layout l = resolveLayout(o, worldSize, 0);
  fmt::print(out, "# layout {} on {} ranks (innermost first: {}), collectives {}{}\n",
             layoutText(l), worldSize, fmt::join(o.layoutOrder, ","), algo,
             transport.empty() ? "" : "/" + transport);
  fmt::print(out,
             "# batch {:g} sample(s) per micro-batch per DP rank; gradients {}, activations {}\n",
             o.batch, dataTypeName(o.gradType), dataTypeName(o.actType));
  if (o.computeScale <= 0) {
    fmt::print(out, "# compute: none (--compute 0: communication only)\n");
  } else {
    fmt::print(out,
               "# compute: FLOPs / {:g} TFLOPS per rank{}, spent as a sleep on a compute thread "
               "(the CPU stays free, like a GPU kernel); backward = 2 x forward\n",
               o.tflops, o.computeScale != 1 ? fmt::format(" x {:g}", o.computeScale) : "");
  }
  if (l.dp > 1 || o.mode.info().dimension == &Layout::dp) {
    if (o.dpKind == DpKind::kAllReduce) {
      fmt::print(out,
                 "# DP: DDP buckets in reverse layer order, first {} then {} (cap), {} per "
                 "bucket, {}\n",
                 formatSize(o.firstBucketBytes), formatSize(o.bucketCapBytes),
                 o.zero == 2 ? "ReduceScatter (ZeRO-2)" : "AllReduce in place",
                 o.overlap ? "overlapped with the rest of backward"
                           : "after the whole backward (--no-overlap)");
      uint64_t floats = 0, ints = 0;
      for (const auto& layer : m.layers) {
        floats += layer.bufferFloats;
        ints += layer.bufferInts;
      }
      if (floats + ints > 0) {
        fmt::print(out,
                   "# DP: rank 0's buffers ({} floats, {} int64) broadcast before each forward "
                   "(DDP's broadcast_buffers), variant {}\n",
                   floats, ints, algoFor(o, Collective::kBroadcast, algo));
      }
    } else if (o.dpKind == DpKind::kParameterServer) {
      fmt::print(out,
                 "# DP: parameter server, {} server rank(s) and {} workers: push gradient "
                 "shards, servers sum, pull parameters\n",
                 o.servers, worldSize - o.servers);
    } else {
      fmt::print(out,
                 "# DP: sharded (ZeRO-3/FSDP): AllGather parameters per layer in forward and "
                 "backward (the next layer's prefetched), ReduceScatter gradients{}\n",
                 o.overlap ? " overlapped with the rest of backward" : "");
    }
  }
  if (l.tp > 1) {
    fmt::print(out, "# TP: {} per block, on the critical path\n", tpKindName(o.tpKind));
  }
  const int mb = microBatchesFor(o, l);
  if (l.pp > 1) {
    fmt::print(out,
               "# PP: {} stages, {} micro-batches, schedule {}{}; stage boundary = the last "
               "layer's output of a micro-batch{}\n",
               l.pp, mb, ppScheduleName(o.schedule),
               o.schedule == PpSchedule::kAsync
                   ? fmt::format(" ({} steps back to back, no flush)", o.steps)
                   : "",
               m.transformer ? " (b x s x h)" : "");
  } else if (mb > 1) {
    fmt::print(out,
               "# gradient accumulation: {} micro-batches per step, DP gradients reduced once "
               "after the last (no_sync)\n",
               mb);
  }
  if (m.transformer && m.vocab > 0 && l.tp > 1) {
    fmt::print(out,
               "# TP embedding and head: vocab-parallel ({} vocabulary rows per rank), their "
               "all-reduces and the cross-entropy's three (b x s floats) per micro-batch\n",
               (m.vocab + l.tp - 1) / l.tp);
  }
  if (m.tiedHead && l.pp > 1) {
    fmt::print(out,
               "# tied embedding: the last stage holds a copy of the word embedding; its "
               "gradient is all-reduced with the first stage's once per step\n");
  }
  const OptimizerKind opt = optimizerFor(o);
  if (opt != OptimizerKind::kNone) {
    fmt::print(out,
               "# step: loss and gradient-norm all-reduces, {} update modelled as {} B per "
               "parameter at {:g} GB/s{}\n",
               optimizerName(opt), opt == OptimizerKind::kAdam ? 28 : 12, o.memGbps,
               o.zero > 0 ? fmt::format(", ZeRO stage {}", o.zero) : "");
  }
  fmt::print(out, "# {} timed step(s) after {} warm-up; times are the max over ranks per step\n#\n",
             o.steps, o.warmup);
}

void printProxyResult(std::FILE* out, const ProxyOptions& o, const ProxyResult& r) {
  fmt::print(out, "# {:>5} {:>11} {:>10} {:>10} {:>6} {:>11} {:>10} {:>11} {:>8} {:>12} {:>12}\n",
             "ranks", "step(ms)", "min(ms)", "max(ms)", "cv%", "compute(ms)", "comm(ms)",
             "exposed(ms)", "overlap%", "samples/s", "tokens/s");
  for (const auto& run : r.runs) {
    fmt::print(out,
               "  {:>5} {:>11} {:>10} {:>10} {:>6.1f} {:>11} {:>10} {:>11} {:>8.1f} {:>12.1f} "
               "{:>12}\n",
               run.n, ms(run.step), ms(run.stepMin), ms(run.stepMax), run.stepCv * 100,
               ms(run.compute), ms(run.comm), ms(run.exposed), run.overlapPct, run.samplesPerSecond,
               o.model.transformer ? fmt::format("{:.0f}", run.tokensPerSecond) : "-");
  }
  const ProxyRun& last = r.runs.back();
  if (!last.calls.empty()) {
    fmt::print(out, "#\n# calls of one step on {} ranks (time: median over calls, slowest rank)\n",
               last.n);
    fmt::print(out,
               "# size: nccl-tests' S (allgather, reduce_scatter: the whole buffer; each rank's "
               "shard is S / ranks); send/recv: one pipeline message, per step counts messages\n");
    fmt::print(out, "# {:>8} {:>15} {:>12} {:>12} {:>6} {:>10} {:>11} {:>12} {:>12} {:>11} {:>6}\n",
               "group", "call", "size(B)", "shard(B)", "ranks", "per step", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "peak(GB/s)", "%peak");
    for (const auto& c : last.calls) {
      const bool sharded = c.coll == "allgather" || c.coll == "reduce_scatter";
      fmt::print(out,
                 "  {:>8} {:>15} {:>12} {:>12} {:>6} {:>10} {:>11.1f} {:>12.2f} {:>12.2f} {:>11} "
                 "{:>6}\n",
                 c.group, c.coll, c.bytes,
                 sharded && c.nranks > 0 ? c.bytes / static_cast<uint64_t>(c.nranks) : c.bytes,
                 c.nranks, c.callsPerStep, c.seconds * 1e6, c.algbw, c.busbw,
                 c.peak > 0 ? fmt::format("{:.2f}", c.peak) : "-",
                 c.peak > 0 ? percentOfPeak(c.busbw, c.peak) : "-");
    }
    // The step's communication against the hardware: every call at its bound.
    const double measured = measuredCallSeconds(last);
    if (last.commAtPeak >= 0 && measured > 0) {
      fmt::print(out,
                 "# calls at their bounds: {:.3f} ms per step; as measured, call by call: {:.3f} "
                 "ms ({} of the bounds' rate)\n",
                 last.commAtPeak * 1e3, measured * 1e3, percentOfPeak(last.commAtPeak, measured));
    } else {
      fmt::print(out, "# calls at their bounds: not known (a call's group has no bound here)\n");
    }
  }
  if (!last.bubblePerStage.empty()) {
    fmt::print(out,
               "#\n# pipeline, per stage, % of the step: idle = bubble (the idle the schedule "
               "imposes with the stages' compute) + transfer (pipeline messages, and waits on "
               "peers they made late) + exposed collectives + other (host gaps between ops)\n");
    fmt::print(out, "# {:>5} {:>8} {:>8} {:>9} {:>8} {:>8}\n", "stage", "idle%", "bubble%",
               "transfer%", "exposed%", "other%");
    for (size_t s = 0; s < last.bubblePerStage.size(); ++s) {
      fmt::print(out, "  {:>5} {:>8.1f} {:>8.1f} {:>9.1f} {:>8.1f} {:>8.1f}\n", s,
                 last.idlePerStage[s] * 100, last.bubblePerStage[s] * 100,
                 last.transferPerStage[s] * 100, last.exposedPerStage[s] * 100,
                 last.otherPerStage[s] * 100);
    }
    fmt::print(out, "# schedule bubble per stage, bubble / (bubble + compute):");
    for (size_t s = 0; s < last.scheduleBubblePerStage.size(); ++s) {
      fmt::print(out, " s{} {:.1f}%", s, last.scheduleBubblePerStage[s] * 100);
    }
    fmt::print(out, "; (p-1)/(m+p-1) = {:.1f}%{}\n", last.bubbleIdeal * 100,
               o.schedule == PpSchedule::kAsync
                   ? " for a flushed schedule (async has no flush per step)"
                   : "");
  }
  if (!r.scaling.empty()) {
    fmt::print(out,
               "#\n# {} scaling ({}), speed-up = T(1) x work(n) / (T(n) x work(1)), "
               "efficiency = speed-up / n\n",
               scalingKindName(o.scaling),
               o.scaling == ScalingKind::kStrong ? "global batch fixed" : "batch per rank fixed");
    fmt::print(out, "# {:>5} {:>11} {:>21} {:>9} {:>11}  {}\n", "ranks", "step(ms)", "band(ms)",
               "speed-up", "efficiency", "source");
    for (const auto& row : r.scaling) {
      fmt::print(out, "  {:>5} {:>11} {:>21} {:>8.3g}x {:>11}  {}\n", row.n, ms(row.stepSeconds),
                 row.predicted ? fmt::format("{} .. {}", ms(row.stepLow), ms(row.stepHigh)) : "-",
                 row.speedup, percent(row.efficiency),
                 !row.predicted ? std::string("measured")
                 : row.extrapolated
                     ? fmt::format("PREDICTED, EXTRAPOLATED (--extrapolate): {}", row.model)
                     : fmt::format("PREDICTED: {}", row.model));
    }
    if (r.fit.ok) {
      fmt::print(out,
                 "# PREDICTED rows: cost model alpha {:.3g} us, beta {:.3g} ns/B, gamma {:.3g} "
                 "ns/B fitted on {} measured calls (median error {:.0f}%), schedule features of "
                 "'{}'; a model, not a measurement; band: the fit's residuals ({:+.0f}% .. "
                 "{:+.0f}%) applied to every predicted call\n",
                 r.fit.alpha * 1e6, r.fit.beta * 1e9, r.fit.gamma * 1e9, r.fit.points,
                 r.fit.medianRelError * 100, r.fitModelledAs, r.fit.relLow * 100,
                 r.fit.relHigh * 100);
      if (r.fit.medianRelError > 0.1) {
        fmt::print(out,
                   "# WARNING: the fit misses its own points by {:.0f}% (median): the predicted "
                   "rows are rough; measure more ranks or sizes\n",
                   r.fit.medianRelError * 100);
      }
    } else if (o.mode.info().dimension == &Layout::dp) {
      fmt::print(out, "# no prediction: fewer than two measured collectives to fit\n");
    }
  }
  if (last.wrong >= 0) {
    fmt::print(out, "# verification: {} wrong element(s) over every distinct call and link\n",
               last.wrong);
  }
}

namespace {

using nlohmann::json;

json optionsJson(const ProxyOptions& o, const ProxyResult& r) {
  return {{"batch", o.batch},
          {"grad_dtype", dataTypeName(o.gradType)},
          {"act_dtype", dataTypeName(o.actType)},
          {"tflops", o.tflops},
          {"compute", o.computeScale},
          {"dp_kind", dpKindName(o.dpKind)},
          {"bucket_cap", o.bucketCapBytes},
          {"first_bucket", o.firstBucketBytes},
          {"overlap", o.overlap},
          {"servers", o.servers},
          {"tp_kind", tpKindName(o.tpKind)},
          {"schedule", ppScheduleName(o.schedule)},
          {"micro_batches",
           microBatchesFor(o, resolveLayout(o, r.runs.empty() ? 1 : r.runs.back().n, 0))},
          {"optimizer", optimizerName(optimizerFor(o))},
          {"zero", shardedParams(o) ? 3 : o.zero},
          {"mem_gbps", o.memGbps},
          {"steps", o.steps},
          {"warmup", o.warmup},
          {"scaling", scalingKindName(o.scaling)},
          {"variant", variantLabel(r)}};
}

json callsJson(const ProxyRun& run) {
  json calls = json::array();
  for (const auto& c : run.calls) {
    const bool shard = c.coll == "allgather" || c.coll == "reduce_scatter";
    calls.push_back({{"group", c.group},
                     {"call", c.coll},
                     {"dtype", dataTypeName(c.dtype)},
                     {"bytes", c.bytes},
                     {"shard_bytes", shard && c.nranks > 0 ? c.bytes / c.nranks : c.bytes},
                     {"ranks", c.nranks},
                     {"per_step", c.callsPerStep},
                     {"time_us", c.seconds * 1e6},
                     {"algbw", c.algbw},
                     {"busbw", c.busbw},
                     {"peak_gbps", c.peak > 0 ? json(c.peak) : json(nullptr)},
                     {"peak_limit", c.peak > 0 ? json(c.peakLimit) : json(nullptr)}});
  }
  return calls;
}

// Every rank's timeline of the first timed step: compute and comm events.
json timelineJson(const ProxyRun& run) {
  json tl = json::array();
  for (const auto& rank : run.timeline) {
    json ev = json::array();
    for (const auto& e : rank) {
      ev.push_back({{"name", e.name},
                    {"lane", e.lane == 'c' ? "compute" : "comm"},
                    {"start_us", e.start * 1e6},
                    {"end_us", e.end * 1e6}});
    }
    tl.push_back(ev);
  }
  return tl;
}

json runJson(const ProxyOptions& o, const ProxyRun& run) {
  json jr;
  jr["ranks"] = run.n;
  jr["layout"] = {{"dp", run.layout.dp}, {"tp", run.layout.tp}, {"pp", run.layout.pp}};
  jr["batch_per_rank"] = run.batchPerRank;
  jr["step_us"] = run.step * 1e6;
  jr["compute_us"] = run.compute * 1e6;
  jr["comm_us"] = run.comm * 1e6;
  jr["exposed_us"] = run.exposed * 1e6;
  jr["overlap_pct"] = run.overlapPct;
  jr["samples_per_s"] = run.samplesPerSecond;
  jr["tokens_per_s"] = run.tokensPerSecond;
  jr["comm_bytes_per_step"] = run.commBytesPerStep;
  jr["wrong"] = run.wrong;
  json steps = json::array();
  for (double s : run.stepSamples) steps.push_back(s * 1e6);
  jr["steps_us"] = steps;
  jr["transfer_us"] = run.transfer * 1e6;
  if (!o.model.transformer) jr["tokens_per_s"] = nullptr;
  if (!run.bubblePerStage.empty()) {
    jr["idle_per_stage"] = run.idlePerStage;
    jr["bubble_per_stage"] = run.bubblePerStage;
    jr["transfer_per_stage"] = run.transferPerStage;
    jr["exposed_per_stage"] = run.exposedPerStage;
    jr["other_per_stage"] = run.otherPerStage;
    jr["schedule_bubble_per_stage"] = run.scheduleBubblePerStage;
    jr["bubble_ideal"] = run.bubbleIdeal;
  }
  jr["calls"] = callsJson(run);
  jr["comm_at_peak_us"] = run.commAtPeak >= 0 ? json(run.commAtPeak * 1e6) : json(nullptr);
  jr["comm_calls_us"] = measuredCallSeconds(run) * 1e6;
  jr["timeline"] = timelineJson(run);
  return jr;
}

json scalingJson(const ProxyResult& r) {
  json sc = json::array();
  for (const auto& row : r.scaling) {
    sc.push_back({{"ranks", row.n},
                  {"predicted", row.predicted},
                  {"extrapolated", row.extrapolated},
                  {"step_low_us", row.stepLow * 1e6},
                  {"step_high_us", row.stepHigh * 1e6},
                  {"step_us", row.stepSeconds * 1e6},
                  {"comm_us", row.commSeconds * 1e6},
                  {"exposed_us", row.exposedSeconds * 1e6},
                  {"speedup", row.speedup},
                  {"efficiency", row.efficiency}});
    if (row.predicted) sc.back()["model"] = row.model;
  }
  return sc;
}

}  // namespace

std::string proxyJson(const ProxyOptions& o, const ProxyResult& r) {
  json j;
  j["format"] = "collbench-proxy";  // version 1 wrote format "collbench-proxy/1", no version
  j["version"] = 2;
  j["mode"] = proxyModeName(o.mode);
  j["model"] = {{"name", o.model.name},
                {"params", o.model.params()},
                {"published_params", o.model.publishedParams},
                {"published_exact", o.model.publishedExact},
                {"layers", o.model.layers.size()},
                {"blocks", o.model.slicedBlocks},
                {"total_blocks", o.model.totalBlocks},
                {"sliced", o.model.sliced()}};
  j["options"] = optionsJson(o, r);
  json runs = json::array();
  for (const auto& run : r.runs) runs.push_back(runJson(o, run));
  j["runs"] = runs;
  j["scaling"] = scalingJson(r);
  if (r.fit.ok) {
    j["fit"] = {{"alpha_s", r.fit.alpha},
                {"beta_s_per_byte", r.fit.beta},
                {"gamma_s_per_byte", r.fit.gamma},
                {"points", r.fit.points},
                {"median_rel_error", r.fit.medianRelError},
                {"rel_low", r.fit.relLow},
                {"rel_high", r.fit.relHigh},
                {"features_of", r.fitModelledAs}};
  }
  return j.dump();
}

}  // namespace cb::proxy
