// A Comparison (results/Compare.h) rendered as text, Markdown, JSON or JUnit XML, for `compare`
// and `gate`; the runs are resolved by adapters/CompareSides.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/CompareSides.h"
#include "results/Compare.h"

namespace cb {

// Texts of a comparison. `allCases` lists every case; otherwise only those that are not
// "same". `colour` adds ANSI colours (text only).
std::string renderText(const Comparison& c, const LoadedRuns& runs, bool allCases, bool colour);
std::string renderMarkdown(const Comparison& c, const LoadedRuns& runs, bool allCases);
std::string renderJson(const Comparison& c, const LoadedRuns& runs);
std::string renderJunit(const Comparison& c, const LoadedRuns& runs);

// One line: "gate: REGRESSION: 2 series regress (...)" / "gate: pass: 126 cases ...".
std::string summaryLine(const Comparison& c);

// User text (labels, variant names, notes) in a Markdown table cell; in JUnit XML it goes through
// htmlEscape (results/HtmlReport.h), whose output is also well-formed XML 1.0.
std::string escapeMarkdown(std::string_view text);

}  // namespace cb
