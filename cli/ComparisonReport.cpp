// Shared flags, run resolution and the four renderings of a comparison (see ComparisonReport.h).
#include "cli/ComparisonReport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/TextTable.h"
#include "core/Error.h"
#include "core/Size.h"

namespace cb::cli {

void addCompareFlags(CLI::App& sub, CompareFlags& f) {
  sub.add_option("--db", f.db, "SQLite database")->capture_default_str();
  sub.add_option("--metric", f.metric, "busbw (higher is better) or time (lower is better)")
      ->capture_default_str();
  sub.add_option("--threshold", f.threshold,
                 "Smallest change that matters, in percent of the baseline median")
      ->capture_default_str();
  sub.add_option("--alpha", f.alpha,
                 "Significance level of the Mann-Whitney U test (Holm-corrected over the cases)")
      ->capture_default_str();
  sub.add_option("--drift", f.drift,
                 "Largest slowdown of the whole run attributed to the machine (0: none)")
      ->capture_default_str();
  sub.add_option("--sizes", f.sizes,
                 "Only these sizes: ranges and lists such as 1M-64M, 4K,1M, -64K, 1M-");
  sub.add_flag("--allow-different-environment", f.allowDifferentEnvironment,
               "Compare runs whose environment fingerprints differ (marked in the output)");
}

CompareOptions toCompareOptions(const CompareFlags& f) {
  CompareOptions o;
  o.metric = parseMetric(f.metric);
  o.threshold = parseThreshold(f.threshold);
  o.alpha = checkAlpha(f.alpha);
  try {
    o.drift = parseThreshold(f.drift);
  } catch (const UsageError&) {
    throw UsageError(
        fmt::format("--drift '{}' is not a percentage from 0% to below 100%", f.drift));
  }
  o.sizes = SizeFilter::parse(f.sizes);
  o.allowDifferentEnvironment = f.allowDifferentEnvironment;
  return o;
}

namespace {

RunRecord resolveOne(const Store& store, const RunSpec& spec) {
  if (spec.last) {
    RunFilter newest;
    newest.limit = 1;
    std::vector<RunRecord> runs = store.listRuns(newest);
    if (runs.empty()) throw UsageError(fmt::format("no runs in '{}'", store.path()));
    return runs[0];
  }
  std::optional<RunRecord> run = store.findRun(spec.id);
  if (!run) throw UsageError(fmt::format("no run {} in '{}'", spec.id, store.path()));
  return *run;
}

std::string runName(const RunRecord& r) {
  return r.label.empty() ? fmt::format("run {}", r.id) : fmt::format("run {} ({})", r.id, r.label);
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

LoadedRuns loadRuns(const Store& store, const std::string& base, const std::string& cand) {
  RunSpec candSpec = RunSpec::parse(cand, false);
  RunSpec baseSpec = RunSpec::parse(base, true);
  RunRecord candRun = resolveOne(store, candSpec);
  std::vector<RunRecord> baseRuns;
  LoadedRuns out;
  if (!baseSpec.label.empty()) {
    RunFilter f;
    f.label = baseSpec.label;
    baseRuns = pickLabelRuns(store.listRuns(f), baseSpec, &candRun);
    if (baseRuns.empty()) {
      throw UsageError(fmt::format("no finished run labelled '{}' before run {} in '{}'",
                                   baseSpec.label, candRun.id, store.path()));
    }
    std::vector<int64_t> ids;
    for (const RunRecord& r : baseRuns) ids.push_back(r.id);
    out.baseName = fmt::format("{} (run{} {})", baseSpec.text, ids.size() > 1 ? "s" : "",
                               fmt::join(ids, ", "));
  } else {
    baseRuns.push_back(resolveOne(store, baseSpec));
    out.baseName = runName(baseRuns[0]);
  }
  out.candName = runName(candRun);
  out.base = loadSet(store, std::move(baseRuns));
  out.cand = loadSet(store, {candRun});
  return out;
}

namespace {

struct Counts {
  int cases = 0, tested = 0, same = 0, improvements = 0, confirmed = 0, isolated = 0,
      inconclusive = 0, notComparable = 0, failed = 0, seriesRegressing = 0;
};

Counts countOf(const Comparison& c) {
  Counts n;
  n.cases = static_cast<int>(c.cases.size());
  for (const CaseComparison& cc : c.cases) {
    n.tested += cc.tested;
    n.failed += cc.failed;
    switch (cc.verdict) {
      case Verdict::kSame: ++n.same; break;
      case Verdict::kImprovement: ++n.improvements; break;
      case Verdict::kRegression: ++(cc.confirmed ? n.confirmed : n.isolated); break;
      case Verdict::kInconclusive: ++n.inconclusive; break;
      case Verdict::kNotComparable: ++n.notComparable; break;
    }
  }
  for (const SeriesSummary& s : c.series) n.seriesRegressing += s.regression;
  return n;
}

std::string verdictText(const CaseComparison& c) {
  if (c.verdict == Verdict::kRegression) {
    return c.confirmed ? "REGRESSION" : "regression (unconfirmed)";
  }
  return std::string(verdictName(c.verdict));
}

// Two decimals as nccl-tests prints, but three significant digits below 1 (a busbw of 0.0015
// GB/s must not print as 0.00).
std::string value(double v, bool known) {
  if (!known) return "-";
  return std::abs(v) >= 1 || v == 0 ? fmt::format("{:.2f}", v) : fmt::format("{:.3g}", v);
}
bool hasValues(const CaseComparison& c) { return c.baseValue > 0 && !c.failed; }
std::string change(const CaseComparison& c) {
  return hasValues(c) ? fmt::format("{:+.1f}%", c.changePct) : "-";
}
std::string pText(const CaseComparison& c) {
  return c.tested ? fmt::format("{:.2g}", c.adjustedP) : "-";
}

std::string describeOptions(const CompareOptions& o) {
  return fmt::format("metric {} ({}), threshold {:g}%, alpha {:g}, drift {:g}%, sizes {}",
                     metricName(o.metric), metricUnit(o.metric), o.threshold * 100, o.alpha,
                     o.drift * 100, o.sizes.all() ? "all" : o.sizes.text());
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
// table's byte-based widths still line up.
std::string paint(const std::string& text, const CaseComparison* c, bool colour) {
  if (!colour) return text;
  const char* code = "39";
  if (c) {
    if (c->verdict == Verdict::kRegression) code = c->confirmed ? "31" : "33";
    if (c->verdict == Verdict::kImprovement) code = "32";
    if (c->verdict == Verdict::kInconclusive || c->verdict == Verdict::kNotComparable) {
      code = "33";
    }
  }
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

std::string seriesLine(const SeriesSummary& s) {
  std::string shift =
      s.shiftPct > 0 ? fmt::format(" beyond the rest of the run's shift of {:+.1f}%", s.shiftPct)
                     : "";
  return fmt::format("{} of {} tested sizes regress{}, median change {:+.1f}% worse", s.regressions,
                     s.tested, shift, s.medianWorsePct);
}

}  // namespace

std::string summaryLine(const Comparison& c) {
  Counts n = countOf(c);
  switch (c.outcome) {
    case GateOutcome::kRegression: {
      std::vector<std::string> names;
      for (const SeriesSummary& s : c.series) {
        if (s.regression && names.size() < 3) names.push_back(s.series.seriesString());
      }
      std::string what;
      if (c.globalRegression) {
        what = fmt::format(
            "the whole run is {:+.1f}% worse (median over {} cases), beyond the "
            "--drift allowance of {:g}%",
            c.commonShiftPct, n.tested, c.options.drift * 100);
      }
      if (n.seriesRegressing > 0) {
        if (!what.empty()) what += "; ";
        what += fmt::format("{} series regress{} ({}{})", n.seriesRegressing,
                            n.seriesRegressing == 1 ? "es" : "", fmt::join(names, ", "),
                            n.seriesRegressing > 3 ? ", ..." : "");
      }
      if (n.failed > 0) {
        what += fmt::format("{}{} case(s) failed or computed wrong results",
                            what.empty() ? "" : "; ", n.failed);
      }
      return fmt::format("REGRESSION: {}", what);
    }
    case GateOutcome::kInconclusive:
      return fmt::format(
          "inconclusive: {} of {} cases could not be tested ({} inconclusive, {} "
          "not comparable); no regression among the {} tested",
          n.inconclusive + n.notComparable, n.cases, n.inconclusive, n.notComparable, n.tested);
    case GateOutcome::kNothingComparable:
      return fmt::format("nothing comparable: {}",
                         !c.environmentNote.empty() && c.environmentDiffers
                             ? c.environmentNote
                             : "the runs have no case in common");
    case GateOutcome::kPass: break;
  }
  return fmt::format(
      "pass: {} cases tested, {} improved, {} slower but not confirmed by their "
      "series; run shift {:+.1f}%",
      n.tested, n.improvements, n.isolated, c.commonShiftPct);
}

std::string renderText(const Comparison& c, const LoadedRuns& runs, bool allCases, bool colour) {
  std::string out;
  out += fmt::format("# baseline : {}\n# candidate: {}\n# {}\n", runs.baseName, runs.candName,
                     describeOptions(c.options));
  if (!c.environmentNote.empty()) out += fmt::format("# note: {}\n", c.environmentNote);
  bool anyNoise = false;
  for (const CaseComparison& cc : c.cases) anyNoise = anyNoise || cc.baseRuns > 1;
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
    std::vector<TextTable::Column> columns{{"size", A::kRight},
                                           {fmt::format("base({})", unit), A::kRight},
                                           {fmt::format("cand({})", unit), A::kRight},
                                           {"change", A::kRight},
                                           {"p(Holm)", A::kRight}};
    if (anyNoise) columns.push_back({"noise", A::kRight});
    columns.push_back({paint("verdict", nullptr, colour)});
    columns.push_back({"note"});
    TextTable table(std::move(columns));
    for (const CaseComparison* cc : rows) {
      std::vector<std::string> row{compactSize(cc->key.sizeBytes),
                                   value(cc->baseValue, hasValues(*cc)),
                                   value(cc->candValue, hasValues(*cc)), change(*cc), pText(*cc)};
      if (anyNoise) row.push_back(cc->baseRuns > 1 ? fmt::format("{:.1f}%", cc->noisePct) : "-");
      row.push_back(paint(verdictText(*cc), cc, colour));
      row.push_back(cc->note);
      table.addRow(std::move(row));
    }
    out += fmt::format("#\n# {}\n{}", groupTitle(series), table.render("# "));
    if (const SeriesSummary* s = seriesOf(c, series); s && s->regressions > 0) {
      out += fmt::format("# series: {}{}\n", seriesLine(*s),
                         s->regression ? ": REGRESSION" : ": not confirmed");
    }
  }
  Counts n = countOf(c);
  out += fmt::format(
      "#\n# {} cases: {} same, {} improved, {} regressed ({} confirmed, {} unconfirmed), {} "
      "inconclusive, {} not comparable; run shift {:+.1f}% (median change, + = worse)",
      n.cases, n.same, n.improvements, n.confirmed + n.isolated, n.confirmed, n.isolated,
      n.inconclusive, n.notComparable, c.commonShiftPct);
  if (hidden > 0 && !allCases) out += fmt::format("; {} unchanged not shown (--all)", hidden);
  out += "\n";
  if (!c.onlyBase.empty() || !c.onlyCand.empty() || c.skipped > 0) {
    out += fmt::format(
        "# {} only in the baseline, {} only in the candidate, {} skipped "
        "(unsupported on both sides or outside --sizes)\n",
        c.onlyBase.size(), c.onlyCand.size(), c.skipped);
  }
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
                     escapeMarkdown(runs.candName), escapeMarkdown(describeOptions(c.options)));
  if (!c.environmentNote.empty()) {
    out += fmt::format("> {}\n\n", escapeMarkdown(c.environmentNote));
  }
  out += escapeMarkdown(summaryLine(c)) + "\n\n";
  out += "| verdict | cases |\n|---|---:|\n";
  out += fmt::format(
      "| same | {} |\n| improvement | {} |\n| regression (confirmed) | {} |\n"
      "| regression (unconfirmed: isolated size or within the run's shift) | {} |\n"
      "| inconclusive | {} |\n| not comparable | {} |\n\n",
      n.same, n.improvements, n.confirmed, n.isolated, n.inconclusive, n.notComparable);
  const std::string unit(metricUnit(c.options.metric));
  std::string rows;
  for (const auto& [series, members] : bySeries(c)) {
    for (const CaseComparison* cc : members) {
      if (!allCases && !notable(*cc)) continue;
      rows += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n",
                          escapeMarkdown(cc->key.toString()), value(cc->baseValue, hasValues(*cc)),
                          value(cc->candValue, hasValues(*cc)), change(*cc), pText(*cc),
                          c.outcome == GateOutcome::kRegression && cc->confirmed
                              ? "**" + verdictText(*cc) + "**"
                              : escapeMarkdown(verdictText(*cc)),
                          escapeMarkdown(cc->note));
    }
  }
  if (rows.empty()) {
    out += fmt::format("All {} tested cases are within the threshold.\n", n.tested);
  } else {
    out += fmt::format(
        "| case | baseline ({0}) | candidate ({0}) | change | p (Holm) | verdict | note |\n"
        "|---|---:|---:|---:|---:|---|---|\n",
        unit);
    out += rows;
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

}  // namespace

std::string renderJson(const Comparison& c, const LoadedRuns& runs) {
  Counts n = countOf(c);
  nlohmann::json j;
  j["outcome"] = gateOutcomeName(c.outcome);
  j["summary"] = summaryLine(c);
  j["baseline"] = runsJson(runs.base, runs.baseName);
  j["candidate"] = runsJson(runs.cand, runs.candName);
  j["options"] = {{"metric", metricName(c.options.metric)},
                  {"unit", metricUnit(c.options.metric)},
                  {"threshold_pct", c.options.threshold * 100},
                  {"alpha", c.options.alpha},
                  {"drift_pct", c.options.drift * 100},
                  {"sizes", c.options.sizes.all() ? "all" : c.options.sizes.text()},
                  {"allow_different_environment", c.options.allowDifferentEnvironment}};
  j["environment_note"] = c.environmentNote;
  j["common_shift_pct"] = c.commonShiftPct;
  j["global_regression"] = c.globalRegression;
  j["counts"] = {{"cases", n.cases},
                 {"tested", n.tested},
                 {"same", n.same},
                 {"improvement", n.improvements},
                 {"regression_confirmed", n.confirmed},
                 {"regression_isolated", n.isolated},
                 {"inconclusive", n.inconclusive},
                 {"not_comparable", n.notComparable},
                 {"only_baseline", c.onlyBase.size()},
                 {"only_candidate", c.onlyCand.size()},
                 {"skipped", c.skipped}};
  nlohmann::json series = nlohmann::json::array();
  for (const SeriesSummary& s : c.series) {
    series.push_back({{"series", s.series.seriesString()},
                      {"tested", s.tested},
                      {"regressions", s.regressions},
                      {"improvements", s.improvements},
                      {"median_worse_pct", s.medianWorsePct},
                      {"shift_pct", s.shiftPct},
                      {"regression", s.regression}});
  }
  j["series"] = series;
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseComparison& cc : c.cases) {
    bool values = hasValues(cc);
    cases.push_back({{"case", cc.key.toString()},
                     {"collective", cc.key.collective},
                     {"variant", cc.key.variant},
                     {"dtype", cc.key.dtype},
                     {"op", cc.key.op},
                     {"size_bytes", cc.key.sizeBytes},
                     {"placement", cc.key.placement},
                     {"nranks", cc.key.nranks},
                     {"root", cc.key.root},
                     {"verdict", verdictName(cc.verdict)},
                     {"confirmed", cc.confirmed},
                     {"failed", cc.failed},
                     {"note", cc.note},
                     {"base_n", cc.baseN},
                     {"cand_n", cc.candN},
                     {"base_runs", cc.baseRuns},
                     {"base", numberOrNull(values, cc.baseValue)},
                     {"cand", numberOrNull(values, cc.candValue)},
                     {"change_pct", numberOrNull(values, cc.changePct)},
                     {"worse_pct", numberOrNull(values, cc.worsePct)},
                     {"p", numberOrNull(cc.tested, cc.pValue)},
                     {"p_holm", numberOrNull(cc.tested, cc.adjustedP)},
                     {"exact", cc.exact},
                     {"min_p", numberOrNull(values, cc.minP)},
                     {"noise_pct", cc.noisePct},
                     {"threshold_pct", cc.thresholdPct}});
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

std::string escapeXml(std::string_view text) {
  std::string out;
  for (char ch : text) {
    auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids control characters other than tab, newline and carriage return.
        if (u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string renderJunit(const Comparison& c, const LoadedRuns& runs) {
  Counts n = countOf(c);
  int failures = 0, skipped = 0;
  for (const CaseComparison& cc : c.cases) {
    failures += cc.confirmed;
    skipped += cc.verdict == Verdict::kInconclusive || cc.verdict == Verdict::kNotComparable;
  }
  const std::string unit(metricUnit(c.options.metric));
  std::string suite = fmt::format("collbench gate: {} vs {}", runs.baseName, runs.candName);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"collbench gate\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\">\n"
      "  <testsuite name=\"{3}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\">\n",
      n.cases, failures, skipped, escapeXml(suite));
  out += "    <properties>\n";
  auto property = [&](std::string_view name, const std::string& v) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, escapeXml(v));
  };
  property("outcome", std::string(gateOutcomeName(c.outcome)));
  property("summary", summaryLine(c));
  property("metric", std::string(metricName(c.options.metric)));
  property("threshold", fmt::format("{:g}%", c.options.threshold * 100));
  property("alpha", fmt::format("{:g}", c.options.alpha));
  property("drift", fmt::format("{:g}%", c.options.drift * 100));
  property("common_shift", fmt::format("{:+.1f}%", c.commonShiftPct));
  property("sizes", c.options.sizes.all() ? "all" : c.options.sizes.text());
  if (!c.environmentNote.empty()) property("environment", c.environmentNote);
  out += "    </properties>\n";
  for (const CaseComparison& cc : c.cases) {
    const CaseKey& k = cc.key;
    std::string detail =
        hasValues(cc)
            ? fmt::format("{} {} -> {} {} ({:+.1f}%), p(Holm) {}, threshold {:.1f}%",
                          metricName(c.options.metric), value(cc.baseValue, true),
                          value(cc.candValue, true), unit, cc.changePct, pText(cc), cc.thresholdPct)
            : cc.note;
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"",
                       escapeXml(fmt::format("collbench.{}.{}", k.collective, k.variant)),
                       escapeXml(k.toString()));
    if (cc.confirmed) {
      out += fmt::format(">\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n",
                         escapeXml(cc.failed ? cc.note : "regression: " + detail),
                         escapeXml(fmt::format("{}{}{}", detail, cc.note.empty() ? "" : "\n",
                                               cc.failed ? "" : cc.note)));
      out += "    </testcase>\n";
    } else if (cc.verdict == Verdict::kInconclusive || cc.verdict == Verdict::kNotComparable) {
      out += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                         escapeXml(fmt::format("{}: {}", verdictName(cc.verdict), cc.note)));
    } else {
      out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                         escapeXml(fmt::format("{}: {}", verdictText(cc), detail)));
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace cb::cli
