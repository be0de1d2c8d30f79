// The replay part of the HTML report, from the "replay" document `collbench replay` stores with a
// run (cli/ReplayCommand.cpp): the trace and how it was fitted, a table per op kind and size
// (replayed time, recorded time where the trace has one, their ratio) and every rank's first
// timed replay as a timeline, op after op.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "results/HtmlReport.h"

namespace cb {

std::string renderReplayDetail(const std::string& text) {
  using nlohmann::json;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception&) {
    return "<p class=\"warn\">The stored replay document is not valid JSON.</p>\n";
  }
  if (!doc.is_object() || !doc.contains("rows")) {
    return "<p class=\"warn\">Unknown replay document format.</p>\n";
  }
  try {
    std::string out =
        fmt::format("<div class=\"figure replay\">\n<h3>Replay of {} ({}, {} rank(s); {})</h3>\n",
                    htmlEscape(doc.value("trace", "")), htmlEscape(doc.value("trace_format", "")),
                    doc.value("ranks", 0), htmlEscape(doc.value("hash", "")));
    for (const auto& note : doc.value("notes", json::array())) {
      out += fmt::format("<p class=\"note\">{}</p>\n", htmlEscape(note.get<std::string>()));
    }
    out +=
        "<table><tr><th>op</th><th>group</th><th>dtype</th><th>bytes</th><th>instances</th>"
        "<th>time (us)</th><th>recorded (us)</th><th>ratio</th></tr>\n";
    for (const auto& r : doc.at("rows")) {
      const bool recorded = r.contains("recorded_us");
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</td>"
          "<td>{}</td></tr>\n",
          htmlEscape(r.value("op", "")),
          htmlEscape(r.value("group", "").empty() ? "world" : r.value("group", "")),
          htmlEscape(r.value("dtype", "")), r.value("bytes", uint64_t{0}), r.value("instances", 0),
          r.value("time_us", 0.0),
          recorded ? fmt::format("{:.1f}", r.value("recorded_us", 0.0)) : "-",
          recorded ? fmt::format("{:.2f}", r.value("ratio", 0.0)) : "-");
    }
    out += "</table>\n";
    if (doc.contains("timeline")) {
      out += renderTimelineSvg(doc.at("timeline"),
                               "One replay per rank: each op's time, op after op (recorded "
                               "compute gaps left out)",
                               "time from the replay's start");
    }
    return out + "</div>\n";
  } catch (const json::exception& e) {
    return fmt::format("<p class=\"warn\">Malformed replay document: {}</p>\n",
                       htmlEscape(e.what()));
  }
}

}  // namespace cb
