#include "training_proxies/ProxyReport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/Size.h"

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

}  // namespace

void printProxySetup(std::FILE* out, const ProxyOptions& o, int worldSize, const std::string& algo,
                     const std::string& transport) {
  const Model& m = o.model;
  fmt::print(out, "# proxy {}: model {} ({} parameters{}), {} layers", proxyModeName(o.mode),
             m.name, humanCount(static_cast<double>(m.params())),
             m.publishedParams
                 ? fmt::format("; published {}", humanCount(static_cast<double>(m.publishedParams)))
                 : "",
             m.layers.size());
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
  if (l.dp > 1 || o.mode == ProxyMode::kDp) {
    if (o.dpKind == DpKind::kAllReduce) {
      fmt::print(out,
                 "# DP: DDP buckets in reverse layer order, first {} then {} (cap), AllReduce "
                 "in place per bucket, {}\n",
                 formatSize(o.firstBucketBytes), formatSize(o.bucketCapBytes),
                 o.overlap ? "overlapped with the rest of backward"
                           : "after the whole backward (--no-overlap)");
    } else if (o.dpKind == DpKind::kParameterServer) {
      fmt::print(out,
                 "# DP: parameter server, {} server rank(s) and {} workers: push gradient "
                 "shards, servers sum, pull parameters\n",
                 o.servers, worldSize - o.servers);
    } else {
      fmt::print(out,
                 "# DP: sharded (ZeRO-3/FSDP): AllGather parameters per layer in forward and "
                 "backward, ReduceScatter gradients{}\n",
                 o.overlap ? " overlapped with the rest of backward" : "");
    }
  }
  if (l.tp > 1) {
    fmt::print(out, "# TP: {} per block, on the critical path\n", tpKindName(o.tpKind));
  }
  if (l.pp > 1) {
    fmt::print(out, "# PP: {} stages, {} micro-batches, schedule {}{}\n", l.pp, o.microBatches,
               ppScheduleName(o.schedule),
               o.schedule == PpSchedule::kAsync
                   ? fmt::format(" ({} steps back to back, no flush)", o.steps)
                   : "");
  }
  fmt::print(out, "# {} timed step(s) after {} warm-up; times are the max over ranks per step\n#\n",
             o.steps, o.warmup);
}

