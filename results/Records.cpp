#include "results/Records.h"

namespace cb {

std::string_view runStatusName(RunStatus s) {
  static constexpr std::string_view kNames[] = {"running", "ok", "failed", "interrupted"};
  return kNames[static_cast<size_t>(s)];
}

}  // namespace cb
