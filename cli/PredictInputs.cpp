#include "cli/PredictInputs.h"

#include <fmt/format.h>

#include <charconv>

#include "cli/Command.h"
#include "core/Error.h"
#include "predict/TimeTable.h"
#include "results/import/Import.h"

namespace cb::cli {

using predict::Coll;
using predict::Point;
using predict::Scale;

int parsePositive(std::string_view text, std::string_view what) {
  int v = 0;
  auto [p, e] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (e != std::errc{} || p != text.data() + text.size() || v <= 0) {
    throw UsageError(fmt::format("predict: {} '{}' is not a positive whole number", what, text));
  }
  return v;
}

// "4x8" -> 4 nodes of 8 GPUs.
Scale parseScale(std::string_view text, int domainNodes, std::string_view where) {
  const size_t x = text.find('x');
  if (x == std::string_view::npos) {
    throw UsageError(
        fmt::format("predict: {}: scale '{}' is not NODESxGPUS (such as 4x8)", where, text));
  }
  Scale s;
  s.nodes = parsePositive(text.substr(0, x), "node count");
  s.gpusPerNode = parsePositive(text.substr(x + 1), "GPUs per node");
  s.domainNodes = domainNodes;
  if (s.ranks() % s.ncclNodes() != 0) {
    throw UsageError(fmt::format("predict: {}: {} nodes do not split into NVLink domains of {}",
                                 where, s.nodes, domainNodes));
  }
  return s;
}

// "SCALE:REST" -> scale and rest; no scale when the text has no ':' and `optional`.
std::pair<std::optional<Scale>, std::string> splitScale(const std::string& text, int domainNodes,
                                                        bool optional, std::string_view flag) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    if (optional) return {std::nullopt, text};
    throw UsageError(
        fmt::format("predict: {} '{}' is not NODESxGPUS:FILE (such as 4x8:log.txt)", flag, text));
  }
  return {parseScale(std::string_view(text).substr(0, colon), domainNodes, flag),
          text.substr(colon + 1)};
}

void addResults(const std::vector<ResultRecord>& results, Coll coll, const Scale& scale,
                const std::string& source, std::vector<Point>& out) {
  size_t taken = 0;
  for (const ResultRecord& r : results) {
    if (r.collective != predict::collName(coll) || !r.ok() || !r.timeKnown || r.timeUs <= 0) {
      continue;
    }
    if (r.placement == "in") continue;  // out-of-place, as nccl-tests' first columns
    if (r.nranks && *r.nranks != scale.ranks()) {
      throw UsageError(fmt::format("predict: {}: {} ranks, but its scale {} has {}", source,
                                   *r.nranks, scale.name(), scale.ranks()));
    }
    out.push_back({scale, r.sizeBytes, r.timeUs, predict::algoFromNote(r.message), source});
    ++taken;
  }
  if (taken == 0) {
    throw UsageError(
        fmt::format("predict: {}: no measured {} point", source, predict::collName(coll)));
  }
}

void readPoints(const std::string& path, const Scale& scale, Coll coll, std::vector<Point>& out) {
  const std::string text = readLogFile(path);
  if (predict::looksLikeTimeTable(text)) {
    for (const auto& row : predict::parseTimeTable(text, path))
      out.push_back({scale, row.bytes, row.timeUs, std::nullopt, path});
    return;
  }
  ImportOptions options;
  options.path = path;
  // The scale given: a log that states another world is refused. The collective is not imposed:
  // a log may hold several tests (alltoall and sendrecv); the points of `coll` are taken.
  options.worldSize = scale.ranks();
  std::vector<ResultRecord> results;
  for (auto& run : parseImport(text, ImportFormat::kAuto, options))
    results.insert(results.end(), run.results.begin(), run.results.end());
  addResults(results, coll, scale, path, out);
}

}  // namespace cb::cli
