#include "diagnosis/Fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/Error.h"
#include "core/Size.h"
#include "core/Stats.h"
#include "diagnosis/Diagnosis.h"
#include "results/HtmlReport.h"

namespace cb {
namespace {

constexpr double kMadToSigma = 1.4826;

using PointKey = std::pair<FleetSeries, uint64_t>;

// An empty field of a reference's series stands for any (a published figure names no variant).
bool seriesMatch(const FleetSeries& ref, const FleetSeries& s) {
  return (ref.collective.empty() || ref.collective == s.collective) &&
         (ref.variant.empty() || ref.variant == s.variant) &&
         (ref.placement.empty() || ref.placement == s.placement);
}

// The references of `kind` and of every kind ("") at a point.
std::vector<const FleetReference*> referencesAt(const KindReferences& refs, const std::string& kind,
                                                const PointKey& key) {
  std::vector<const FleetReference*> out;
  for (const std::string& k : {kind, std::string()}) {
    auto it = refs.find(k);
    if (it == refs.end()) continue;
    for (const auto& r : it->second) {
      if (r.bytes == key.second && seriesMatch(r.series, key.first)) out.push_back(&r);
    }
    if (kind.empty()) break;
  }
  return out;
}

// A node's figure at each point (the median where a point was measured more than once).
std::map<PointKey, double> pointsOf(const FleetNode& n, const FleetOptions& o) {
  std::map<PointKey, std::vector<double>> all;
  for (const auto& p : n.points) {
    if (p.bytes < o.minBytes || !(p.busbw > 0)) continue;
    all[{p.series, p.bytes}].push_back(p.busbw);
  }
  std::map<PointKey, double> out;
  for (auto& [key, values] : all) out[key] = medianOf(values);
  return out;
}

}  // namespace

std::string FleetSeries::text() const {
  return fmt::format("{} {} {}", collective, variant, placement);
}

int FleetReport::outliers() const {
  return static_cast<int>(
      std::count_if(nodes.begin(), nodes.end(), [](const NodePlace& n) { return n.fallsOut; }));
}

FleetReport judgeFleet(const std::vector<FleetNode>& nodes, const FleetOptions& o,
                       const KindReferences& references) {
  FleetReport report;
  std::vector<std::map<PointKey, double>> figures;
  std::map<std::string, std::vector<size_t>> byKind;
  for (size_t i = 0; i < nodes.size(); ++i) {
    figures.push_back(pointsOf(nodes[i], o));
    byKind[nodes[i].kind].push_back(i);
  }
  // The baseline of each kind at each point: the fleet's own where enough nodes measured it,
  // else a reference's median and spread.
  std::map<std::pair<std::string, PointKey>, BaselineRow> baseline;
  for (const auto& [kind, members] : byKind) {
    std::map<PointKey, std::vector<double>> logs;
    for (size_t i : members) {
      for (const auto& [key, v] : figures[i]) logs[key].push_back(std::log(v));
    }
    int fromFleet = 0, fromReference = 0, none = 0;
    for (const auto& [key, values] : logs) {
      BaselineRow row;
      row.kind = kind;
      row.series = key.first;
      row.bytes = key.second;
      if (static_cast<int>(values.size()) >= o.minNodes) {
        auto [center, mad] = medianMad(values);
        row.median = std::exp(center);
        row.spread = kMadToSigma * mad;
        row.nodes = static_cast<int>(values.size());
        row.from = "fleet";
        ++fromFleet;
      } else {
        for (const FleetReference* r : referencesAt(references, kind, key)) {
          if (r->median > 0) {
            row.median = r->median;
            row.spread = r->spread;
            row.nodes = r->nodes;
            row.from = r->source;
            break;
          }
        }
        if (row.median > 0) {
          ++fromReference;
        } else {
          ++none;
          continue;
        }
      }
      baseline[{kind, key}] = row;
      report.baseline.push_back(row);
    }
    const std::string name = kind.empty() ? "(kind unknown)" : kind;
    if (none > 0) {
      report.notes.push_back(fmt::format(
          "{}: {} nodes; {} point(s) have no baseline (fewer than {} nodes measured them and no "
          "reference gives a median): only minimums judge them",
          name, members.size(), none, o.minNodes));
    }
    if (fromReference > 0) {
      report.notes.push_back(fmt::format("{}: {} point(s) judged against the reference baseline",
                                         name, fromReference));
    }
    (void)fromFleet;
  }

  for (size_t i = 0; i < nodes.size(); ++i) {
    const FleetNode& n = nodes[i];
    NodePlace place;
    place.name = n.name;
    place.kind = n.kind;
    place.source = n.source;
    std::vector<double> ratios;
    std::map<FleetSeries, std::vector<NodeEvidence>> bySeries;
    for (const auto& [key, v] : figures[i]) {
      NodeEvidence e;
      e.series = key.first;
      e.bytes = key.second;
      e.value = v;
      for (const FleetReference* r : referencesAt(references, n.kind, key)) {
        if (r->minimum > 0 && v < r->minimum) e.minimum = r->minimum;
      }
      auto b = baseline.find({n.kind, key});
      if (b != baseline.end()) {
        e.median = b->second.median;
        e.ratio = v / e.median;
        e.z = std::log(e.ratio) / std::max(b->second.spread, o.spreadFloor);
        ratios.push_back(e.ratio);
        place.worstZ = std::min(place.worstZ, e.z);
      }
      ++place.points;
      bySeries[key.first].push_back(e);
    }
    if (!ratios.empty()) place.medianRatio = medianOf(ratios);
    std::vector<NodeEvidence> longest, belowMinimum;
    for (auto& [series, points] : bySeries) {
      // Sizes in order (the map's keys already are); a run is broken by a size that is not out.
      std::vector<NodeEvidence> current;
      for (const auto& e : points) {
        if (e.minimum > 0) belowMinimum.push_back(e);
        const bool out = e.median > 0 && e.z <= -o.k && e.ratio <= 1 - o.gap;
        if (out) ++place.out;
        if (out) {
          current.push_back(e);
          if (current.size() > longest.size()) longest = current;
        } else {
          current.clear();
        }
      }
    }
    const bool slowBand = static_cast<int>(longest.size()) >= std::max(o.run, 1);
    place.fallsOut = slowBand || !belowMinimum.empty();
    if (!belowMinimum.empty()) {
      const auto& e = belowMinimum.front();
      place.why = fmt::format(
          "below the kind's minimum at {} point(s): {} at {}: {:.2f} GB/s < {:g}",
          belowMinimum.size(), e.series.text(), formatSize(e.bytes), e.value, e.minimum);
      place.evidence = belowMinimum;
    }
    if (slowBand) {
      const auto& first = longest.front();
      const auto& last = longest.back();
      double worstRatio = 1;
      for (const auto& e : longest) worstRatio = std::min(worstRatio, e.ratio);
      const std::string band = fmt::format(
          "{} consecutive sizes of {} ({} to {}) below the kind's median: down to {:.0f}% of it "
          "(z down to {:.1f})",
          longest.size(), first.series.text(), formatSize(first.bytes), formatSize(last.bytes),
          100 * worstRatio,
          std::min_element(longest.begin(), longest.end(), [](const auto& a, const auto& b) {
            return a.z < b.z;
          })->z);
      place.why = place.why.empty() ? band : place.why + "; " + band;
      place.evidence.insert(place.evidence.end(), longest.begin(), longest.end());
    }
    if (!place.fallsOut) {
      place.why = place.out > 0 ? fmt::format(
                                      "in the fleet ({} lone point(s) out: noise, not a "
                                      "band of sizes)",
                                      place.out)
                                : "in the fleet";
    }
    report.nodes.push_back(std::move(place));
  }
  std::stable_sort(report.nodes.begin(), report.nodes.end(),
                   [](const NodePlace& a, const NodePlace& b) {
                     if (a.fallsOut != b.fallsOut) return a.fallsOut;
                     if (a.medianRatio != b.medianRatio) return a.medianRatio < b.medianRatio;
                     return a.name < b.name;
                   });
  return report;
}

std::string fleetText(const FleetReport& r) {
  std::set<std::string> kinds;
  for (const auto& n : r.nodes) kinds.insert(n.kind);
  std::string out = fmt::format("# fleet: {} node(s) of {} kind(s); {} fall(s) out\n",
                                r.nodes.size(), kinds.size(), r.outliers());
  for (const auto& k : kinds) {
    std::set<FleetSeries> series;
    int points = 0, fleet = 0;
    for (const auto& b : r.baseline) {
      if (b.kind != k) continue;
      series.insert(b.series);
      ++points;
      if (b.from == "fleet") ++fleet;
    }
    const auto count = std::count_if(r.nodes.begin(), r.nodes.end(),
                                     [&](const NodePlace& n) { return n.kind == k; });
    out += fmt::format(
        "# kind {}: {} node(s); baseline at {} point(s) of {} series ({} from the "
        "fleet's medians)\n",
        k.empty() ? "(unknown)" : k, count, points, series.size(), fleet);
  }
  for (const auto& n : r.notes) out += "# note: " + n + "\n";
  size_t width = 4;
  for (const auto& n : r.nodes) width = std::max(width, n.name.size());
  out += fmt::format("{:<{}}  {:>6}  {:>12}  {:>7}  {}\n", "node", width, "points", "median ratio",
                     "worst z", "place");
  for (const auto& n : r.nodes) {
    out += fmt::format("{:<{}}  {:>6}  {:>12.3f}  {:>7.1f}  {}{}\n", n.name, width, n.points,
                       n.medianRatio, n.worstZ, n.fallsOut ? "OUT: " : "", n.why);
  }
  for (const auto& n : r.nodes) {
    if (!n.fallsOut) continue;
    out += fmt::format("# evidence {} ({}):\n", n.name, n.source);
    for (const auto& e : n.evidence) {
      out += fmt::format("#   {} {:>10}: {:.2f} GB/s busbw", e.series.text(), formatSize(e.bytes),
                         e.value);
      if (e.median > 0) {
        out +=
            fmt::format(", kind's median {:.2f} ({:.0f}%, z {:.1f})", e.median, 100 * e.ratio, e.z);
      }
      if (e.minimum > 0) out += fmt::format(", below the minimum {:g}", e.minimum);
      out += "\n";
    }
  }
  return out;
}

namespace {

nlohmann::ordered_json seriesJson(const FleetSeries& s) {
  return {{"collective", s.collective}, {"variant", s.variant}, {"placement", s.placement}};
}

nlohmann::ordered_json baselineRows(const FleetReport& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& b : r.baseline) {
    auto j = seriesJson(b.series);
    j["kind"] = b.kind;
    j["bytes"] = b.bytes;
    j["median_gbps"] = b.median;
    j["spread"] = b.spread;
    j["nodes"] = b.nodes;
    j["from"] = b.from;
    rows.push_back(std::move(j));
  }
  return rows;
}

}  // namespace

