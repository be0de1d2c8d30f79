#include "core/Reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/Error.h"
#include "core/PeakModel.h"
#include "core/Size.h"
#include "core/Text.h"

namespace cb {
namespace {

// core/reference/reference-nodes.csv as a string (CMake writes it at configure time).
#include "ReferenceData.inc"

// The fields of one CSV record starting at `pos` (quoted fields may hold commas, doubled quotes
// and line breaks); advances `pos` past its line end and counts the lines it spans.
std::vector<std::string> csvRecord(std::string_view text, size_t& pos, int& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (quoted) {
      if (c == '"' && pos < text.size() && text[pos] == '"') {
        fields.back() += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      ++line;
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw UsageError(fmt::format("reference table: line {}: unclosed quote", line));
  return fields;
}

constexpr std::string_view kColumns[] = {"gpu",        "gpus_per_node", "nodes",     "fabric",
                                         "collective", "size_bytes",    "busbw_gbs", "algo_class",
                                         "kind",       "nccl_version",  "node_type", "network",
                                         "algo",       "source",        "notes"};

std::string className(std::string_view c) {
  if (c == "nvls") return "NVLS";
  if (c == "ring") return "Ring";
  if (c == "tree") return "Tree";
  return "class not stated";
}

std::string gbps(double v) { return fmt::format("{:.1f}", v); }

// An `expected` figure is stated roughly ("~370"): it stands for the values that round to it,
// half a unit of its last non-zero digit either way (365-375). A measurement is itself.
double halfUnit(const ReferenceFigure& f) {
  if (f.measured()) return 0;
  double unit = 1;
  for (double v = std::round(f.busbw); v >= 10 && std::fmod(v, 10 * unit) == 0;) unit *= 10;
  return unit / 2;
}
double lowEdge(const ReferenceFigure* f) { return f->busbw - halfUnit(*f); }
double highEdge(const ReferenceFigure* f) { return f->busbw + halfUnit(*f); }
std::string shown(const ReferenceFigure* f) { return (f->measured() ? "" : "~") + gbps(f->busbw); }

std::string range(const std::vector<const ReferenceFigure*>& figs) {
  auto [lo, hi] = std::minmax_element(figs.begin(), figs.end(),
                                      [](auto* a, auto* b) { return a->busbw < b->busbw; });
  return *lo == *hi || (*lo)->busbw == (*hi)->busbw ? shown(*lo) : shown(*lo) + "-" + shown(*hi);
}

const ReferenceFigure* lowestFigure(const std::vector<const ReferenceFigure*>& figs) {
  return *std::min_element(figs.begin(), figs.end(),
                           [](auto* a, auto* b) { return lowEdge(a) < lowEdge(b); });
}

// Distance of `v` from the span of a class's figures (0 inside).
double distance(const std::vector<const ReferenceFigure*>& figs, double v) {
  double lo = lowEdge(figs.front()), hi = highEdge(figs.front());
  for (const auto* f : figs) {
    lo = std::min(lo, lowEdge(f));
    hi = std::max(hi, highEdge(f));
  }
  return v < lo ? lo - v : v > hi ? v - hi : 0;
}

}  // namespace

int ReferenceFigure::nodeCount() const {
  int n = 0;
  for (char c : nodes) {
    if (c < '0' || c > '9' || n > 100000) return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::vector<ReferenceFigure> parseReferenceCsv(std::string_view text) {
  std::vector<ReferenceFigure> out;
  size_t pos = 0;
  int line = 1;
  auto header = csvRecord(text, pos, line);
  if (header.size() != std::size(kColumns) ||
      !std::equal(header.begin(), header.end(), std::begin(kColumns))) {
    throw UsageError("reference table: line 1: the header is not the table's columns");
  }
  while (pos < text.size()) {
    const int first = line;
    auto f = csvRecord(text, pos, line);
    if (f.size() == 1 && f[0].empty()) continue;
    auto bad = [&](std::string_view what) {
      return UsageError(fmt::format("reference table: line {}: {}", first, what));
    };
    if (f.size() != std::size(kColumns)) {
      throw bad(fmt::format("{} fields, the header has {}", f.size(), std::size(kColumns)));
    }
    ReferenceFigure r;
    r.line = first;
    r.gpu = f[0];
    char* end = nullptr;
    r.gpusPerNode = static_cast<int>(std::strtol(f[1].c_str(), &end, 10));
    if (f[1].empty() || *end != '\0' || r.gpusPerNode <= 0) throw bad("gpus_per_node");
    r.nodes = f[2];
    r.fabric = f[3];
    r.collective = f[4];
    if (!f[5].empty()) {
      r.sizeBytes = std::strtoull(f[5].c_str(), &end, 10);
      if (*end != '\0' || r.sizeBytes == 0) throw bad("size_bytes");
    }
    r.busbw = std::strtod(f[6].c_str(), &end);
    if (f[6].empty() || *end != '\0' || !(r.busbw > 0)) throw bad("busbw_gbs");
    r.algoClass = f[7];
    r.kind = f[8];
    if (r.kind != "measurement" && r.kind != "minimum" && r.kind != "minimum-unvalidated" &&
        r.kind != "expected") {
      throw bad(fmt::format("kind '{}'", r.kind));
    }
    if (r.algoClass != "" && r.algoClass != "nvls" && r.algoClass != "ring" &&
        r.algoClass != "tree") {
      throw bad(fmt::format("algo_class '{}'", r.algoClass));
    }
    if (r.gpu.empty() || r.collective.empty() || f[13].empty()) {
      throw bad("gpu, collective and source are required");
    }
    r.ncclVersion = f[9];
    r.nodeType = f[10];
    r.network = f[11];
    r.algo = f[12];
    r.source = f[13];
    r.notes = f[14];
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<ReferenceFigure>& referenceTable() {
  static const std::vector<ReferenceFigure> table = parseReferenceCsv(kReferenceCsv);
  return table;
}

std::string NodeKind::label() const {
  std::string s = fmt::format("{}x {}", gpusPerNode, gpu);
  if (nodes > 0) return s + fmt::format(", {} node{}", nodes, nodes == 1 ? "" : "s");
  return s + ", node count unknown";
}

std::string referenceGpu(std::string_view deviceName) {
  std::string n = toLower(deviceName);
  std::replace(n.begin(), n.end(), '-', ' ');
  auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
  // Longest names first: "gb200" holds "b200", "h100 nvl" holds "h100".
  if (has("gb200")) return "GB200";
  if (has("mi300x")) return "MI300X";
  if (has("mi100")) return "MI100";
  if (has("b200")) return "B200";
  if (has("h200")) return "H200";
  if (has("h800")) return "H800";
  if (has("h100 nvl")) return "H100 NVL";
  if (has("h100 pcie")) return "H100 PCIe";
  if (has("h100")) return "H100";  // "H100 80GB HBM3": the SXM board
  if (has("v100 sxm2")) return "V100 SXM2";
  if (has("v100") && has("pcie")) return "V100 PCIe";
  if (has("a100")) {
    if (has("pcie")) return has("80gb") ? "A100 PCIe 80GB" : "A100 PCIe";
    if (has("sxm4")) return has("80gb") ? "A100 SXM4 80GB" : "A100 SXM4 40GB";
    return "A100";
  }
  // A model the table does not hold keeps its name, so "no reference" names it; a name that
  // says no model (a driver without the GPU's name) is unknown.
  if (has("graphics device")) return "";
  return std::string(trim(deviceName));
}

std::string algoClassOf(std::string_view variant) {
  std::string v = toLower(variant);
  const size_t colon = v.find(':');
  if (!v.starts_with("nccl") || colon == std::string::npos) return "";
  const std::string algo = v.substr(colon + 1);
  if (algo == "nvls") return "nvls";
  if (algo == "ring") return "ring";
  if (algo == "tree" || algo == "nvlstree" || algo.starts_with("collnet")) return "tree";
  return "";
}

std::string_view kindVerdictName(KindVerdict::Kind k) {
  switch (k) {
    case KindVerdict::Kind::kNormal: return "normal";
    case KindVerdict::Kind::kLow: return "low";
    case KindVerdict::Kind::kNoReference: return "no-reference";
    case KindVerdict::Kind::kNotJudged: return "not-judged";
  }
  return "not-judged";
}

KindVerdict judgeForKind(const NodeKind& kind, std::string_view collective,
                         std::string_view algoClass,
                         const std::vector<std::pair<uint64_t, double>>& points) {
  KindVerdict v;
  double best = 0;
  uint64_t bytes = 0;
  for (auto [b, bw] : points) {
    if (b >= kJudgeMinBytes && bw > best) {
      best = bw;
      bytes = b;
    }
  }
  auto none = [&](std::string why) {
    v.kind = KindVerdict::Kind::kNoReference;
    v.line = "for its kind: no reference: " + why;
    return v;
  };
  if (!kind.known()) {
    return none(kind.gpu.empty() ? "the GPU model is not known"
                                 : "the GPUs per node are not known");
  }
  if (best <= 0) {
    v.kind = KindVerdict::Kind::kNotJudged;
    v.line =
        fmt::format("for its kind: not judged: no busbw at {} or more", formatSize(kJudgeMinBytes));
    return v;
  }
  const auto& table = referenceTable();
  std::vector<const ReferenceFigure*> same;  // this GPU, GPUs per node and collective
  bool anyGpu = false;
  for (const auto& r : table) {
    if (r.gpu != kind.gpu || r.gpusPerNode != kind.gpusPerNode) continue;
    anyGpu = true;
    if (r.collective == collective) same.push_back(&r);
  }
  if (!anyGpu) return none(fmt::format("the table has no {}x {} node", kind.gpusPerNode, kind.gpu));
  if (kind.nodes == 0) {
    return none(
        fmt::format("the node count of this {}x {} run is not known", kind.gpusPerNode, kind.gpu));
  }
  // Measurements at the run's node count; a multi-node run without one takes the nearest
  // published count, and says so.
  int nodes = kind.nodes;
  auto atNodes = [&](int n) {
    std::vector<const ReferenceFigure*> out;
    for (const auto* r : same) {
      if (r->measured() && r->sizeBytes > 0 && r->nodeCount() == n) out.push_back(r);
    }
    return out;
  };
  std::vector<const ReferenceFigure*> measured = atNodes(nodes);
  std::string nodesNote;
  if (measured.empty() && kind.nodes > 1) {
    double bestDistance = 0;
    for (const auto* r : same) {
      const int n = r->nodeCount();
      if (!r->measured() || r->sizeBytes == 0 || n < 2) continue;
      const double d = std::fabs(std::log2(static_cast<double>(n) / kind.nodes));
      if (nodes == kind.nodes || d < bestDistance) {
        nodes = n;
        bestDistance = d;
      }
    }
    if (nodes != kind.nodes) {
      measured = atNodes(nodes);
      nodesNote = fmt::format(" (none published at {} nodes)", kind.nodes);
    }
  }
  // The health minimums of the kind: the lowest that applies decides (a node that passes one of
  // its kind's checks is not failing them all).
  const ReferenceFigure* minimum = nullptr;
  double minimumFigure = 0;
  for (const auto* r : same) {
    if (!r->minimum()) continue;
    const bool nodesFit = r->nodeCount() == kind.nodes || (r->nodes == ">=2" && kind.nodes >= 2);
    if (!nodesFit) continue;
    double figure = best;
    if (r->sizeBytes > 0) {
      auto it = std::find_if(points.begin(), points.end(),
                             [&](const auto& p) { return p.first == r->sizeBytes; });
      if (it == points.end()) continue;  // stated at a size this run did not measure
      figure = it->second;
    }
    if (!minimum || r->busbw < minimum->busbw) {
      minimum = r;
      minimumFigure = figure;
    }
  }
  const std::string label = kind.label();
  if (measured.empty()) {
    if (!minimum) {
      return none(fmt::format("no published {} figure for {}", collective, label));
    }
    const bool low = minimumFigure < minimum->busbw;
    v.kind = low ? KindVerdict::Kind::kLow : KindVerdict::Kind::kNormal;
    v.figureLines.push_back(minimum->line);
    v.line = fmt::format(
        "for its kind ({}): no published {} measurement; {:.1f} GB/s is {} the health minimum "
        "{} ({}): {}",
        label, collective, minimumFigure, low ? "below" : "at or above", gbps(minimum->busbw),
        minimum->source, low ? "low" : "normal");
    return v;
  }
  // The nearest published size (log distance), at most 4x away.
  uint64_t size = 0;
  double sizeDistance = 0;
  for (const auto* r : measured) {
    const double d =
        std::fabs(std::log2(static_cast<double>(r->sizeBytes) / static_cast<double>(bytes)));
    if (size == 0 || d < sizeDistance) {
      size = r->sizeBytes;
      sizeDistance = d;
    }
  }
  if (sizeDistance > 2) {
    return none(
        fmt::format("the published {} figures for {} are at {} and beyond, more than 4x "
                    "from {}",
                    collective, label, formatSize(size), formatSize(bytes)));
  }
  std::vector<const ReferenceFigure*> atSize;
  std::map<std::string, std::vector<const ReferenceFigure*>> byClass;
  for (const auto* r : measured) {
    if (r->sizeBytes != size) continue;
    atSize.push_back(r);
    byClass[r->algoClass].push_back(r);
  }
  // A figure stated roughly joins them at its size, or, without a size, for a class that has no
  // measurement here (8x H100 on one node: Ring "~370" beside NVLS 478.9 at 8 GiB).
  for (const auto* r : same) {
    if (r->kind != "expected" || r->nodeCount() != nodes) continue;
    const bool fits = r->sizeBytes == size ||
                      (r->sizeBytes == 0 && !r->algoClass.empty() && !byClass.count(r->algoClass));
    if (!fits) continue;
    atSize.push_back(r);
    byClass[r->algoClass].push_back(r);
  }
  // The figures by class where the table knows a class ("Ring 367.2-367.6, NVLS 480.0-482.3; ").
  std::string classes;
  for (const auto& c : {"ring", "nvls", "tree", ""}) {
    auto it = byClass.find(c);
    if (it == byClass.end() || (byClass.size() == 1 && it->first.empty())) continue;
    classes += fmt::format("{}{} {}", classes.empty() ? "" : ", ", className(c), range(it->second));
  }
  if (!classes.empty()) classes += "; ";
  std::string head =
      fmt::format("for its kind: published {} {}{} figures at {}: {} GB/s busbw ({}{} figure{})",
                  label, collective, nodesNote, formatSize(size), range(atSize), classes,
                  atSize.size(), atSize.size() == 1 ? "" : "s");
  if (nodes != kind.nodes) {
    head = fmt::format(
        "for its kind: published {}x {}, {} nodes {}{} figures at {}: {} GB/s busbw ({}{} "
        "figure{})",
        kind.gpusPerNode, kind.gpu, nodes, collective, nodesNote, formatSize(size), range(atSize),
        classes, atSize.size(), atSize.size() == 1 ? "" : "s");
  }
  // Which figures it is set against: the run's algorithm class when it states one and the table
  // has it; else, where classes differ by design (NVLS vs Ring), the class it lies nearest.
  std::vector<const ReferenceFigure*> against = atSize;
  std::string what;
  std::string cls(algoClass);
  if (!cls.empty() && byClass.count(cls)) {
    against = byClass[cls];
    what = fmt::format("for {}", className(cls));
  } else if (!cls.empty()) {
    what = fmt::format("(no {} figure published; against all)", className(cls));
  } else {
    std::vector<std::string> known;
    for (const auto& [c, figs] : byClass) {
      if (!c.empty()) known.push_back(c);
    }
    if (known.size() >= 2) {
      std::string nearest = known.front();
      for (const auto& c : known) {
        if (distance(byClass[c], best) < distance(byClass[nearest], best)) nearest = c;
      }
      against = byClass[nearest];
      what = fmt::format("for {}", className(nearest));
      head += fmt::format(": a {}-class figure", className(nearest));
    }
  }
  for (const auto* r : atSize) v.figureLines.push_back(r->line);
  const ReferenceFigure* low = lowestFigure(against);
  const bool below = best < lowEdge(low);
  const bool belowMinimum = minimum && minimumFigure < minimum->busbw;
  std::string minimumText;
  if (belowMinimum) {
    minimumText =
        fmt::format("; below the health minimum {} ({})", gbps(minimum->busbw), minimum->source);
    v.figureLines.push_back(minimum->line);
  }
  if (below && (!minimum || belowMinimum)) {
    v.kind = KindVerdict::Kind::kLow;
    v.line = fmt::format(
        "{}: {:.1f} GB/s at {} is low{}: below every published figure (lowest "
        "{}, {}){}",
        head, best, formatSize(bytes), what.empty() ? "" : " " + what, shown(low), low->source,
        minimumText);
    return v;
  }
  v.kind = KindVerdict::Kind::kNormal;
  double highest = 0;
  for (const auto* f : against) highest = std::max(highest, highEdge(f));
  const std::string place =
      below ? fmt::format(
                  "below every published figure (lowest {}, {}) but not below the health "
                  "minimum {}",
                  shown(low), low->source, gbps(minimum->busbw))
      : best > highest ? "above every published figure"
                       : "within the published range";
  v.line = fmt::format("{}: {:.1f} GB/s at {} is normal{}: {}{}", head, best, formatSize(bytes),
                       what.empty() ? "" : " " + what, place, minimumText);
  return v;
}

}  // namespace cb
