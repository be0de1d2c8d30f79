#include "cli/DiagFlags.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/Command.h"
#include "core/Collective.h"
#include "core/Error.h"
#include "core/Size.h"
#include "core/Text.h"

namespace cb::cli {
namespace {

double parseGap(const std::string& text) {
  std::string t(trim(text));
  bool pct = !t.empty() && t.back() == '%';
  if (pct) t.pop_back();
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(t, &used);
    if (used != t.size()) throw std::invalid_argument(t);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--gap '{}' is not a fraction (0.07) or a percentage (7%)", text));
  }
  if (pct) v /= 100;
  if (!(v > 0 && v < 1)) {
    throw UsageError(fmt::format("--gap '{}' must lie strictly between 0 and 100%", text));
  }
  return v;
}

}  // namespace

SuspectOptions suspectOptions(double k, const std::string& gap) {
  if (!(k > 0) || k > 100) throw UsageError(fmt::format("--k {} must be above 0 (3: default)", k));
  SuspectOptions o;
  o.k = k;
  o.gap = parseGap(gap);
  return o;
}

FleetOptions toFleetOptions(const NodesCli& c) {
  const SuspectOptions so = suspectOptions(c.k, c.gap);
  FleetOptions o;
  o.k = so.k;
  o.gap = so.gap;
  if (c.run < 1) throw UsageError(fmt::format("--run {} must be 1 or more", c.run));
  if (c.minNodes < 3) {
    throw UsageError(
        fmt::format("--min-nodes {}: a median and MAD need 3 nodes or more", c.minNodes));
  }
  o.run = c.run;
  o.minNodes = c.minNodes;
  o.minBytes = parseSize(c.minBytes);
  return o;
}

KindReferences minimumReferences(const std::vector<std::string>& minimums) {
  KindReferences refs;
  for (const std::string& text : minimums) {
    const auto at = text.find('@');
    const auto eq = text.find('=', at == std::string::npos ? 0 : at);
    if (at == std::string::npos || eq == std::string::npos) {
      throw UsageError(
          fmt::format("--min '{}' is not [KIND/]COLLECTIVE@SIZE=GBPS (allreduce@8G=460)", text));
    }
    std::string head = text.substr(0, at), kind;
    if (const auto slash = head.rfind('/'); slash != std::string::npos) {
      kind = head.substr(0, slash);
      head = head.substr(slash + 1);
    }
    FleetReference f;
    f.series.collective = collectiveName(parseCollective(head));
    f.bytes = parseSize(text.substr(at + 1, eq - at - 1));
    double gbps = 0;
    try {
      size_t used = 0;
      const std::string v = text.substr(eq + 1);
      gbps = std::stod(v, &used);
      if (used != v.size()) gbps = 0;
    } catch (const std::exception&) {
      gbps = 0;
    }
    if (!(gbps > 0)) {
      throw UsageError(
          fmt::format("--min '{}': the minimum must be a busbw in GB/s above 0", text));
    }
    f.minimum = gbps;
    f.source = "--min " + text;
    refs[kind].push_back(std::move(f));
  }
  return refs;
}

DiagLinksOptions toLinksOptions(const LinksCli& c) {
  DiagLinksOptions o;
  o.suspect = suspectOptions(c.live.k, c.live.gap);
  o.quick = c.quick;
  o.sequential = c.sequential;
  o.confirm = !c.noConfirm;
  if (c.repeats < 1 || c.repeats > 99) {
    throw UsageError(fmt::format("--schedules {} must be 1..99", c.repeats));
  }
  o.repeats = c.repeats;
  if (c.quick && c.sequential) throw UsageError("--quick and --sequential exclude each other");
  o.probe.bandwidthBytes = parseSize(c.size);
  o.probe.latencyBytes = parseSize(c.latencySize);
  if (o.probe.bandwidthBytes == 0) throw UsageError("--size must be at least 1 byte");
  if (o.probe.bandwidthBytes > (1ull << 30) || o.probe.latencyBytes > (1ull << 30)) {
    throw UsageError("--size and --latency-size must be at most 1G");
  }
  if (c.window < 1) throw UsageError(fmt::format("-W {} must be at least 1", c.window));
  if (c.iters < 1) throw UsageError(fmt::format("-n {} must be at least 1", c.iters));
  if (c.latencyIters < 1) {
    throw UsageError(fmt::format("--latency-iters {} must be at least 1", c.latencyIters));
  }
  if (!(c.live.measure.timeout > 0)) throw UsageError("-T must be positive");
  o.probe.window = c.window;
  o.probe.bandwidthIters = c.iters;
  o.probe.latencyIters = c.latencyIters;
  o.probe.latencyWarmup = std::max(1, c.latencyIters / 10);
  o.probe.timeoutSeconds = c.live.measure.timeout;
  return o;
}