std::string fleetJson(const FleetReport& r, const FleetOptions& o) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const auto& n : r.nodes) {
    nlohmann::ordered_json ev = nlohmann::ordered_json::array();
    for (const auto& e : n.evidence) {
      auto j = seriesJson(e.series);
      j["bytes"] = e.bytes;
      j["busbw"] = e.value;
      j["median_gbps"] = e.median > 0 ? nlohmann::ordered_json(e.median) : nullptr;
      j["ratio"] = e.median > 0 ? nlohmann::ordered_json(e.ratio) : nullptr;
      j["z"] = e.median > 0 ? nlohmann::ordered_json(e.z) : nullptr;
      j["minimum_gbps"] = e.minimum > 0 ? nlohmann::ordered_json(e.minimum) : nullptr;
      ev.push_back(std::move(j));
    }
    nodes.push_back({{"node", n.name},
                     {"kind", n.kind},
                     {"source", n.source},
                     {"falls_out", n.fallsOut},
                     {"points", n.points},
                     {"points_out", n.out},
                     {"median_ratio", n.medianRatio},
                     {"worst_z", n.worstZ},
                     {"why", n.why},
                     {"evidence", std::move(ev)}});
  }
  nlohmann::ordered_json rules = {{"k", o.k},
                                  {"gap", o.gap},
                                  {"run", o.run},
                                  {"spread_floor", o.spreadFloor},
                                  {"min_nodes", o.minNodes},
                                  {"min_bytes", o.minBytes}};
  return nlohmann::ordered_json{{"rules", rules},
                                {"outliers", r.outliers()},
                                {"nodes", std::move(nodes)},
                                {"baseline", baselineRows(r)},
                                {"notes", r.notes}}
      .dump(2);
}

