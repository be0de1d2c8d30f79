// The four renderings of a comparison (see ComparisonReport.h).
#include "adapters/ComparisonReport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "adapters/TextTable.h"
#include "core/Error.h"
#include "core/Size.h"
#include "results/HtmlReport.h"

namespace cb {

namespace {

struct Counts {
  int cases = 0, same = 0, improvements = 0, regressions = 0, inconclusive = 0, notComparable = 0,
      failed = 0, thresholdOnly = 0, seriesRegressing = 0;
};

Counts countOf(const Comparison& c) {
  Counts n;
  n.cases = static_cast<int>(c.cases.size());
  for (const CaseComparison& cc : c.cases) {
    n.failed += cc.failed;
    n.thresholdOnly += cc.thresholdOnly;
    switch (cc.verdict) {
      case Verdict::kSame: ++n.same; break;
      case Verdict::kImprovement: ++n.improvements; break;
      case Verdict::kRegression: ++n.regressions; break;
      case Verdict::kInconclusive: ++n.inconclusive; break;
      case Verdict::kNotComparable: ++n.notComparable; break;
    }
  }
  for (const SeriesSummary& s : c.series) {
    n.seriesRegressing += s.confined.verdict == Verdict::kRegression;
  }
  return n;
}

std::string verdictText(const CaseComparison& c) {
  std::string v(verdictName(c.verdict));
  if (c.verdict == Verdict::kRegression) v = "REGRESSION";
  return c.thresholdOnly ? v + " (threshold only)" : v;
}

// Two decimals as nccl-tests prints, but three significant digits below 1 (a busbw of 0.0015
// GB/s must not print as 0.00).
std::string value(double v, bool known) {
  if (!known) return "-";
  return std::abs(v) >= 1 || v == 0 ? fmt::format("{:.2f}", v) : fmt::format("{:.3g}", v);
}
bool hasValues(const CaseComparison& c) { return c.baseValue > 0 && c.candRuns > 0; }
std::string change(const CaseComparison& c) {
  return hasValues(c) ? fmt::format("{:+.1f}%", c.changePct) : "-";
}
std::string pct(const LevelTest& t, double v) {
  return t.tested ? fmt::format("{:+.1f}%", v) : "-";
}
std::string pText(const LevelTest& t) {
  return t.tested ? fmt::format("{:.2g}", t.adjustedP) : "-";
}
// A detectable change past 100000% means "none that matters": printed as a bound, not as the
// 80-digit number a noisy machine's t quantile gives (seen under a parallel build).
std::string detectableText(double pctValue) {
  return pctValue < 1e5 ? fmt::format("{:.1f}%", pctValue) : std::string(">100000%");
}
std::string mdcText(const LevelTest& t) { return t.tested ? detectableText(t.mdcPct) : "-"; }

std::string direction(Metric m) {
  return m == Metric::kBusbw ? "busbw, higher is better: a negative change is worse"
                             : "time, lower is better: a positive change is worse";
}

std::string describeOptions(const Comparison& c) {
  const CompareOptions& o = c.options;
  return fmt::format(
      "metric {} ({}) from each run's {}, threshold {:g}%, alpha {:g}, power {:g}%, sizes {}; "
      "{} baseline and {} candidate replicate(s)",
      metricName(o.metric), metricUnit(o.metric),
      o.runQuantile <= 0 ? std::string("fastest iteration")
                         : runValueName(o.runQuantile) + " of iterations",
      o.threshold * 100, o.alpha, o.power * 100, o.sizes.all() ? "all" : o.sizes.text(),
      c.baseReplicates, c.candReplicates);
}

std::string groupTitle(const CaseKey& k) {
  std::string title =
      fmt::format("{}  {}  {}  {}  {}  {} ranks", k.collective, k.variant, k.dtype, k.op,
                  k.placement == "out"  ? "out-of-place"
                  : k.placement == "in" ? "in-place"
                                        : k.placement,
                  k.nranks);
  if (k.root >= 0) title += fmt::format("  root {}", k.root);
  return title;
}

// Cases grouped by series, series in key order, sizes ascending.
std::map<CaseKey, std::vector<const CaseComparison*>> bySeries(const Comparison& c) {
  std::map<CaseKey, std::vector<const CaseComparison*>> groups;
  for (const CaseComparison& cc : c.cases) groups[cc.key.series()].push_back(&cc);
  return groups;
}

const SeriesSummary* seriesOf(const Comparison& c, const CaseKey& series) {
  for (const SeriesSummary& s : c.series) {
    if (s.series == series) return &s;
  }
  return nullptr;
}

bool notable(const CaseComparison& c) { return c.verdict != Verdict::kSame; }

// ANSI colour around a verdict; every cell gets the same number of invisible bytes so the
// table's byte-based widths still line up. Only what the test decided is coloured.
std::string paint(const std::string& text, const CaseComparison* c, bool colour) {
  if (!colour) return text;
  const char* code = "39";
  if (c) {
    if (c->verdict == Verdict::kRegression) code = "31";
    if (c->verdict == Verdict::kImprovement) code = "32";
    if (c->verdict == Verdict::kInconclusive || c->verdict == Verdict::kNotComparable) {
      code = "33";
    }
  }
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

std::string levelLine(const LevelTest& t, const Comparison& c) {
  if (!t.tested) return "not tested";
  std::string need =
      t.runsNeeded > kRunsNeededCap
          ? fmt::format("; more than {} runs per side would be needed", kRunsNeededCap)
      : t.runsNeeded > 0 ? fmt::format("; {} runs per side would detect {:g}%", t.runsNeeded,
                                       c.options.threshold * 100)
                         : "";
  std::string aside =
      t.setAsideBase + t.setAsideCand > 0
          ? fmt::format(" ({} baseline and {} candidate runs set aside as disturbed)",
                        t.setAsideBase, t.setAsideCand)
      : t.twoGroups ? " (the runs fall in two groups on both sides: none set aside)"
                    : "";
  std::string modes =
      t.modal ? fmt::format("; two modes {:.0f}% apart: pin ranks with --bind or interleave runs",
                            t.modeGapPct)
      : t.modeVisitChance >= 0
          ? fmt::format(
                "; the candidate's runs sat in a mode the same build visits rarely (all there by "
                "chance: {:.2g}; runs interleaved): a change, not a switch",
                t.modeVisitChance)
          : "";
  return fmt::format("change {:+.1f}%, p {:.2g}, detectable change {}{}{}{}: {}", t.changePct,
                     t.adjustedP, detectableText(t.mdcPct), aside, need, modes,
                     t.verdict == Verdict::kRegression ? "REGRESSION" : verdictName(t.verdict));
}

std::string needText(const Comparison& c) {
  if (c.runsNeeded > kRunsNeededCap) {
    return fmt::format("more than {} runs per side needed: the machine is too noisy for {:g}%",
                       kRunsNeededCap, c.options.threshold * 100);
  }
  if (c.runsNeeded > 0) {
    return fmt::format("{} runs per side needed to detect {:g}% (have {} and {})", c.runsNeeded,
                       c.options.threshold * 100, c.baseReplicates, c.candReplicates);
  }
  return "";
}

}  // namespace

std::string summaryLine(const Comparison& c) {
  Counts n = countOf(c);
  switch (c.outcome) {
    case GateOutcome::kRegression: {
      std::vector<std::string> parts;
      for (const std::string& p : c.runProblems) parts.push_back(p);
      if (c.wholeRun.verdict == Verdict::kRegression) {
        parts.push_back(fmt::format("the whole run changes {:+.1f}% (p {:.2g})",
                                    c.wholeRun.changePct, c.wholeRun.adjustedP));
      }
      std::vector<std::string> names;
      for (const SeriesSummary& s : c.series) {
        if (s.confined.verdict == Verdict::kRegression && names.size() < 3) {
          names.push_back(
              fmt::format("{} {:+.1f}%", s.series.seriesString(), s.confined.changePct));
        }
      }
      if (n.seriesRegressing > 0) {
        parts.push_back(fmt::format("{} series regress{} against the rest of the run ({}{})",
                                    n.seriesRegressing, n.seriesRegressing == 1 ? "es" : "",
                                    fmt::join(names, ", "), n.seriesRegressing > 3 ? ", ..." : ""));
      }
      if (n.regressions - n.failed > 0) {
        parts.push_back(fmt::format("{} case(s) regress{}", n.regressions - n.failed,
                                    c.thresholdOnly ? " beyond the threshold (threshold only: "
                                                      "one value per side, untested)"
                                                    : ""));
      }
      if (n.failed > 0) {
        parts.push_back(fmt::format("{} case(s) failed or computed wrong results", n.failed));
      }
      return fmt::format("REGRESSION: {}", fmt::join(parts, "; "));
    }
    case GateOutcome::kInconclusive: {
      std::string why = !c.tooFewNote.empty()  ? c.tooFewNote
                        : !c.modesNote.empty() ? c.modesNote
                                               : needText(c);
      if (c.runsNeeded == 0 && c.tooFewNote.empty() && n.notComparable > 0) {
        why = fmt::format("{} case(s) not comparable", n.notComparable);
      }
      if (!c.tooFewNote.empty()) {
        why += c.runsNeeded > 0 ? "; " + needText(c)
                                : "; run `collbench gate --calibrate` on same-build runs for the "
                                  "number needed";
      }
      return fmt::format("inconclusive: {}; no regression found among {} cases", why, n.cases);
    }
    case GateOutcome::kNothingComparable:
      return fmt::format("nothing comparable: {}",
                         !c.environmentNote.empty() && c.environmentDiffers
                             ? c.environmentNote
                             : "the runs have no case in common");
    case GateOutcome::kPass: break;
  }
  if (c.thresholdOnly) {
    return fmt::format(
        "pass (threshold only: one value per side, untested): no case changed beyond {:g}% "
        "over {} cases",
        c.options.threshold * 100, n.cases);
  }
  return fmt::format(
      "pass: {} cases, {} improved; whole-run change {:+.1f}% (detectable {}); no case or "
      "series worse than {:g}%",
      n.cases, n.improvements, c.wholeRun.changePct, detectableText(c.wholeRun.mdcPct),
      c.options.threshold * 100);
}

// Says what every column means, once, under the tables (issue: "noise" was explained nowhere).
constexpr const char* kLegend =
    "# change: candidate vs baseline (geometric means of the replicates' run values, "
    "--run-value), in the "
    "metric's own direction\n"
    "# vs run: the change net of the whole run's change (what the confined test judges); "
    "p(Holm): its p-value, Holm-corrected over every case and series\n"
    "# as measured: with 4 stored builds or more, each case is also tested on its own values "
    "(not net of its run) against the spread of its runs and of the stored builds' means; a "
    "case flagged so says it in its note\n"
    "# mdc: the smallest change confined to the case that the test detects with the stated power "
    "at these replicates; noise: run-to-run standard deviation of the case's replicate values\n";

std::string renderText(const Comparison& c, const LoadedRuns& runs, bool allCases, bool colour) {
  std::string out;
  out += fmt::format("# baseline : {}\n# candidate: {}\n# {}\n# {}\n", runs.baseName, runs.candName,
                     describeOptions(c), direction(c.options.metric));
  for (const std::string& w : runs.warnings) out += fmt::format("# warning: {}\n", w);
  if (!c.environmentNote.empty()) out += fmt::format("# note: {}\n", c.environmentNote);
  if (!c.tooFewNote.empty()) out += fmt::format("# note: {}\n", c.tooFewNote);
  if (c.algbwCases > 0) {
    out += fmt::format(
        "# note: {} case(s) of one rank compared by algbw: one rank has no busbw (nccl-tests' "
        "factor is 0 there)\n",
        c.algbwCases);
  }
  if (c.descheduledPoints > 0) {
    out += fmt::format(
        "# note: {} point(s) left out: their iterations waited for a CPU (the run value over {}x "
        "the point's fastest iteration, or that fastest over {}x its side's median fastest)\n",
        c.descheduledPoints, kDescheduledRatio, kDescheduledRatio);
  }
  if (c.historyRuns > 0) {
    out += fmt::format(
        "# history: {} stored run(s) of this environment add their spread within each label to "
        "the noise (--lookback)\n",
        c.historyRuns);
  }
  out += fmt::format("# whole run: {}\n", levelLine(c.wholeRun, c));
  using A = TextTable::Align;
  const std::string unit(metricUnit(c.options.metric));
  int hidden = 0;
  for (const auto& [series, members] : bySeries(c)) {
    std::vector<const CaseComparison*> rows;
    for (const CaseComparison* cc : members) {
      if (allCases || notable(*cc)) rows.push_back(cc);
    }
    hidden += static_cast<int>(members.size() - rows.size());
    if (rows.empty()) continue;
    TextTable table({{"size", A::kRight},
                     {fmt::format("base({})", unit), A::kRight},
                     {fmt::format("cand({})", unit), A::kRight},
                     {"change", A::kRight},
                     {"vs run", A::kRight},
                     {"p(Holm)", A::kRight},
                     {"mdc", A::kRight},
                     {"noise", A::kRight},
                     {paint("verdict", nullptr, colour)},
                     {"note"}});
    for (const CaseComparison* cc : rows) {
      table.addRow({compactSize(cc->key.sizeBytes), value(cc->baseValue, hasValues(*cc)),
                    value(cc->candValue, hasValues(*cc)), change(*cc),
                    pct(cc->confined, cc->confined.changePct), pText(cc->confined),
                    mdcText(cc->confined),
                    cc->noisePct > 0 ? fmt::format("{:.1f}%", cc->noisePct) : "-",
                    paint(verdictText(*cc), cc, colour), cc->note});
    }
    out += fmt::format("#\n# {}\n{}", groupTitle(series), table.render("# "));
    if (const SeriesSummary* s = seriesOf(c, series)) {
      out += fmt::format("# series vs the rest of the run: {}\n", levelLine(s->confined, c));
    }
  }
  Counts n = countOf(c);
  out += fmt::format(
      "#\n# {} cases: {} same, {} improved, {} regressed, {} inconclusive, {} not comparable",
      n.cases, n.same, n.improvements, n.regressions, n.inconclusive, n.notComparable);
  if (hidden > 0 && !allCases) out += fmt::format("; {} unchanged not shown (--all)", hidden);
  out += "\n";
  if (!c.onlyBase.empty() || !c.onlyCand.empty() || c.skipped > 0) {
    out += fmt::format(
        "# {} only in the baseline, {} only in the candidate, {} skipped "
        "(unsupported on both sides or outside --sizes)\n",
        c.onlyBase.size(), c.onlyCand.size(), c.skipped);
  }
  if (n.cases - hidden > 0) out += kLegend;
  return out;
}

std::string escapeMarkdown(std::string_view text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '~':
      case '#':
      case '!':
        out += '\\';
        out += ch;
        break;
      // HTML in a cell would render: entities keep the text literal.
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string renderMarkdown(const Comparison& c, const LoadedRuns& runs, bool allCases) {
  Counts n = countOf(c);
  std::string out;
  const char* outcome = c.outcome == GateOutcome::kRegression     ? "**REGRESSION**"
                        : c.outcome == GateOutcome::kPass         ? "pass"
                        : c.outcome == GateOutcome::kInconclusive ? "*inconclusive*"
                                                                  : "*nothing comparable*";
  out += fmt::format("### collbench gate: {}\n\n", outcome);
  out += fmt::format("Baseline: {} · Candidate: {} · {}\n\n", escapeMarkdown(runs.baseName),
                     escapeMarkdown(runs.candName), escapeMarkdown(describeOptions(c)));
  for (const std::string& w : runs.warnings) out += fmt::format("> {}\n\n", escapeMarkdown(w));
  if (!c.environmentNote.empty()) {
    out += fmt::format("> {}\n\n", escapeMarkdown(c.environmentNote));
  }
  out += escapeMarkdown(summaryLine(c)) + "\n\n";
  out += fmt::format("Whole run: {}\n\n", escapeMarkdown(levelLine(c.wholeRun, c)));
  out += "| verdict | cases |\n|---|---:|\n";
  out += fmt::format(
      "| same | {} |\n| improvement | {} |\n| regression | {} |\n| inconclusive | {} |\n"
      "| not comparable | {} |\n\n",
      n.same, n.improvements, n.regressions, n.inconclusive, n.notComparable);
  const std::string unit(metricUnit(c.options.metric));
  std::string rows;
  for (const auto& [series, members] : bySeries(c)) {
    for (const CaseComparison* cc : members) {
      if (!allCases && !notable(*cc)) continue;
      rows += fmt::format(
          "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", escapeMarkdown(cc->key.toString()),
          value(cc->baseValue, hasValues(*cc)), value(cc->candValue, hasValues(*cc)), change(*cc),
          pct(cc->confined, cc->confined.changePct), pText(cc->confined), mdcText(cc->confined),
          cc->verdict == Verdict::kRegression ? "**" + verdictText(*cc) + "**"
                                              : escapeMarkdown(verdictText(*cc)),
          escapeMarkdown(cc->note));
    }
  }
  if (rows.empty()) {
    out += fmt::format("All {} cases are the same within the threshold.\n", n.cases);
  } else {
    out += fmt::format(
        "| case | baseline ({0}) | candidate ({0}) | change | vs run | p (Holm) | mdc | verdict | "
        "note |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n",
        unit);
    out += rows;
    out += fmt::format(
        "\n*{}.* *vs run*: the change net of the whole run's; *mdc*: smallest change confined to "
        "the case the test detects at these replicates.\n",
        escapeMarkdown(direction(c.options.metric)));
  }
  return out;
}

namespace {

nlohmann::json runsJson(const RunSet& set, const std::string& name) {
  nlohmann::json runs = nlohmann::json::array();
  for (const RunRecord& r : set.runs) {
    runs.push_back({{"id", r.id},
                    {"label", r.label},
                    {"started_at", r.startedAt},
                    {"status", runStatusName(r.status)},
                    {"fingerprint", r.fingerprint}});
  }
  return {{"name", name}, {"runs", runs}};
}

nlohmann::json numberOrNull(bool known, double v) {
  return known && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json levelJson(const LevelTest& t) {
  return {{"tested", t.tested},
          {"change_pct", numberOrNull(t.tested, t.changePct)},
          {"p", numberOrNull(t.tested, t.pValue)},
          {"p_holm", numberOrNull(t.tested, t.adjustedP)},
          {"mdc_pct", numberOrNull(t.tested, t.mdcPct)},
          {"runs_needed", t.runsNeeded},
          {"set_aside", {{"baseline", t.setAsideBase}, {"candidate", t.setAsideCand}}},
          {"history_df", t.historyDf},
          {"two_modes", t.modal},
          {"mode_gap_pct", numberOrNull(t.modal, t.modeGapPct)},
          {"mode_visit_chance", numberOrNull(t.modeVisitChance >= 0, t.modeVisitChance)},
          {"verdict", verdictName(t.verdict)}};
}

std::string_view flaggedByName(CaseComparison::FlaggedBy by) {
  switch (by) {
    case CaseComparison::FlaggedBy::kOwn: return "case";
    case CaseComparison::FlaggedBy::kSeries: return "series";
    case CaseComparison::FlaggedBy::kWholeRun: return "whole_run";
    case CaseComparison::FlaggedBy::kAsMeasured: return "as_measured";
    case CaseComparison::FlaggedBy::kNone: break;
  }
  return "none";
}

}  // namespace

std::string renderJson(const Comparison& c, const LoadedRuns& runs) {
  Counts n = countOf(c);
  nlohmann::json j;
  j["outcome"] = gateOutcomeName(c.outcome);
  j["summary"] = summaryLine(c);
  j["baseline"] = runsJson(runs.base, runs.baseName);
  j["candidate"] = runsJson(runs.cand, runs.candName);
  j["warnings"] = runs.warnings;
  j["options"] = {{"metric", metricName(c.options.metric)},
                  {"unit", metricUnit(c.options.metric)},
                  {"threshold_pct", c.options.threshold * 100},
                  {"alpha", c.options.alpha},
                  {"power", c.options.power},
                  {"run_value", runValueName(c.options.runQuantile)},
                  {"sizes", c.options.sizes.all() ? "all" : c.options.sizes.text()},
                  {"allow_different_environment", c.options.allowDifferentEnvironment}};
  j["replicates"] = {{"baseline", c.baseReplicates}, {"candidate", c.candReplicates}};
  j["runs_needed"] = c.runsNeeded;
  j["threshold_only"] = c.thresholdOnly;
  j["environment_note"] = c.environmentNote;
  j["history_runs"] = c.historyRuns;
  j["descheduled_points"] = c.descheduledPoints;
  j["algbw_cases"] = c.algbwCases;
  j["modes_note"] = c.modesNote;
  j["whole_run"] = levelJson(c.wholeRun);
  j["counts"] = {{"cases", n.cases},
                 {"same", n.same},
                 {"improvement", n.improvements},
                 {"regression", n.regressions},
                 {"inconclusive", n.inconclusive},
                 {"not_comparable", n.notComparable},
                 {"only_baseline", c.onlyBase.size()},
                 {"only_candidate", c.onlyCand.size()},
                 {"skipped", c.skipped}};
  nlohmann::json series = nlohmann::json::array();
  for (const SeriesSummary& s : c.series) {
    nlohmann::json one = levelJson(s.confined);
    one["series"] = s.series.seriesString();
    one["cases"] = s.cases;
    series.push_back(one);
  }
  j["series"] = series;
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseComparison& cc : c.cases) {
    bool values = hasValues(cc);
    cases.push_back(
        {{"case", cc.key.toString()},
         {"collective", cc.key.collective},
         {"variant", cc.key.variant},
         {"dtype", cc.key.dtype},
         {"op", cc.key.op},
         {"size_bytes", cc.key.sizeBytes},
         {"placement", cc.key.placement},
         {"nranks", cc.key.nranks},
         {"root", cc.key.root},
         {"verdict", verdictName(cc.verdict)},
         {"failed", cc.failed},
         {"threshold_only", cc.thresholdOnly},
         {"note", cc.note},
         {"base_runs", cc.baseRuns},
         {"cand_runs", cc.candRuns},
         {"base", numberOrNull(values, cc.baseValue)},
         {"cand", numberOrNull(values, cc.candValue)},
         {"change_pct", numberOrNull(values, cc.changePct)},
         {"noise_pct", numberOrNull(cc.noisePct > 0, cc.noisePct)},
         {"flagged_by", flaggedByName(cc.flaggedBy)},
         {"modes", cc.modeA > 0 ? nlohmann::json{cc.modeA, cc.modeB} : nlohmann::json(nullptr)},
         {"confined", levelJson(cc.confined)},
         {"as_measured", levelJson(cc.asMeasured)}});
  }
  j["cases"] = cases;
  nlohmann::json onlyBase = nlohmann::json::array(), onlyCand = nlohmann::json::array();
  for (const CaseKey& k : c.onlyBase) onlyBase.push_back(k.toString());
  for (const CaseKey& k : c.onlyCand) onlyCand.push_back(k.toString());
  j["only_baseline"] = onlyBase;
  j["only_candidate"] = onlyCand;
  // Labels and notes are arbitrary bytes: replace invalid UTF-8 rather than fail.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string renderJunit(const Comparison& c, const LoadedRuns& runs) {
  Counts n = countOf(c);
  int failures = 0, skipped = 0;
  for (const CaseComparison& cc : c.cases) {
    failures += cc.verdict == Verdict::kRegression;
    skipped += cc.verdict == Verdict::kInconclusive || cc.verdict == Verdict::kNotComparable;
  }
  const bool wholeFails = c.wholeRun.verdict == Verdict::kRegression || !c.runProblems.empty();
  const int tests = n.cases + 1;
  failures += wholeFails;
  const std::string unit(metricUnit(c.options.metric));
  std::string suite = fmt::format("collbench gate: {} vs {}", runs.baseName, runs.candName);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"collbench gate\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\">\n"
      "  <testsuite name=\"{3}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\">\n",
      tests, failures, skipped, htmlEscape(suite));
  out += "    <properties>\n";
  auto property = [&](std::string_view name, const std::string& v) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, htmlEscape(v));
  };
  property("outcome", std::string(gateOutcomeName(c.outcome)));
  property("summary", summaryLine(c));
  property("metric", std::string(metricName(c.options.metric)));
  property("threshold", fmt::format("{:g}%", c.options.threshold * 100));
  property("alpha", fmt::format("{:g}", c.options.alpha));
  property("run_value", runValueName(c.options.runQuantile));
  property("replicates", fmt::format("{} vs {}", c.baseReplicates, c.candReplicates));
  property("sizes", c.options.sizes.all() ? "all" : c.options.sizes.text());
  if (!c.environmentNote.empty()) property("environment", c.environmentNote);
  out += "    </properties>\n";
  std::string whole = fmt::format("whole run: {}", levelLine(c.wholeRun, c));
  for (const std::string& p : c.runProblems) whole += "; " + p;
  out += "    <testcase classname=\"collbench.run\" name=\"whole run\"";
  out += wholeFails ? fmt::format(
                          ">\n      <failure type=\"regression\" message=\"{0}\">{0}"
                          "</failure>\n    </testcase>\n",
                          htmlEscape(whole))
                    : fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                                  htmlEscape(whole));
  for (const CaseComparison& cc : c.cases) {
    const CaseKey& k = cc.key;
    std::string detail =
        hasValues(cc) ? fmt::format("{} {} -> {} {} ({:+.1f}%; vs run {}, p(Holm) {}, mdc {})",
                                    metricName(c.options.metric), value(cc.baseValue, true),
                                    value(cc.candValue, true), unit, cc.changePct,
                                    pct(cc.confined, cc.confined.changePct), pText(cc.confined),
                                    mdcText(cc.confined))
                      : cc.note;
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"",
                       htmlEscape(fmt::format("collbench.{}.{}", k.collective, k.variant)),
                       htmlEscape(k.toString()));
    if (cc.verdict == Verdict::kRegression) {
      out += fmt::format(">\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n",
                         htmlEscape(cc.failed ? cc.note : "regression: " + detail),
                         htmlEscape(fmt::format("{}{}{}", detail, cc.note.empty() ? "" : "\n",
                                                cc.failed ? "" : cc.note)));
      out += "    </testcase>\n";
    } else if (cc.verdict == Verdict::kInconclusive || cc.verdict == Verdict::kNotComparable) {
      out += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                         htmlEscape(fmt::format("{}: {}", verdictName(cc.verdict), cc.note)));
    } else {
      out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                         htmlEscape(fmt::format("{}: {}", verdictText(cc), detail)));
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace cb