DiagBisectOptions toBisectOptions(const BisectCli& c) {
  DiagBisectOptions o;
  o.fallback = toLinksOptions(c.links);
  o.suspect = o.fallback.suspect;
  o.bytes = parseSize(c.collSize);
  if (o.bytes < 4 || o.bytes > (1ull << 30)) throw UsageError("--coll-size must be 4 B..1G");
  if (c.calls < 1) throw UsageError(fmt::format("--calls {} must be at least 1", c.calls));
  if (c.repeats < 1) throw UsageError(fmt::format("--repeats {} must be at least 1", c.repeats));
  o.iterations = c.calls;
  o.repeats = c.repeats;
  o.timeoutSeconds = c.links.live.measure.timeout;
  return o;
}

DiagRanksOptions toRanksOptions(const RanksCli& c) {
  DiagRanksOptions o;
  o.suspect = suspectOptions(c.live.k, c.live.gap);
  o.bytes = parseSize(c.size);
  if (o.bytes < 4 || o.bytes > (1ull << 30)) throw UsageError("--size must be 4 B..1G");
  if (c.iters < 3) throw UsageError(fmt::format("-n {} must be at least 3", c.iters));
  if (c.warmup < 0) throw UsageError("-w must not be negative");
  if (!(c.live.measure.timeout > 0)) throw UsageError("-T must be positive");
  o.iterations = c.iters;
  o.warmup = c.warmup;
  o.timeoutSeconds = c.live.measure.timeout;
  return o;
}

namespace {

void addLiveOptions(CLI::App* sub, LiveOptions& o) {
  sub->add_option("--transport", o.transport,
                  "local, shm, mpi or ucx (default: the fastest for the world)");
  sub->add_option("--inject", o.inject,
                  "Fault injection for tests and demos: slow-link=A-B:FACTOR (the link A-B "
                  "FACTOR times slower), slow-rank=R:DELAY (rank R waits DELAY, e.g. 200us, "
                  "before each exchange); repeatable");
  sub->add_option("--k", o.k, "Robust bound: MADs (scaled to sigma) below the class median")
      ->capture_default_str();
  sub->add_option("--gap", o.gap, "Practical gap below the class median (7% or 0.07)")
      ->capture_default_str();
  sub->add_option("--json", o.jsonPath, "Write the matrix and verdict as JSON to this file");
  sub->add_option("--csv", o.csvPath, "Write the links as CSV to this file");
  addMeasureOptions(sub, o.measure, "wait", "Ranks of the local world (threads)", false);
}

// Live options and the pair matrix's (links, and the fallback of bisect).
void addLinksOptions(CLI::App* sub, LinksCli& o) {
  addLiveOptions(sub, o.live);
  sub->add_flag("--quick", o.quick, "Pair matrix: one round between the two halves (n/2 links)");
  sub->add_flag("--sequential", o.sequential,
                "Pair matrix: every pair alone, one after another (n(n-1)/2 rounds)");
  sub->add_flag("--no-confirm", o.noConfirm, "Report suspects without re-measuring them alone");
  sub->add_option("--schedules", o.repeats,
                  "Pair matrix: times the concurrent rounds are played, ranks relabelled each "
                  "time (each link's median)")
      ->capture_default_str();
  sub->add_option("--size", o.size, "Bandwidth message size")->capture_default_str();
  sub->add_option("--latency-size", o.latencySize, "Latency message size")->capture_default_str();
  sub->add_option("-W,--window", o.window, "Messages per bibw window")->capture_default_str();
  sub->add_option("--latency-iters", o.latencyIters, "Timed ping-pongs per link")
      ->capture_default_str();
}

}  // namespace