void printProxyResult(std::FILE* out, const ProxyOptions& o, const ProxyResult& r) {
  fmt::print(out, "# {:>5} {:>11} {:>10} {:>10} {:>6} {:>11} {:>10} {:>11} {:>8} {:>12} {:>12}\n",
             "ranks", "step(ms)", "min", "max", "cv%", "compute", "comm", "exposed", "overlap%",
             "samples/s", "tokens/s");
  for (const auto& run : r.runs) {
    fmt::print(out,
               "  {:>5} {:>11} {:>10} {:>10} {:>6.1f} {:>11} {:>10} {:>11} {:>8.1f} {:>12.1f} "
               "{:>12.0f}\n",
               run.n, ms(run.step), ms(run.stepMin), ms(run.stepMax), run.stepCv * 100,
               ms(run.compute), ms(run.comm), ms(run.exposed), run.overlapPct, run.samplesPerSecond,
               run.tokensPerSecond);
  }
  const ProxyRun& last = r.runs.back();
  if (!last.calls.empty()) {
    fmt::print(out, "#\n# calls of one step on {} ranks (time: median over calls, slowest rank)\n",
               last.n);
    fmt::print(out, "# {:>8} {:>15} {:>12} {:>6} {:>10} {:>11} {:>10} {:>10}\n", "group", "call",
               "size(B)", "ranks", "per step", "time(us)", "algbw", "busbw");
    for (const auto& c : last.calls) {
      fmt::print(out, "  {:>8} {:>15} {:>12} {:>6} {:>10} {:>11.1f} {:>10.2f} {:>10.2f}\n", c.group,
                 c.coll, c.bytes, c.nranks, c.callsPerStep, c.seconds * 1e6, c.algbw, c.busbw);
    }
  }
  if (!last.bubblePerStage.empty()) {
    fmt::print(out, "#\n# pipeline bubble (idle compute / step) per stage:");
    for (size_t s = 0; s < last.bubblePerStage.size(); ++s) {
      fmt::print(out, " s{} {:.1f}%", s, last.bubblePerStage[s] * 100);
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
    fmt::print(out, "# {:>5} {:>11} {:>9} {:>11}  {}\n", "ranks", "step(ms)", "speed-up",
               "efficiency", "source");
    for (const auto& row : r.scaling) {
      fmt::print(out, "  {:>5} {:>11} {:>8.2f}x {:>10.1f}%  {}\n", row.n, ms(row.stepSeconds),
                 row.speedup, row.efficiency * 100, row.predicted ? "PREDICTED" : "measured");
    }
    if (r.fit.ok) {
      fmt::print(out,
                 "# PREDICTED rows: cost model alpha {:.3g} us, beta {:.3g} ns/B, gamma {:.3g} "
                 "ns/B fitted on {} measured calls (median error {:.0f}%), schedule features of "
                 "'{}'; a model, not a measurement\n",
                 r.fit.alpha * 1e6, r.fit.beta * 1e9, r.fit.gamma * 1e9, r.fit.points,
                 r.fit.medianRelError * 100, r.fitModelledAs);
    } else if (o.mode == ProxyMode::kDp) {
      fmt::print(out, "# no prediction: fewer than two measured collectives to fit\n");
    }
  }
  if (last.wrong >= 0) {
    fmt::print(out, "# verification: {} wrong element(s) over every distinct call and link\n",
               last.wrong);
  }
}

std::string proxyJson(const ProxyOptions& o, const ProxyResult& r) {
  using nlohmann::json;
  json j;
  j["format"] = "collbench-proxy/1";
  j["mode"] = proxyModeName(o.mode);
  j["model"] = {{"name", o.model.name},
                {"params", o.model.params()},
                {"layers", o.model.layers.size()},
                {"blocks", o.model.slicedBlocks},
                {"total_blocks", o.model.totalBlocks},
                {"sliced", o.model.sliced()}};
  j["options"] = {{"batch", o.batch},
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
                  {"micro_batches", o.microBatches},
                  {"steps", o.steps},
                  {"warmup", o.warmup},
                  {"scaling", scalingKindName(o.scaling)},
                  {"variant", variantLabel(r)}};
  json runs = json::array();
  for (const auto& run : r.runs) {
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
    if (!run.bubblePerStage.empty()) {
      jr["bubble_per_stage"] = run.bubblePerStage;
      jr["bubble_ideal"] = run.bubbleIdeal;
    }
    json calls = json::array();
    for (const auto& c : run.calls) {
      calls.push_back({{"group", c.group},
                       {"call", c.coll},
                       {"bytes", c.bytes},
                       {"ranks", c.nranks},
                       {"per_step", c.callsPerStep},
                       {"time_us", c.seconds * 1e6},
                       {"algbw", c.algbw},
                       {"busbw", c.busbw}});
    }
    jr["calls"] = calls;
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
    jr["timeline"] = tl;
    runs.push_back(jr);
  }
  j["runs"] = runs;
  json sc = json::array();
  for (const auto& row : r.scaling) {
    sc.push_back({{"ranks", row.n},
                  {"predicted", row.predicted},
                  {"step_us", row.stepSeconds * 1e6},
                  {"comm_us", row.commSeconds * 1e6},
                  {"exposed_us", row.exposedSeconds * 1e6},
                  {"speedup", row.speedup},
                  {"efficiency", row.efficiency}});
  }
  j["scaling"] = sc;
  if (r.fit.ok) {
    j["fit"] = {{"alpha_s", r.fit.alpha},
                {"beta_s_per_byte", r.fit.beta},
                {"gamma_s_per_byte", r.fit.gamma},
                {"points", r.fit.points},
                {"median_rel_error", r.fit.medianRelError},
                {"features_of", r.fitModelledAs}};
  }
  return j.dump();
}

}  // namespace cb::proxy
