#include "core/Clock.h"

#include <fmt/format.h>

#include "core/Error.h"

namespace cb {

void Deadline::check(const std::string& what) const {
  if (expired()) {
    throw TimeoutError(fmt::format("{} did not complete within {:g} s (-T)", what, seconds_));
  }
}

}  // namespace cb
