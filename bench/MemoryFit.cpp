#include "bench/MemoryFit.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "bench/SweepPlan.h"
#include "bench/Verify.h"
#include "collectives/Registry.h"
#include "collectives/algorithms/Algorithms.h"
#include "core/Error.h"
#include "core/Size.h"

namespace cb {
namespace {

// Where a planned variant's buffers live once --transport has moved it (variantOnTransport).
MemoryKind memoryOf(const VariantInfo* v, const SweepOptions& o) {
  return variantOnTransport(v, o.variantOptions.schedule.transport)->memory;
}

// Bytes of scratch the planned algorithms of `args` need on the rank that needs most (rank 0
// and rank n-1 cover the asymmetric ones), of the given memory: hand-written algorithms keep
// their scratch where their transport keeps buffers (device memory with --transport cuda).
uint64_t scratchBytes(const SweepPlan& plan, const CollArgs& args, int nranks, MemoryKind memory) {
  const SweepOptions& o = plan.options();
  const auto& planned = plan.variants(args.coll);
  AlgoOptions ao;
  ao.ranksPerNode = o.variantOptions.schedule.ranksPerNode;
  const size_t es = dataTypeSize(args.dtype);
  if (o.variantOptions.schedule.chunkBytes > 0)
    ao.chunkElements = o.variantOptions.schedule.chunkBytes / es;
  uint64_t most = 0;
  for (const auto& a : algorithms()) {
    const bool inPlan = std::any_of(planned.begin(), planned.end(), [&](const VariantInfo* v) {
      return v->name == a.name && memoryOf(v, o) == memory;
    });
    if (a.coll != args.coll || !inPlan) continue;
    if (a.unsupported && a.unsupported(nranks, args, ao)) continue;
    for (int rank : {0, nranks - 1}) {
      try {
        most = std::max(most, saturatingMul(a.build(rank, nranks, args, ao).scratchCount, es));
      } catch (const std::exception&) {
        // An algorithm that can't build this point fails it at run time; it needs nothing here.
      }
    }
  }
  return most;
}

uint64_t readNumber(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s == "max") return std::numeric_limits<uint64_t>::max();
  try {
    return std::stoull(s);
  } catch (const std::exception&) {
    return std::numeric_limits<uint64_t>::max();
  }
}

// The cgroup (v2) this process belongs to, from /proc/self/cgroup ("0::/path").
std::string cgroupDir() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "";
}

}  // namespace

MemoryNeed sweepMemoryPerRank(const SweepOptions& o, int nranks) {
  return sweepMemoryPerRank(SweepPlan(o, nranks));
}

MemoryNeed sweepMemoryPerRank(const SweepPlan& plan) {
  const SweepOptions& o = plan.options();
  const int nranks = plan.nranks();
  MemoryNeed need;
  for (Collective c : o.collectives) {
    const auto& planned = plan.variants(c);
    if (planned.empty()) continue;  // nothing of it runs
    auto uses = [&](MemoryKind k) {
      return std::any_of(planned.begin(), planned.end(),
                         [&](const VariantInfo* v) { return memoryOf(v, o) == k; });
    };
    const bool onHost = uses(MemoryKind::kHost) || o.reference;  // memcpy copies host buffers
    const bool onDevice = uses(MemoryKind::kDevice);
    for (DataType t : o.dtypes) {
      CollArgs args{c, t, RedOp::kSum, 0, countForBytes(c, t, o.maxBytes, nranks)};
      const uint64_t es = dataTypeSize(t);
      // Saturating: sizes near 2^63 must add up to "more than 16 EiB", not wrap to nothing.
      const uint64_t sb = saturatingMul(sendCount(args, nranks), es);
      const uint64_t rb = saturatingMul(recvCount(args, nranks), es);
      const uint64_t big = std::max(sb, rb);
      // The pool: out of place a send and a receive buffer, in place one buffer of the larger;
      // the memcpy reference copies a send-sized buffer into another.
      uint64_t buffers = o.outOfPlace ? saturatingAdd(sb, rb) : big;
      if (o.inPlace) buffers = std::max(buffers, saturatingAdd(big, o.outOfPlace ? rb : 0));
      // Verification works in chunks (bench/Verify.h): the input staged one chunk at a time,
      // and when checking, each of up to 8 threads holds a chunk of the output and one of the
      // expected values; host memory for device buffers too, but never copies of the buffers.
      const uint64_t chunk = std::min<uint64_t>(big / es, kVerifyChunkElements) * es;
      const uint64_t chunks = (rb / es + kVerifyChunkElements - 1) / kVerifyChunkElements;
      const uint64_t workers = std::clamp<uint64_t>(chunks, 1, 8);
      uint64_t verification = o.checkRounds > 0 ? std::max(chunk, 2 * chunk * workers) : chunk;
      if (onHost) {
        uint64_t host = o.reference ? std::max(buffers, saturatingMul(2, sb)) : buffers;
        need.buffers = std::max(need.buffers, host);
        need.scratch = std::max(need.scratch, scratchBytes(plan, args, nranks, MemoryKind::kHost));
      }
      if (onDevice) {
        need.deviceBuffers = std::max(need.deviceBuffers, buffers);
        need.deviceScratch =
            std::max(need.deviceScratch, scratchBytes(plan, args, nranks, MemoryKind::kDevice));
      }
      need.verification = std::max(need.verification, verification);
    }
  }
  return need;
}

