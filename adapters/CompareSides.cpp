// The sides of compare and gate (CompareSides.h).
#include "adapters/CompareSides.h"

#include <algorithm>
#include <set>

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

SidesLoad sidesLoad(const Store& store, const LoadedRuns& runs) {
  SidesLoad load;
  auto of = [&](const RunSet& side, std::vector<RunCpuState>& out) {
    std::vector<RunRecord> inOrder = side.runs;  // oldest first, as they ran
    std::sort(inOrder.begin(), inOrder.end(),
              [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
    for (const RunRecord& r : inOrder) {
      RunCpuState state;
      if (std::optional<std::string> detail = store.runDetail(r.id, kCpuLoadDetail)) {
        const CpuLoadRecord rec = parseCpuLoadDetail(*detail);
        for (const CpuContention& c : rec.hosts) {
          state.competing = std::max(state.competing, c.competingCpus);
        }
        if (rec.roundTrip.known()) state.roundTripNs = rec.roundTrip.medianNs;
        if (rec.roundTripAfter.known()) state.roundTripAfterNs = rec.roundTripAfter.medianNs;
      }
      out.push_back(state);
    }
  };
  of(runs.base, load.base);
  of(runs.cand, load.cand);
  return load;
}

namespace {

std::vector<double> known(const std::vector<RunCpuState>& side, double RunCpuState::*field) {
  std::vector<double> out;
  for (const RunCpuState& r : side) {
    if (r.*field >= 0) out.push_back(r.*field);
  }
  return out;
}

std::string listed(const std::vector<RunCpuState>& side, double RunCpuState::*field,
                   const char* format) {
  std::vector<std::string> parts;
  for (const RunCpuState& r : side) {
    parts.push_back(r.*field < 0 ? "-" : fmt::format(fmt::runtime(format), r.*field));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

double middle(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? -1 : xs[xs.size() / 2];
}

// A side of `runs` runs, `apart` of them on another placement than its middle, sits on two
// placements with neither most of them: it has no placement of its own (its middle is chance).
bool splitEvenly(size_t apart, size_t runs) { return apart > 0 && 2 * apart >= runs; }

}  // namespace

std::string sidesLoadText(const SidesLoad& load) {
  // "# TITLE: baseline x y z; candidate x y z", when some run has the figure.
  auto perRun = [&](double RunCpuState::*field, const char* title, const char* format) {
    if (known(load.base, field).empty() && known(load.cand, field).empty()) return std::string();
    return fmt::format("# {}: baseline {}; candidate {}\n", title, listed(load.base, field, format),
                       listed(load.cand, field, format));
  };
  std::string out =
      perRun(&RunCpuState::competing,
             "load while measuring (CPUs other processes took from the ranks, per run)", "{:.2f}");
  auto contended = [](const std::vector<double>& xs) {
    return std::count_if(xs.begin(), xs.end(), [](double x) { return x >= kContendedCpus; });
  };
  const auto b = contended(known(load.base, &RunCpuState::competing)),
             c = contended(known(load.cand, &RunCpuState::competing));
  if ((b == 0) != (c == 0)) {
    out += fmt::format(
        "# note: only the {}'s runs shared their CPUs with other processes (from {:g} CPU): a "
        "change between the sides may be that load, not the build; interleave the sides' runs\n",
        b == 0 ? "candidate" : "baseline", kContendedCpus);
  }
  out +=
      perRun(&RunCpuState::roundTripNs,
             "CPUs' distance (a cache line's round trip between ranks 0 and 1, median ns, per run)",
             "{:.0f}");
  if (std::string moved = placementsDiffer(load); !moved.empty()) out += "# note: " + moved + "\n";
  return out;
}

std::vector<std::string> leaveOutOtherPlacements(LoadedRuns& runs, SidesLoad& load,
                                                 std::vector<std::string>& leftOut) {
  std::vector<std::string> unconfirmed;
  auto side = [&](RunSet& set, std::vector<RunCpuState>& states, const char* name) {
    // load lists the runs oldest first (by id); match them so.
    std::vector<RunRecord> inOrder = set.runs;
    std::sort(inOrder.begin(), inOrder.end(),
              [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
    inOrder.resize(std::min(inOrder.size(), states.size()));
    std::set<int64_t> out;
    std::vector<std::pair<int64_t, std::string>> moved;  // runs whose CPUs moved, and how
    std::vector<size_t> steady;                          // the others with a probe, by index
    for (size_t i = 0; i < inOrder.size(); ++i) {
      const RunCpuState& st = states[i];
      if (placedApart(st.roundTripNs, st.roundTripAfterNs)) {
        out.insert(inOrder[i].id);
        moved.emplace_back(
            inOrder[i].id,
            fmt::format("its ranks' CPUs moved while it measured (a cache line's round trip {:.0f} "
                        "ns before the sweep, {:.0f} ns after), so its figures mix two placements",
                        st.roundTripNs, st.roundTripAfterNs));
      } else if (st.roundTripNs > 0) {
        steady.push_back(i);
      }
    }
    if (!moved.empty() && out.size() >= set.runs.size()) {
      // Every run moved: nothing is left to compare, and the side decides nothing.
      for (const auto& [id, why] : moved) {
        unconfirmed.push_back(fmt::format("run {} of the {}: {}", id, name, why));
      }
      return;
    }
    for (const auto& [id, why] : moved) {
      leftOut.push_back(fmt::format("run {} left out of the {}: {}", id, name, why));
    }
    std::vector<double> figures;
    for (size_t i : steady) figures.push_back(states[i].roundTripNs);
    const double mid = middle(figures);
    std::vector<size_t> apart;
    for (size_t i : steady) {
      if (placedApart(states[i].roundTripNs, mid)) apart.push_back(i);
    }
    if (splitEvenly(apart.size(), set.runs.size() - out.size())) {
      // A side split evenly has no placement of its own and measured two machines (round 50: a
      // side left with a run at 130 ns and one at 391 beside a candidate at 390 took the upper
      // one for its median and regressed).
      unconfirmed.push_back(
          fmt::format("the {}'s runs were measured on two placements of the CPUs, neither most of "
                      "them (a cache line's round trip {:.0f} ns)",
                      name, fmt::join(figures, ", ")));
    } else {
      // Only a minority is another placement: left out when its second probe confirms it.
      for (size_t i : apart) {
        const RunCpuState& st = states[i];
        if (st.roundTripAfterNs > 0) {
          out.insert(inOrder[i].id);
          leftOut.push_back(fmt::format(
              "run {} left out of the {}: its ranks' CPUs were placed apart differently from the "
              "rest of its side before and after it measured (a cache line's round trip {:.0f} "
              "and {:.0f} ns vs {:.0f} ns), so it measured another machine",
              inOrder[i].id, name, st.roundTripNs, st.roundTripAfterNs, mid));
        } else {
          unconfirmed.push_back(fmt::format(
              "run {} of the {} was probed on another placement of the CPUs than the rest of its "
              "side (a cache line's round trip {:.0f} vs {:.0f} ns)",
              inOrder[i].id, name, st.roundTripNs, mid));
        }
      }
    }
    for (size_t i = inOrder.size(); i-- > 0;) {
      if (out.contains(inOrder[i].id))
        states.erase(states.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::erase_if(set.runs, [&](const RunRecord& r) { return out.contains(r.id); });
    std::erase_if(set.results, [&](const ResultRecord& r) { return out.contains(r.runId); });
  };
  side(runs.base, load.base, "baseline");
  side(runs.cand, load.cand, "candidate");
  return unconfirmed;
}

std::string placementsDiffer(const SidesLoad& load) {
  // A side whose runs split evenly between two placements has none of its own (its middle value
  // is the upper of two, chance): leaveOutOtherPlacements says so instead.
  auto placementOf = [](const std::vector<double>& xs) {
    const double mid = middle(xs);
    const auto apart =
        std::count_if(xs.begin(), xs.end(), [&](double x) { return placedApart(x, mid); });
    return splitEvenly(static_cast<size_t>(apart), xs.size()) ? -1.0 : mid;
  };
  const double mb = placementOf(known(load.base, &RunCpuState::roundTripNs)),
               mc = placementOf(known(load.cand, &RunCpuState::roundTripNs));
  if (!placedApart(mb, mc)) return "";
  return fmt::format(
      "the ranks' CPUs were {} for the candidate's runs (a cache line's round trip {:.0f} vs "
      "{:.0f} ns): the machine placed its CPUs anew between the sides (a VM's host moving its "
      "vCPUs), which moves the figures as a change of the build would; interleave the sides' "
      "runs",
      mc > mb ? "farther apart" : "closer", mc, mb);
}

}  // namespace cb
