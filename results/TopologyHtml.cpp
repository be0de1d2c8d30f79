#include "results/TopologyHtml.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "results/HtmlReport.h"

namespace cb {

std::string topologyHtml(const std::string& topologyJson) {
  if (topologyJson.empty()) return "";
  auto j = nlohmann::json::parse(topologyJson, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("hosts")) return "";
  auto text = [](const nlohmann::json& o, const char* key) {
    return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
  };
  std::string out = "<details class=\"topology\"><summary>topology</summary>\n";
  for (const auto& h : j["hosts"]) {
    out +=
        fmt::format("<p>{}: {}</p>\n", htmlEscape(text(h, "host")), htmlEscape(text(h, "summary")));
    std::string matrix = text(h, "matrix");
    if (!matrix.empty()) out += fmt::format("<pre>{}</pre>\n", htmlEscape(matrix));
  }
  if (j.contains("placements") && j["placements"].is_array() && !j["placements"].empty()) {
    out +=
        "<table class=\"meta\">\n<tr><th>rank</th><th>host</th><th>CPUs</th><th>NUMA</th>"
        "<th>GPU</th><th>NIC</th></tr>\n";
    for (const auto& p : j["placements"]) {
      int numa = p.value("numa", -1);
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
          p.value("rank", -1), htmlEscape(text(p, "host")), htmlEscape(text(p, "cpus")),
          numa >= 0 ? std::to_string(numa) : "several", htmlEscape(text(p, "gpu")),
          htmlEscape(text(p, "nic")));
    }
    out += "</table>\n";
  }
  if (j.contains("findings") && j["findings"].is_array()) {
    for (const auto& f : j["findings"]) {
      if (f.is_string()) {
        out +=
            fmt::format("<p class=\"warn\">preflight: {}</p>\n", htmlEscape(f.get<std::string>()));
      }
    }
  }
  out += "</details>\n";
  return out;
}

}  // namespace cb