HostMemory readHostMemory() {
  HostMemory m;
  m.availableBytes = std::numeric_limits<uint64_t>::max();
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(line.substr(13));
      uint64_t kib = 0;
      if (in >> kib) {
        m.availableBytes = kib * 1024;
        m.source = "MemAvailable";
      }
    }
  }
  std::string dir = cgroupDir();
  if (!dir.empty()) {
    uint64_t limit = readNumber(dir + "/memory.max");
    uint64_t used = readNumber(dir + "/memory.current");
    if (limit != std::numeric_limits<uint64_t>::max() && used <= limit &&
        limit - used < m.availableBytes) {
      m.availableBytes = limit - used;
      m.source = "cgroup memory.max";
    }
  }
  return m;
}

void checkMemoryFit(const MemoryNeed& need, int ranksOnHost, const HostMemory& host,
                    uint64_t maxBytes) {
  // No GPU holds 16 EiB either, whether or not one is here to ask (checkDeviceMemoryFit).
  if (need.devicePerRank() >= kSaturatedBytes) {
    throw UsageError(
        fmt::format("sizes up to {} (-e) need more than 16 EiB of GPU memory per rank; lower -e",
                    formatSize(maxBytes)));
  }
  const uint64_t perRank = need.perRank();
  const uint64_t limit = kSaturatedBytes;
  const uint64_t total = saturatingMul(perRank, static_cast<uint64_t>(std::max(ranksOnHost, 1)));
  // Past 16 EiB no host can hold it, whatever is known about this one.
  if (total < limit && (host.source.empty() || total <= host.availableBytes)) return;
  // A figure that reached the saturated 2^64 - 1 is past what it can count.
  auto bytes = [&](uint64_t b) {
    return b == limit ? std::string("more than 16 EiB") : formatSize(b);
  };
  throw UsageError(fmt::format(
      "sizes up to {} (-e) need about {} per rank (buffers {}, verification {}, scratch {}) x {} "
      "rank(s) on this host = {}, but only {} is available ({}); lower -e, -c 0 or the ranks",
      formatSize(maxBytes), bytes(perRank), bytes(need.buffers), bytes(need.verification),
      bytes(need.scratch), ranksOnHost, bytes(total),
      host.source.empty() ? std::string("?") : formatSize(host.availableBytes),
      host.source.empty() ? std::string("not known here") : host.source));
}

void checkDeviceMemoryFit(const MemoryNeed& need, int ranksOnDevice, uint64_t freeBytes,
                          const std::string& device, uint64_t maxBytes) {
  const uint64_t perRank = need.devicePerRank();
  if (perRank == 0) return;
  const uint64_t limit = kSaturatedBytes;
  const uint64_t total = saturatingMul(perRank, static_cast<uint64_t>(std::max(ranksOnDevice, 1)));
  if (total <= freeBytes && total < limit) return;
  throw UsageError(fmt::format(
      "sizes up to {} (-e) need about {} of GPU memory per rank (buffers {}, scratch {}){} = {}, "
      "but {} has {} free; lower -e",
      formatSize(maxBytes), formatSize(perRank), formatSize(need.deviceBuffers),
      formatSize(need.deviceScratch),
      ranksOnDevice > 1 ? fmt::format(" x {} ranks sharing the GPU", ranksOnDevice) : "",
      total == limit ? std::string("more than 16 EiB") : formatSize(total), device,
      formatSize(freeBytes)));
}

}  // namespace cb
