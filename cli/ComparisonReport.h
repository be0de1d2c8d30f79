// What `compare` and `gate` share: their statistical flags, resolving BASE/CAND (ids, last,
// label:NAME@last-K) against the store, and rendering a Comparison as text, Markdown, JSON or
// JUnit XML.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "results/Compare.h"
#include "results/Store.h"

namespace cb::cli {

struct CompareFlags {
  std::string db = "collbench.db";
  std::string metric = "busbw";
  std::string threshold = "5%";
  double alpha = 0.01;
  std::string sizes;
  std::string runValue = "p10";
  double power = 0.9;
  bool allowDifferentEnvironment = false;
};

// Adds --db --metric --threshold --alpha --sizes --run-value --allow-different-environment.
void addCompareFlags(CLI::App& sub, CompareFlags& flags);
CompareOptions toCompareOptions(const CompareFlags& flags);  // UsageError for bad values

// Both sides loaded with their samples, and how to name them.
struct LoadedRuns {
  RunSet base, cand;
  std::string baseName, candName;     // "run 12 (base)", "label:main@last-3 (runs 9, 8, 7)"
  std::vector<std::string> warnings;  // runs that did not finish ok (compare shows them)
};

// BASE and CAND: id, list of ids, last, label:NAME[@last-K] (see RunSpec). Throws UsageError
// naming what is missing (unknown run, no finished run with that label), for a run on both
// sides, and, when `strict` (gate), for a baseline that did not finish ok or a candidate still
// running or interrupted.
LoadedRuns loadRuns(const Store& store, const std::string& base, const std::string& cand,
                    bool strict);

// One side alone (gate --calibrate): the runs of `spec`, every one finished ok (else
// UsageError); `name` gets how to name them.
RunSet loadSide(const Store& store, const std::string& spec, std::string& name);

// Texts of a comparison. `allCases` lists every case; otherwise only those that are not
// "same". `colour` adds ANSI colours (text only).
std::string renderText(const Comparison& c, const LoadedRuns& runs, bool allCases, bool colour);
std::string renderMarkdown(const Comparison& c, const LoadedRuns& runs, bool allCases);
std::string renderJson(const Comparison& c, const LoadedRuns& runs);
std::string renderJunit(const Comparison& c, const LoadedRuns& runs);

// One line: "gate: REGRESSION: 2 series regress (...)" / "gate: pass: 126 cases ...".
std::string summaryLine(const Comparison& c);

// Escapes for user text (labels, variant names, notes) in XML and Markdown table cells.
std::string escapeXml(std::string_view text);
std::string escapeMarkdown(std::string_view text);

}  // namespace cb::cli
