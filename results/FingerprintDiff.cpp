#include "results/FingerprintDiff.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace cb {
namespace {

std::map<std::string, std::string> comparableOf(const std::string& text) {
  std::map<std::string, std::string> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("comparable") ||
      !j["comparable"].is_object()) {
    return out;
  }
  for (const auto& [k, v] : j["comparable"].items()) {
    out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out;
}

std::string shown(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) return "-";
  constexpr size_t kMax = 60;
  return it->second.size() > kMax ? it->second.substr(0, kMax - 3) + "..." : it->second;
}

}  // namespace

std::string fingerprintDifference(const std::string& environmentJsonA,
                                  const std::string& environmentJsonB) {
  auto a = comparableOf(environmentJsonA), b = comparableOf(environmentJsonB);
  if (a.empty() || b.empty()) return "";
  std::set<std::string> keys;
  for (const auto& kv : a) keys.insert(kv.first);
  for (const auto& kv : b) keys.insert(kv.first);
  std::string out;
  for (const auto& k : keys) {
    auto ia = a.find(k), ib = b.find(k);
    if (ia != a.end() && ib != b.end() && ia->second == ib->second) continue;
    out += fmt::format("{}{}: {} vs {}", out.empty() ? "" : "; ", k, shown(a, k), shown(b, k));
  }
  return out;
}

}  // namespace cb
