#include "results/Records.h"

namespace cb {

std::string_view runStatusName(RunStatus s) {
  static constexpr std::string_view kNames[] = {"running", "ok", "failed", "interrupted"};
  return kNames[static_cast<size_t>(s)];
}

std::optional<RunStatus> parseRunStatus(std::string_view name) {
  for (RunStatus s :
       {RunStatus::kRunning, RunStatus::kOk, RunStatus::kFailed, RunStatus::kInterrupted}) {
    if (runStatusName(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace cb
