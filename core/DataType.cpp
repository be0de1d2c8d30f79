#include "core/DataType.h"

#include <fmt/format.h>
#include <array>

#include "core/Error.h"
#include "core/Text.h"

namespace cb {
namespace {

struct TypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
  bool floating;
  bool isSigned;
  double exactLimit;
};

constexpr std::array<TypeInfo, 10> kTypes{{
    {DataType::kInt8, "int8", 1, false, true, 127.0},
    {DataType::kUint8, "uint8", 1, false, false, 255.0},
    {DataType::kInt32, "int32", 4, false, true, 2147483647.0},
    {DataType::kUint32, "uint32", 4, false, false, 4294967295.0},
    {DataType::kInt64, "int64", 8, false, true, 9.2e18},
    {DataType::kUint64, "uint64", 8, false, false, 1.8e19},
    {DataType::kHalf, "half", 2, true, true, 2048.0},
    {DataType::kBFloat16, "bfloat16", 2, true, true, 256.0},
    {DataType::kFloat, "float", 4, true, true, 16777216.0},
    {DataType::kDouble, "double", 8, true, true, 9007199254740992.0},
}};

constexpr std::array<DataType, 10> kAllTypes{
    DataType::kInt8,   DataType::kUint8, DataType::kInt32,    DataType::kUint32, DataType::kInt64,
    DataType::kUint64, DataType::kHalf,  DataType::kBFloat16, DataType::kFloat,  DataType::kDouble};

constexpr std::array<RedOp, 5> kNcclOps{RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin,
                                        RedOp::kAvg};

const TypeInfo& info(DataType t) { return kTypes[static_cast<size_t>(t)]; }

}  // namespace

size_t dataTypeSize(DataType t) { return info(t).size; }
std::string_view dataTypeName(DataType t) { return info(t).name; }
bool isFloatingPoint(DataType t) { return info(t).floating; }
bool isSigned(DataType t) { return info(t).isSigned; }
double exactIntegerLimit(DataType t) { return info(t).exactLimit; }
std::span<const DataType> allDataTypes() { return kAllTypes; }

DataType parseDataType(std::string_view s) {
  std::string v = toLower(trim(s));
  struct Alias {
    std::string_view name;
    DataType type;
  };
  static constexpr Alias kAliases[] = {
      {"int8", DataType::kInt8},     {"char", DataType::kInt8},
      {"uint8", DataType::kUint8},   {"int32", DataType::kInt32},
      {"int", DataType::kInt32},     {"uint32", DataType::kUint32},
      {"int64", DataType::kInt64},   {"uint64", DataType::kUint64},
      {"half", DataType::kHalf},     {"float16", DataType::kHalf},
      {"fp16", DataType::kHalf},     {"bfloat16", DataType::kBFloat16},
      {"bf16", DataType::kBFloat16}, {"float", DataType::kFloat},
      {"float32", DataType::kFloat}, {"fp32", DataType::kFloat},
      {"double", DataType::kDouble}, {"float64", DataType::kDouble},
      {"fp64", DataType::kDouble},
  };
  for (const auto& a : kAliases) {
    if (v == a.name) return a.type;
  }
  throw UsageError(fmt::format(
      "unknown data type '{}' (expected int8, uint8, int32, uint32, int64, uint64, half, "
      "bfloat16, float, double or all)",
      s));
}

std::vector<DataType> parseDataTypeList(std::string_view s) {
  if (toLower(trim(s)) == "all") return {kAllTypes.begin(), kAllTypes.end()};
  std::vector<DataType> out;
  for (const auto& item : splitList(s)) out.push_back(parseDataType(item));
  if (out.empty()) throw UsageError("empty data type list");
  return out;
}

std::string_view redOpName(RedOp op) {
  static constexpr std::string_view kNames[] = {"sum", "prod", "max", "min",
                                                "avg", "band", "bor", "bxor"};
  return kNames[static_cast<size_t>(op)];
}

RedOp parseRedOp(std::string_view s) {
  std::string v = toLower(trim(s));
  for (int i = 0; i <= static_cast<int>(RedOp::kBxor); ++i) {
    if (v == redOpName(static_cast<RedOp>(i))) return static_cast<RedOp>(i);
  }
  if (v == "mean") return RedOp::kAvg;
  throw UsageError(fmt::format(
      "unknown reduction op '{}' (expected sum, prod, max, min, avg, band, bor, bxor or all)", s));
}

std::vector<RedOp> parseRedOpList(std::string_view s) {
  if (toLower(trim(s)) == "all") return {kNcclOps.begin(), kNcclOps.end()};
  std::vector<RedOp> out;
  for (const auto& item : splitList(s)) out.push_back(parseRedOp(item));
  if (out.empty()) throw UsageError("empty reduction op list");
  return out;
}

bool redOpValidFor(RedOp op, DataType t) {
  switch (op) {
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor: return !isFloatingPoint(t);
    default: return true;
  }
}

}  // namespace cb
