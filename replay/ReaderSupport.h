// What the trace readers share: type names, process-group lists, element counts of ET tensors.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/DataType.h"
#include "core/Text.h"
#include "replay/Trace.h"

namespace cb::replay {

// PyTorch's spellings: "float", "Tensor(float)", "GenericList[Tensor(long int)]", "Float",
// "c10::BFloat16", "unsigned char", "int8_t"... nullopt when not a type we can hold.
std::optional<DataType> dataTypeFromTorch(std::string_view name);

// `## process_group:init ##`'s payload (a JSON list of {pg_name, pg_desc|backend_id, ranks,
// group_size}) into out.groups. UsageError naming the file and `where` when it is not such a list
// (param's replayer notes the string can be cut off in big jobs: that is an error here, not a
// silent world group).
void parseProcessGroups(const std::string& file, const std::string& where, const std::string& json,
                        RankTrace& out);

// Total elements and element size of an ET tensor value: [id, storage, offset, numel, elem_bytes,
// device], or a (nested) list of them. False when `v` holds no tensor.
bool tensorElements(const nlohmann::json& v, uint64_t& numel, uint64_t& elemBytes);

// A trace file's JSON object holding the array `key` (ET: "nodes", Kineto: "traceEvents"); a
// UsageError naming the file otherwise ("not valid JSON", or "not a KIND (no "KEY" list)").
nlohmann::json parseTraceJson(const std::string& file, std::string_view text, const char* key,
                              std::string_view kind);

// An integer list (split sizes) from a JSON array or its JSON text ("[]", "[96, 224]").
std::vector<uint64_t> splitList(const std::string& file, const std::string& where,
                                const nlohmann::json& v);

}  // namespace cb::replay
