#include "cli/Validate.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "bench/MemoryFit.h"
#if defined(COLLBENCH_HAVE_CUDA)
#include "collectives/nccl/GpuDevice.h"
#endif
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "core/HostMap.h"
#include "core/Size.h"
#include "core/Text.h"
#include "session/World.h"

namespace cb::cli {
namespace {

constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;
constexpr size_t kMaxLabelBytes = 200;

}  // namespace

std::optional<double> finiteNumber(std::string_view text) {
  const std::string t(text);
  if (t.empty() || t.find_first_not_of("0123456789.eE+-") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

void checkListElements(const std::string& text, std::string_view flag) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find(',', start), text.size());
    if (trim(std::string_view(text).substr(start, end - start)).empty()) {
      throw UsageError(fmt::format("{} '{}' has an empty element", flag, text));
    }
    start = end + 1;
  }
}

void checkRange(double value, std::string_view flag, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi) {
    throw UsageError(fmt::format("{} {} is out of range ({:g}..{:g})", flag, value, lo, hi));
  }
}

void checkNp(int np) {
  if (np != kNpNotGiven && (np < 1 || np > kMaxLocalRanks)) {
    throw UsageError(fmt::format("--np {} is out of range (1..{})", np, kMaxLocalRanks));
  }
}

void checkTimeout(double seconds, std::string_view flag) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeoutSeconds) {
    throw UsageError(fmt::format("{} {} must be a number of seconds above 0 and at most {:g}", flag,
                                 seconds, kMaxTimeoutSeconds));
  }
}

void checkDbPath(const std::string& db, bool noDb) {
  if (!noDb && db.empty()) {
    throw UsageError("--db is empty: give a database file, or --no-db to store nothing");
  }
}

void checkLabel(const std::string& label, std::string_view flag) {
  if (label.size() > kMaxLabelBytes) {
    throw UsageError(
        fmt::format("{} is {} bytes long (at most {})", flag, label.size(), kMaxLabelBytes));
  }
  for (char ch : label) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      throw UsageError(
          fmt::format("{} contains a control character (0x{:02x}): labels are one line", flag, c));
    }
  }
  if (!validUtf8(label)) throw UsageError(fmt::format("{} is not valid UTF-8", flag));
}

void checkTransportName(const std::string& name) {
  if (name.empty()) return;
  auto names = transportNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw UsageError(
        fmt::format("unknown transport '{}' (known: {})", name, fmt::join(names, ", ")));
  }
}

void checkRanksPerNode(int ranksPerNode) {
  if (ranksPerNode < 0) {
    throw UsageError(
        fmt::format("--ranks-per-node {} must be positive (or left out)", ranksPerNode));
  }
}

void checkSteps(const SweepOptions& s, bool stepBytesGiven) {
  if (stepBytesGiven && s.stepBytes == 0) {
    throw UsageError("-i 0 would never grow the size: give at least 1 byte, or use -f");
  }
  if (stepBytesGiven && s.stepBytes > s.maxBytes) {
    throw UsageError(
        fmt::format("-i {} is larger than -e {}: it would never step", s.stepBytes, s.maxBytes));
  }
  if (!stepBytesGiven) checkStepFactor(s);
}

void checkRunInputs(const SweepOptions& s, bool stepBytesGiven, int ranksPerNode,
                    const std::string& db, bool noDb, const std::string& label) {
  checkTimeout(s.timeoutSeconds, "-T");
  checkSteps(s, stepBytesGiven);
  if (s.timeBudgetSeconds != 0) checkRange(s.timeBudgetSeconds, "--time-budget", 1e-6, 3600);
  if (s.injectDelayUs != 0) checkRange(s.injectDelayUs, "--inject-delay", 0, 1e6);
  if (s.injectDelayFraction != 0) {
    checkRange(s.injectDelayFraction * 100, "--inject-delay (percent)", 0, 1000);
  }
  checkRanksPerNode(ranksPerNode);
  checkDbPath(db, noDb);
  checkLabel(label);
}

