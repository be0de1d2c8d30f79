// What `compare` and `gate` share: their statistical flags, resolving BASE/CAND (ids, last,
// label:NAME@last-K) against the store, and rendering a Comparison as text, Markdown, JSON or
// JUnit XML.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "results/Compare.h"
#include "results/Store.h"

namespace cb::cli {

struct CompareFlags {
  std::string db = "collbench.db";
  std::string metric = "busbw";
  std::string threshold = "5%";
  double alpha = 0.01;
  std::string drift = "15%";
  std::string sizes;
  bool allowDifferentEnvironment = false;
};

// Adds --db --metric --threshold --alpha --drift --sizes --allow-different-environment.
void addCompareFlags(CLI::App& sub, CompareFlags& flags);
CompareOptions toCompareOptions(const CompareFlags& flags);  // UsageError for bad values

// Both sides loaded with their samples, and how to name them.
struct LoadedRuns {
  RunSet base, cand;
  std::string baseName, candName;  // "run 12 (base)", "label:main@last-3 (runs 9, 8, 7)"
};

// BASE: id, last, label:NAME[@last-K]; CAND: id or last. Throws UsageError naming what is
// missing (unknown run, no finished run with that label).
LoadedRuns loadRuns(const Store& store, const std::string& base, const std::string& cand);

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
