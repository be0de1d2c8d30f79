#include "core/Communicator.h"

#include <algorithm>

namespace cb {

std::string_view worldKindName(WorldKind k) { return k == WorldKind::kLocal ? "local" : "mpi"; }

std::vector<std::string> Communicator::allgatherStrings(const std::string& s, Deadline d) {
  auto lengths = allgather<uint64_t>(s.size(), d);
  uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::string padded = s;
  padded.resize(longest);
  std::vector<std::string> out(size());
  if (longest == 0) return out;
  auto bytes = allgatherBytes(padded.data(), longest, d);
  for (int r = 0; r < size(); ++r) {
    out[r].assign(reinterpret_cast<const char*>(bytes.data()) + r * longest, lengths[r]);
  }
  return out;
}

bool Communicator::anyTrue(bool flag, Deadline d) {
  auto flags = allgather<uint8_t>(flag ? 1 : 0, d);
  return std::any_of(flags.begin(), flags.end(), [](uint8_t f) { return f != 0; });
}

}  // namespace cb
