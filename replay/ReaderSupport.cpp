#include "replay/ReaderSupport.h"

#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <utility>

#include "core/Error.h"
#include "replay/Readers.h"

namespace cb::replay {

std::optional<DataType> dataTypeFromTorch(std::string_view name) {
  // Strip the wrappers: GenericList[Tensor(float)] -> float.
  for (std::string_view w : {"GenericList[", "Tensor(", "c10::", "at::"}) {
    while (true) {
      auto at = name.find(w);
      if (at == std::string_view::npos) break;
      name = name.substr(at + w.size());
    }
  }
  while (!name.empty() && (name.back() == ')' || name.back() == ']')) name.remove_suffix(1);
  const std::string n = toLower(trim(name));
  static const std::array<std::pair<std::string_view, DataType>, 24> kTypes{{
      {"float", DataType::kFloat},         {"float32", DataType::kFloat},
      {"double", DataType::kDouble},       {"float64", DataType::kDouble},
      {"half", DataType::kHalf},           {"float16", DataType::kHalf},
      {"bfloat16", DataType::kBFloat16},   {"long", DataType::kInt64},
      {"long int", DataType::kInt64},      {"int64", DataType::kInt64},
      {"int64_t", DataType::kInt64},       {"int", DataType::kInt32},
      {"int32", DataType::kInt32},         {"int32_t", DataType::kInt32},
      {"unsigned char", DataType::kUint8}, {"byte", DataType::kUint8},
      {"uint8", DataType::kUint8},         {"uint8_t", DataType::kUint8},
      {"bool", DataType::kUint8},          {"signed char", DataType::kInt8},
      {"char", DataType::kInt8},           {"int8", DataType::kInt8},
      {"int8_t", DataType::kInt8},         {"long long", DataType::kInt64},
  }};
  for (const auto& [k, t] : kTypes) {
    if (k == n) return t;
  }
  return std::nullopt;
}

void parseProcessGroups(const std::string& file, const std::string& where, const std::string& json,
                        RankTrace& out) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    traceError(file, where, "the process_group:init list is not JSON (cut off?)");
  }
  for (const auto& g : doc) {
    if (!g.is_object() || !g.contains("pg_name")) {
      traceError(file, where, "a process group without pg_name");
    }
    ProcessGroup pg;
    const auto& nm = g["pg_name"];
    pg.name = nm.is_string() ? nm.get<std::string>() : nm.dump();
    if (g.contains("pg_desc") && g["pg_desc"].is_string()) pg.desc = g["pg_desc"];
    if (g.contains("backend_id")) {
      // 1.0.2: record_param_comms names its group by this id.
      pg.desc =
          g["backend_id"].is_string() ? g["backend_id"].get<std::string>() : g["backend_id"].dump();
    }
    if (g.contains("ranks") && g["ranks"].is_array()) {
      for (const auto& r : g["ranks"]) {
        if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > (1 << 24)) {
          traceError(file, where, fmt::format("group {}: a rank that is not a rank", pg.name));
        }
        pg.ranks.push_back(r.get<int>());
      }
    }
    if (g.contains("group_size") && g["group_size"].is_number_integer()) {
      pg.size = g["group_size"].get<int>();
    }
    if (pg.size <= 0) pg.size = static_cast<int>(pg.ranks.size());
    out.groups[pg.name] = std::move(pg);
  }
}

bool tensorElements(const nlohmann::json& v, uint64_t& numel, uint64_t& elemBytes) {
  if (!v.is_array() || v.empty()) return false;
  // A tensor: six fields, numel and elem_bytes integers, the device a string.
  if (v.size() == 6 && v[3].is_number_integer() && v[4].is_number_integer() && v[5].is_string()) {
    if (v[3].get<int64_t>() < 0 || v[4].get<int64_t>() <= 0 || v[4].get<int64_t>() > 16) {
      return false;
    }
    numel += v[3].get<uint64_t>();
    elemBytes = v[4].get<uint64_t>();
    return true;
  }
  bool any = false;
  for (const auto& e : v) {
    if (e.is_array()) any = tensorElements(e, numel, elemBytes) || any;
  }
  return any;
}

std::vector<uint64_t> splitList(const std::string& file, const std::string& where,
                                const nlohmann::json& v) {
  nlohmann::json a = v;
  if (v.is_string()) a = nlohmann::json::parse(v.get<std::string>(), nullptr, false);
  std::vector<uint64_t> out;
  if (a.is_null()) return out;
  if (!a.is_array()) traceError(file, where, "split sizes are not a list of integers");
  for (const auto& e : a) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0) {
      traceError(file, where, "split sizes are not a list of integers");
    }
    out.push_back(e.get<uint64_t>());
  }
  return out;
}

std::string readTraceBytes(const std::string& path) {
  // gzopen reads plain files as they are, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw UsageError(fmt::format("trace {}: cannot open", path));
  std::string out;
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      throw UsageError(fmt::format("trace {}: read failed ({})", path, msg));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
    if (out.size() > (size_t{4} << 30)) {
      gzclose(f);
      throw UsageError(fmt::format("trace {}: larger than 4 GiB uncompressed", path));
    }
  }
  gzclose(f);
  return out;
}

RankTrace parseTrace(const std::string& name, std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() &&
         (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t')) {
    ++i;
  }
  if (i < bytes.size() && bytes[i] == '{') {
    // Both JSON forms start with an object; Kineto's has traceEvents near the top.
    if (bytes.find("\"traceEvents\"") != std::string_view::npos) return readKineto(name, bytes);
    return readPytorchEt(name, bytes);
  }
  return readChakra(name, bytes);
}

RankTrace readTrace(const std::string& path) { return parseTrace(path, readTraceBytes(path)); }

nlohmann::json parseTraceJson(const std::string& file, std::string_view text, const char* key,
                              std::string_view kind) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) traceError(file, "", "not valid JSON (truncated?)");
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array()) {
    traceError(file, "", fmt::format("not a {} (no \"{}\" list)", kind, key));
  }
  return doc;
}

}  // namespace cb::replay
