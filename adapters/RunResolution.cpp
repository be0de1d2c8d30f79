#include "adapters/RunResolution.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "core/Error.h"

namespace cb {

int64_t resolveRun(const Store& store, const std::string& text, const std::string& db) {
  if (text == "last" || text == "latest") {
    RunFilter newest;
    newest.limit = 1;
    std::vector<RunRecord> runs = store.listRuns(newest);
    if (runs.empty()) throw UsageError(fmt::format("no runs in '{}'", db));
    return runs[0].id;
  }
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
    throw UsageError(fmt::format("RUN '{}' is not a run id (a positive number, or last)", text));
  }
  return id;
}

}  // namespace cb