void addLinksFlags(CLI::App* sub, LinksCli& o) {
  addLinksOptions(sub, o);
  sub->add_option("-n,--iters", o.iters, "Timed bibw windows per link")->capture_default_str();
  sub->add_option("--link-rate", o.linkRate,
                  "Gb/s per direction of every link, where the topology knows no physical rate "
                  "(virtual interfaces): links under the expected share of it are below bound")
      ->check(CLI::PositiveNumber);
}

void addBisectFlags(CLI::App* sub, BisectCli& o) {
  addLinksOptions(sub, o.links);
  sub->add_option("--coll-size", o.collSize, "Allreduce size")->capture_default_str();
  sub->add_option("--calls", o.calls, "Allreduce calls per repeat")->capture_default_str();
  sub->add_option("--repeats", o.repeats, "Repeats per round (the median decides)")
      ->capture_default_str();
}

void addRanksFlags(CLI::App* sub, RanksCli& o) {
  addLiveOptions(sub, o.live);
  sub->add_option("--size", o.size, "Allreduce size")->capture_default_str();
  sub->add_option("-n,--iters", o.iters, "Timed calls in each direction of the ring")
      ->capture_default_str();
  sub->add_option("-w,--warmup_iters", o.warmup, "Warm-up calls")->capture_default_str();
}

void addLogsFlags(CLI::App* sub, LogsCli& o) {
  sub->add_option("files", o.files, "nccl-tests logs, each of two hosts")->required();
  sub->add_option("--k", o.k, "Robust bound: MADs (scaled to sigma) below the median")
      ->capture_default_str();
  sub->add_option("--gap", o.gap, "Practical gap below the median (7% or 0.07)")
      ->capture_default_str();
  addDbOption(sub, o.db);
  sub->add_flag("--no-db", o.noDb, "Do not store the matrix and verdict");
  sub->add_option("--label", o.label, "Label of the stored run");
  sub->add_option("--json", o.jsonPath, "Write the matrices and verdicts as JSON to this file");
  sub->add_option("--csv", o.csvPath, "Write the links as CSV to this file");
}

void addNodesFlags(CLI::App* sub, NodesCli& o) {
  sub->add_option("files", o.files,
                  "nccl-tests logs, one node each (the node: its host, else the file)");
  sub->add_flag("--stored", o.stored, "The newest ok run of each host in --db (one host per run)");
  addDbOption(sub, o.db);
  sub->add_option("--label", o.label, "Only stored runs with this label");
  sub->add_option("--k", o.k, "Robust bound: MADs (scaled to sigma) below the kind's median")
      ->capture_default_str();
  sub->add_option("--gap", o.gap, "Practical gap below the median (5% or 0.05)")
      ->capture_default_str();
  sub->add_option("--run", o.run, "Consecutive sizes out that make a node fall out")
      ->capture_default_str();
  sub->add_option("--min-nodes", o.minNodes,
                  "Nodes of a kind at a point for the fleet's own baseline there")
      ->capture_default_str();
  sub->add_option("--min-bytes", o.minBytes, "Sizes below this are not compared (latency)")
      ->capture_default_str();
  sub->add_option("--min", o.minimums,
                  "A kind's minimum, [KIND/]COLLECTIVE@SIZE=GBPS (busbw), e.g. allreduce@8G=460; "
                  "repeatable");
  sub->add_option("--baseline", o.baseline,
                  "A saved baseline (--save-baseline): its medians judge points the fleet has too "
                  "few nodes for");
  sub->add_option("--save-baseline", o.saveBaseline, "Write the baseline as JSON to this file");
  sub->add_option("--json", o.jsonPath, "Write the baseline and each node's place as JSON");
  sub->add_option("--html", o.htmlPath,
                  "Write one HTML page: a row per node, the outliers first, then the baseline");
}

}  // namespace cb::cli
