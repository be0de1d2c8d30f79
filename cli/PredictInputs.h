// The inputs of the scale model (docs/PREDICT.md) as `predict` and `replay --predict-ranks` take
// them: a scale NODESxGPUS, and the points of a log, a size_bytes,time_us table or stored results
// measured at that scale.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/Result.h"
#include "predict/ScaleModel.h"

namespace cb::cli {

int parsePositive(std::string_view text, std::string_view what);
// "4x8" -> 4 nodes of 8 GPUs in NVLink domains of `domainNodes` nodes; UsageError naming `where`.
predict::Scale parseScale(std::string_view text, int domainNodes, std::string_view where);
// "SCALE:REST" -> the scale and REST; without ':' no scale when `optional`, else UsageError.
std::pair<std::optional<predict::Scale>, std::string> splitScale(const std::string& text,
                                                                 int domainNodes, bool optional,
                                                                 std::string_view flag);
// The out-of-place measured points of `coll` among `results`; UsageError when there is none or a
// result states another world than the scale.
void addResults(const std::vector<ResultRecord>& results, predict::Coll coll,
                const predict::Scale& scale, const std::string& source,
                std::vector<predict::Point>& out);
// A log any importer reads (its world and collective must be the scale's and `coll`), or a
// size_bytes,time_us table.
void readPoints(const std::string& path, const predict::Scale& scale, predict::Coll coll,
                std::vector<predict::Point>& out);

}  // namespace cb::cli