void checkInjectDelayTarget(Team& team, const SweepPlan& plan) {
  const SweepOptions& s = plan.options();
  if ((s.injectDelayUs <= 0 && s.injectDelayFraction <= 0) || s.injectDelayVariant.empty()) return;
  checkNamesVariant(team, plan, s.injectDelayVariant, "--inject-delay");
}

void checkNamesVariant(Team& team, const SweepPlan& plan, const std::string& want,
                       std::string_view flag) {
  const SweepOptions& s = plan.options();
  // Stored labels of hand-written variants carry the transport (the team's default unless given;
  // finding it is collective, so it is asked only when the target has one).
  std::string transport = s.variantOptions.schedule.transport;
  if (transport.empty() && want.find('/') != std::string::npos) {
    transport = team.defaultTransport();
  }
  std::vector<std::string> labels;
  for (Collective c : s.collectives) {
    for (const auto* v : plan.variants(c)) {
      std::string label =
          v->backend == "hand" && !transport.empty() ? v->name + "/" + transport : v->name;
      if (v->name == want || label == want) return;
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    }
  }
  if (s.reference && want == "memcpy") return;
  throw UsageError(fmt::format("{}: '{}' matches no variant of this run (variants: {})", flag, want,
                               fmt::join(labels, ", ")));
}

namespace {

// "" when the rank's GPU holds what the ranks that share it need (or there is no GPU to ask),
// else the refusal. Collective: ranks sharing a GPU (NCCL_HOSTID) are counted together.
std::string checkDeviceMemory(Team& team, const MemoryNeed& need, uint64_t maxBytes,
                              Deadline deadline) {
#if defined(COLLBENCH_HAVE_CUDA)
  std::string mine;
  uint64_t freeBytes = 0;
  if (need.devicePerRank() > 0 && !gpuUnavailableReason()) {
    DeviceChoice choice = chooseDevice(team.comm());
    if (choice.device >= 0) {
      mine = hostName() + " " + describeDevice(choice.device).pciBusId;
      freeBytes = deviceFreeBytes(choice.device);
    }
  }
  auto all = team.comm().allgatherStrings(mine, deadline);
  if (mine.empty()) return "";
  const int sharing = static_cast<int>(std::count(all.begin(), all.end(), mine));
  try {
    checkDeviceMemoryFit(need, sharing, freeBytes, "GPU " + mine.substr(mine.find(' ') + 1),
                         maxBytes);
  } catch (const UsageError& e) {
    return e.what();
  }
#else
  (void)team, (void)need, (void)maxBytes, (void)deadline;
#endif
  return "";
}

}  // namespace

std::string checkMemoryOnEveryHost(Team& team, const MemoryNeed& need, uint64_t maxBytes,
                                   double timeoutSeconds) {
  const Deadline deadline = Deadline::after(timeoutSeconds);
  std::string error;
  const int onHost = team.hosts().localSize.at(team.rank());
  const HostMemory host = readHostMemory();
  try {
    checkMemoryFit(need, onHost, host, maxBytes);
  } catch (const UsageError& e) {
    error = e.what();
  }
  // GPU memory apart from host memory: the buffers of NCCL and --transport cuda live there.
  const std::string device = checkDeviceMemory(team, need, maxBytes, deadline);
  if (error.empty()) error = device;
  // Every rank stops with the same line (the first rank's that does not fit).
  for (const auto& e : team.comm().allgatherStrings(error, deadline)) {
    if (!e.empty()) throw UsageError(e);
  }
  std::string line =
      fmt::format("memory: about {} per rank x {} rank(s) on this host, of {} available",
                  formatSize(need.perRank()), onHost,
                  host.source.empty() ? std::string("?") : formatSize(host.availableBytes));
  if (need.devicePerRank() > 0) {
    line += fmt::format("; GPU memory about {} per rank", formatSize(need.devicePerRank()));
  }
  return line;
}

std::string checkSweepMemory(Team& team, const SweepPlan& plan) {
  return checkMemoryOnEveryHost(team, sweepMemoryPerRank(plan), plan.options().maxBytes,
                                plan.options().timeoutSeconds);
}

}  // namespace cb::cli
