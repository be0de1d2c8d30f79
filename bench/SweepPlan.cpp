#include "bench/SweepPlan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collectives/transport/Transports.h"
#include "core/Error.h"

namespace cb {
namespace {

void checkOptions(Team& team, const SweepOptions& o, const Registry& registry) {
  const Communicator& comm = team.comm();
  if (!o.variantOptions.schedule.transport.empty()) {
    auto names = transportNames();
    if (std::find(names.begin(), names.end(), o.variantOptions.schedule.transport) == names.end()) {
      throw UsageError(fmt::format("unknown transport '{}' (known: {})",
                                   o.variantOptions.schedule.transport, fmt::join(names, ", ")));
    }
  }
  if (o.collectives.empty()) throw UsageError("no collective to run");
  if (o.minBytes > o.maxBytes) {
    throw UsageError(fmt::format("minimum size {} is larger than maximum size {} (-b > -e)",
                                 o.minBytes, o.maxBytes));
  }
  if (o.stepBytes == 0) checkStepFactor(o);
  if (o.iterations < 1) throw UsageError("iterations -n must be at least 1");
  if (o.warmup < 0 || o.checkRounds < 0 || o.cycles < 1) {
    throw UsageError("-w and -c must be >= 0 and -N >= 1");
  }
  if (o.timeoutSeconds <= 0) throw UsageError("timeout -T must be positive");
  if (o.root < 0 || o.root >= comm.size()) {
    throw UsageError(fmt::format("root {} is out of range for {} ranks (-r)", o.root, comm.size()));
  }
  if (o.minBytes == o.maxBytes && o.minBytes > 0) {
    // One explicit size: it must split exactly (a sweep rounds down, as nccl-tests does).
    for (Collective c : o.collectives) {
      for (DataType t : o.dtypes) {
        size_t count = countForBytes(c, t, o.minBytes, comm.size());
        CollArgs a{c, t, RedOp::kSum, 0, count};
        if (algBytes(a, comm.size()) != o.minBytes) {
          uint64_t unit = algBytes(CollArgs{c, t, RedOp::kSum, 0, 1}, comm.size());
          throw UsageError(fmt::format(
              "{} B can't be split into whole {} elements for {} on {} ranks (use a multiple "
              "of {} B)",
              o.minBytes, dataTypeName(t), collectiveName(c), comm.size(), unit));
        }
      }
    }
  }
  for (Collective c : o.collectives) {
    if (!hasReduction(c)) continue;
    for (DataType t : o.dtypes) {
      for (RedOp op : o.ops) {
        if (!redOpValidFor(op, t)) {
          throw UsageError(
              fmt::format("reduction op {} makes no sense for {} (bitwise ops "
                          "need an integer type)",
                          redOpName(op), dataTypeName(t)));
        }
      }
    }
  }
  if (!runsEveryVariant(o)) {
    for (const auto& name : o.variants) {
      std::vector<const VariantInfo*> matches;
      for (Collective c : o.collectives) {
        if (const auto* v = registry.find(c, name)) matches.push_back(v);
      }
      if (matches.empty()) {
        std::vector<std::string> known;
        for (Collective c : o.collectives) {
          for (const auto* v : registry.forCollective(c)) {
            if (std::find(known.begin(), known.end(), v->name) == known.end()) {
              known.push_back(v->name);
            }
          }
        }
        throw UsageError(fmt::format("unknown algorithm '{}' for {} (known: {})", name,
                                     collectiveName(o.collectives.front()),
                                     fmt::join(known, ", ")));
      }
      // A variant asked for by name that can't run in this world at all is an environment
      // error (one line, exit 2), not a table of "unsupported" rows.
      std::optional<std::string> why;
      bool anyUsable = false;
      for (const auto* v : matches) {
        CollArgs probe{v->coll, o.dtypes.front(), o.ops.front(), o.root,
                       countForBytes(v->coll, o.dtypes.front(), o.maxBytes, comm.size())};
        auto reason = v->unsupported ? v->unsupported(team, probe, o.variantOptions) : std::nullopt;
        if (!reason) anyUsable = true;
        if (reason && !why) why = reason;
      }
      if (!anyUsable) {
        throw EnvironmentError(fmt::format("{} can't run here: {}", name, *why));
      }
    }
  }
}

}  // namespace

SweepPlan::SweepPlan(const SweepOptions& o, int nranks)
    : o_(o), nranks_(nranks), sizes_(sweepSizes(o)) {
  for (Collective c : o_.collectives) {
    variants_.push_back(selectedVariants(o_, c));
    for (DataType t : o_.dtypes) {
      CollArgs args{c, t, RedOp::kSum, 0, countForBytes(c, t, o_.maxBytes, nranks)};
      largestSide_ = std::max<uint64_t>(
          largestSide_,
          std::max(sendCount(args, nranks), recvCount(args, nranks)) * dataTypeSize(t));
    }
  }
  // The engine's order: cycle, collective, dtype, op, size, then the reference and each variant
  // with its placements. Variants sit inside the size loop so that all variants of a size are
  // measured close in time, and drifting machine noise hits them alike.
  for (int cycle = 0; cycle < o_.cycles; ++cycle) {
    for (size_t ci = 0; ci < o_.collectives.size(); ++ci) {
      const Collective c = o_.collectives[ci];
      if (variants_[ci].empty()) continue;
      for (DataType t : o_.dtypes) {
        std::vector<RedOp> ops = hasReduction(c) ? o_.ops : std::vector<RedOp>{RedOp::kSum};
        for (RedOp op : ops) {
          const size_t groupStart = points_.size();
          for (uint64_t requested : sizes_) {
            CollArgs args{c, t, op, hasRoot(c) ? o_.root : 0,
                          countForBytes(c, t, requested, nranks)};
            const uint64_t bytes = algBytes(args, nranks);
            if (o_.reference) points_.push_back({cycle, args, bytes, nullptr, Placement::kOut});
            for (const auto* v : variants_[ci]) {
              if (o_.outOfPlace) points_.push_back({cycle, args, bytes, v, Placement::kOut});
              if (o_.inPlace && hasInPlace(c)) {
                points_.push_back({cycle, args, bytes, v, Placement::kIn});
              }
            }
          }
          if (points_.size() > groupStart) points_.back().endsGroup = true;
        }
      }
    }
  }
}

SweepPlan SweepPlan::checked(Team& team, const SweepOptions& o) {
  checkOptions(team, o, sweepRegistry(o));
  return SweepPlan(o, team.size());
}

const std::vector<const VariantInfo*>& SweepPlan::variants(Collective c) const {
  static const std::vector<const VariantInfo*> kNone;
  for (size_t i = 0; i < o_.collectives.size(); ++i) {
    if (o_.collectives[i] == c) return variants_[i];
  }
  return kNone;
}

}  // namespace cb
