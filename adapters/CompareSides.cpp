// The sides of compare and gate (CompareSides.h).
#include "adapters/CompareSides.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/Error.h"
#include "results/CpuLoadDetail.h"

namespace cb {

namespace {

std::string runName(const RunRecord& r) {
  return r.label.empty() ? fmt::format("run {}", r.id) : fmt::format("run {} ({})", r.id, r.label);
}

// Resolves one side. `exclude` is the other side (for label specs: not those runs, not newer).
std::vector<RunRecord> resolveSide(const Store& store, const RunSpec& spec,
                                   const std::vector<RunRecord>& exclude) {
  std::vector<RunRecord> out;
  if (spec.last) {
    RunFilter newest;
    newest.limit = 1;
    out = store.listRuns(newest);
    if (out.empty()) throw UsageError(fmt::format("no runs in '{}'", store.path()));
  } else if (!spec.label.empty()) {
    RunFilter f;
    f.label = spec.label;
    out = pickLabelRuns(store.listRuns(f), spec, exclude);
    if (out.empty()) {
      throw UsageError(fmt::format("no finished run labelled '{}'{} in '{}'", spec.label,
                                   exclude.empty() ? "" : " before the other side's runs",
                                   store.path()));
    }
  } else {
    for (int64_t id : spec.ids) {
      std::optional<RunRecord> run = store.findRun(id);
      if (!run) throw UsageError(fmt::format("no run {} in '{}'", id, store.path()));
      out.push_back(*run);
    }
  }
  return out;
}

std::string sideName(const RunSpec& spec, const std::vector<RunRecord>& runs) {
  if (runs.size() == 1 && spec.label.empty()) return runName(runs[0]);
  std::vector<int64_t> ids;
  for (const RunRecord& r : runs) ids.push_back(r.id);
  return fmt::format("{} (run{} {})", spec.text, ids.size() > 1 ? "s" : "", fmt::join(ids, ", "));
}

RunSet loadSet(const Store& store, std::vector<RunRecord> runs) {
  RunSet set;
  for (const RunRecord& r : runs) {
    std::vector<ResultRecord> results = store.resultsWithSamples(r.id);
    set.results.insert(set.results.end(), std::make_move_iterator(results.begin()),
                       std::make_move_iterator(results.end()));
  }
  set.runs = std::move(runs);
  return set;
}

}  // namespace

LoadedRuns loadRuns(const Store& store, const std::string& base, const std::string& cand,
                    bool strict) {
  RunSpec candSpec = RunSpec::parse(cand);
  RunSpec baseSpec = RunSpec::parse(base);
  std::vector<RunRecord> candRuns = resolveSide(store, candSpec, {});
  std::vector<RunRecord> baseRuns = resolveSide(store, baseSpec, candRuns);
  for (const RunRecord& b : baseRuns) {
    for (const RunRecord& c : candRuns) {
      if (b.id == c.id) {
        throw UsageError(fmt::format(
            "run {} is both baseline and candidate: a run compared with itself proves nothing",
            b.id));
      }
    }
  }
  LoadedRuns out;
  // A run that did not finish is no reference. A failed candidate is judged (it regresses);
  // one still running or interrupted is refused: its missing cases would pass silently.
  for (const auto& [runs, isBase] : {std::pair{&baseRuns, true}, std::pair{&candRuns, false}}) {
    for (const RunRecord& r : *runs) {
      if (r.status == RunStatus::kOk) continue;
      std::string what = fmt::format("{} run {} is {}", isBase ? "baseline" : "candidate", r.id,
                                     runStatusName(r.status));
      bool refuse = isBase || r.status != RunStatus::kFailed;
      if (strict && refuse) {
        throw UsageError(fmt::format("{}: only finished runs can be gated{}", what,
                                     isBase ? " as a baseline" : ""));
      }
      out.warnings.push_back(what);
    }
  }
  out.baseName = sideName(baseSpec, baseRuns);
  out.candName = sideName(candSpec, candRuns);
  out.base = loadSet(store, std::move(baseRuns));
  out.cand = loadSet(store, std::move(candRuns));
  return out;
}

RunSet loadSide(const Store& store, const std::string& text, std::string& name) {
  RunSpec spec = RunSpec::parse(text);
  std::vector<RunRecord> runs = resolveSide(store, spec, {});
  for (const RunRecord& r : runs) {
    if (r.status != RunStatus::kOk) {
      throw UsageError(fmt::format("run {} is {}: only finished runs measure the noise", r.id,
                                   runStatusName(r.status)));
    }
  }
  name = sideName(spec, runs);
  return loadSet(store, std::move(runs));
}

bool SidesLoad::any() const {
  for (const auto* side : {&base, &cand}) {
    for (double x : *side) {
      if (x >= 0) return true;
    }
  }
  return false;
}

SidesLoad sidesLoad(const Store& store, const LoadedRuns& runs) {
  SidesLoad load;
  auto of = [&](const RunSet& side, std::vector<double>& out) {
    std::vector<RunRecord> inOrder = side.runs;  // oldest first, as they ran
    std::sort(inOrder.begin(), inOrder.end(),
              [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
    for (const RunRecord& r : inOrder) {
      double worst = -1;
      if (std::optional<std::string> detail = store.runDetail(r.id, kCpuLoadDetail)) {
        for (const CpuContention& c : parseCpuLoadDetail(*detail)) {
          worst = std::max(worst, c.competingCpus);
        }
      }
      out.push_back(worst);
    }
  };
  of(runs.base, load.base);
  of(runs.cand, load.cand);
  return load;
}

std::string sidesLoadText(const SidesLoad& load) {
  if (!load.any()) return "";
  auto list = [](const std::vector<double>& xs) {
    std::vector<std::string> parts;
    for (double x : xs) parts.push_back(x < 0 ? "-" : fmt::format("{:.2f}", x));
    return fmt::format("{}", fmt::join(parts, " "));
  };
  auto contended = [](const std::vector<double>& xs) {
    size_t n = 0;
    for (double x : xs) n += x >= kContendedCpus;
    return n;
  };
  std::string out = fmt::format(
      "# load while measuring (CPUs other processes took from the ranks, per run): baseline {}; "
      "candidate {}\n",
      list(load.base), list(load.cand));
  const size_t b = contended(load.base), c = contended(load.cand);
  if ((b == 0) != (c == 0)) {
    out += fmt::format(
        "# note: only the {}'s runs shared their CPUs with other processes (from {:g} CPU): a "
        "change between the sides may be that load, not the build; interleave the sides' runs\n",
        b == 0 ? "candidate" : "baseline", kContendedCpus);
  }
  return out;
}

}  // namespace cb