std::string fleetHtml(const FleetReport& r) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>collbench fleet</title>\n"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td.l,th.l{text-align:left}"
      "tr.out{background:#fde2e1}small{color:#555}</style></head><body>\n";
  out += fmt::format("<h1>Fleet: {} node(s), {} fall(s) out</h1>\n", r.nodes.size(), r.outliers());
  for (const auto& n : r.notes) out += "<p><small>" + htmlEscape(n) + "</small></p>\n";
  out +=
      "<table><tr><th class=\"l\">node</th><th class=\"l\">kind</th><th>points</th><th>median "
      "ratio</th><th>worst z</th><th class=\"l\">place</th><th class=\"l\">source</th></tr>\n";
  for (const auto& n : r.nodes) {
    std::string place = htmlEscape(n.why);
    for (const auto& e : n.evidence) {
      place += fmt::format(
          "<br><small>{} {}: {:.2f} GB/s{}{}</small>", htmlEscape(e.series.text()),
          formatSize(e.bytes), e.value,
          e.median > 0 ? fmt::format(", median {:.2f} (z {:.1f})", e.median, e.z) : std::string(),
          e.minimum > 0 ? fmt::format(", minimum {:g}", e.minimum) : std::string());
    }
    out += fmt::format(
        "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.3f}</td>"
        "<td>{:.1f}</td><td class=\"l\">{}{}</td><td class=\"l\">{}</td></tr>\n",
        n.fallsOut ? " class=\"out\"" : "", htmlEscape(n.name), htmlEscape(n.kind), n.points,
        n.medianRatio, n.worstZ, n.fallsOut ? "<b>OUT</b>: " : "", place, htmlEscape(n.source));
  }
  out +=
      "</table>\n<h2>Baseline</h2>\n<table><tr><th class=\"l\">kind</th><th class=\"l\">"
      "series</th><th>size</th><th>median GB/s</th><th>spread</th><th>nodes</th><th "
      "class=\"l\">from</th></tr>\n";
  for (const auto& b : r.baseline) {
    out += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.2f}</td>"
        "<td>{:.4f}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
        htmlEscape(b.kind), htmlEscape(b.series.text()), formatSize(b.bytes), b.median, b.spread,
        b.nodes, htmlEscape(b.from));
  }
  return out + "</table>\n</body></html>\n";
}

