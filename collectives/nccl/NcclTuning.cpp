// Parsing and capture of NCCL's TUNING log lines (see NcclTuning.h).
#include "collectives/nccl/NcclTuning.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "core/EnumNames.h"
#include "core/Error.h"

namespace cb {
namespace {

// The word after `key` (up to a space or the end).
std::string_view wordAfter(std::string_view s, std::string_view key) {
  auto at = s.find(key);
  if (at == std::string_view::npos) return {};
  s.remove_prefix(at + key.size());
  return s.substr(0, s.find(' '));
}

struct LogState {
  std::mutex mutex;
  bool enabled = false;
  std::string path;
  std::streamoff offset = 0;
};

LogState& state() {
  static LogState s;
  return s;
}

}  // namespace

std::optional<NcclTuningLine> parseNcclTuningLine(std::string_view line) {
  constexpr std::string_view kInfo = "NCCL INFO ";
  auto at = line.find(kInfo);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kInfo.size());
  auto colon = rest.find(": ");
  auto arrow = rest.find(" Bytes -> ");
  if (colon == std::string_view::npos || arrow == std::string_view::npos || arrow < colon) {
    return std::nullopt;
  }
  NcclTuningLine out;
  std::string_view head = rest.substr(0, colon);
  constexpr std::string_view kSym = " [Symmetric]";
  bool symmetric = head.size() > kSym.size() && head.substr(head.size() - kSym.size()) == kSym;
  if (symmetric) head.remove_suffix(kSym.size());
  out.func = std::string(head);
  std::string_view number = rest.substr(colon + 2, arrow - colon - 2);
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), out.bytes);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  std::string_view tail = rest.substr(arrow);
  if (symmetric) {
    out.kernel = std::string(wordAfter(tail, "Kernel "));
    if (out.kernel.empty()) return std::nullopt;
  } else {
    out.algo = std::string(wordAfter(tail, "Algo "));
    out.proto = std::string(wordAfter(tail, " proto "));
    if (out.algo.empty() || out.proto.empty()) return std::nullopt;
  }
  return out;
}

// NCCL's function names in its tuning lines; alltoall and sendrecv are not tuned there.
constexpr EnumRow<Collective> kNcclFuncs[] = {{Collective::kAllReduce, "AllReduce"},
                                              {Collective::kAllGather, "AllGather"},
                                              {Collective::kReduceScatter, "ReduceScatter"},
                                              {Collective::kBroadcast, "Broadcast"},
                                              {Collective::kReduce, "Reduce"}};
std::string_view ncclFuncName(Collective c) { return enumName(kNcclFuncs, c, ""); }

std::string ncclChoiceFor(std::span<const std::string> lines, Collective c, uint64_t bytes) {
  std::string_view func = ncclFuncName(c);
  std::vector<std::string> seen;
  for (const auto& l : lines) {
    auto parsed = parseNcclTuningLine(l);
    if (!parsed || parsed->func != func || parsed->bytes != bytes) continue;
    std::string what = parsed->kernel.empty() ? parsed->algo + "/" + parsed->proto
                                              : "symmetric kernel " + parsed->kernel;
    if (std::find(seen.begin(), seen.end(), what) == seen.end()) seen.push_back(what);
  }
  std::string out;
  for (const auto& s : seen) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string ncclChoiceNote(const std::string& choice, const std::string& forcedAlgo,
                           const std::string& forcedProto) {
  if (choice.empty()) return "";
  std::string note = "NCCL ran " + choice;
  if (forcedAlgo.empty() && forcedProto.empty()) return note;
  // Every choice NCCL logged must be the forced one.
  bool followed =
      choice.find(", ") == std::string::npos && choice.rfind("symmetric", 0) == std::string::npos;
  if (followed) {
    auto slash = choice.find('/');
    std::string algo = choice.substr(0, slash), proto = choice.substr(slash + 1);
    followed =
        (forcedAlgo.empty() || algo == forcedAlgo) && (forcedProto.empty() || proto == forcedProto);
  }
  if (!followed) {
    note += fmt::format("; NOT the forced {}/{}", forcedAlgo.empty() ? "auto" : forcedAlgo,
                        forcedProto.empty() ? "auto" : forcedProto);
  }
  return note;
}

void NcclTuningLog::enable() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (s.enabled) return;
  for (const char* var : {"NCCL_DEBUG", "NCCL_DEBUG_FILE", "NCCL_DEBUG_SUBSYS"}) {
    const char* v = std::getenv(var);
    if (v && *v) {
      throw UsageError(fmt::format(
          "--nccl-choice sets NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE itself, but {} "
          "is set ('{}'): unset it or drop --nccl-choice",
          var, v));
    }
  }
  const char* dir = std::getenv("TMPDIR");
  s.path = fmt::format("{}/collbench-nccl-tuning-{}.log", dir && *dir ? dir : "/tmp", getpid());
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "TUNING", 1);
  setenv("NCCL_DEBUG_FILE", s.path.c_str(), 1);
  s.offset = 0;
  s.enabled = true;
}

bool NcclTuningLog::enabled() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  return s.enabled;
}

std::vector<std::string> NcclTuningLog::drain() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  std::vector<std::string> lines;
  if (!s.enabled) return lines;
  std::ifstream in(s.path);
  if (!in) return lines;
  in.seekg(s.offset);
  std::string line;
  // Only whole lines: NCCL may be writing the next one.
  while (std::getline(in, line)) {
    if (in.eof()) break;
    s.offset += static_cast<std::streamoff>(line.size() + 1);
    // Warnings went to the file too: they still belong on stderr.
    if (line.find("NCCL WARN") != std::string::npos) std::fprintf(stderr, "%s\n", line.c_str());
    lines.push_back(line);
  }
  return lines;
}

void NcclTuningLog::close() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.enabled) return;
  std::remove(s.path.c_str());
  s.enabled = false;
}

}  // namespace cb