std::string baselineJson(const FleetReport& r) {
  return nlohmann::ordered_json{{"collbench_fleet_baseline", 1}, {"rows", baselineRows(r)}}.dump(
             2) +
         "\n";
}

KindReferences referencesFromBaseline(const std::string& json, const std::string& name) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object() || !j.contains("collbench_fleet_baseline") || !j.contains("rows") ||
      !j["rows"].is_array()) {
    throw UsageError(
        fmt::format("{}: not a fleet baseline (written by fleet --save-baseline)", name));
  }
  KindReferences refs;
  for (const auto& row : j["rows"]) {
    try {
      FleetReference f;
      f.series = {row.at("collective").get<std::string>(), row.at("variant").get<std::string>(),
                  row.at("placement").get<std::string>()};
      f.bytes = row.at("bytes").get<uint64_t>();
      f.median = row.at("median_gbps").get<double>();
      f.spread = row.at("spread").get<double>();
      f.nodes = row.value("nodes", 0);
      f.source = fmt::format("baseline {}", name);
      if (!(f.median > 0) || f.spread < 0) throw UsageError("bad figure");
      refs[row.at("kind").get<std::string>()].push_back(std::move(f));
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: a baseline row is not readable: {}", name, row.dump()));
    }
  }
  return refs;
}

}  // namespace cb
