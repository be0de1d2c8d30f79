#include "core/DataType.h"

#include <fmt/format.h>
#include <array>

#include "core/EnumNames.h"
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

// The names parseDataType takes, with nccl-tests' and PyTorch's spellings as aliases.
constexpr EnumRow<DataType> kDataTypeNames[] = {{DataType::kInt8, "int8", "char"},
                                                {DataType::kUint8, "uint8"},
                                                {DataType::kInt32, "int32", "int"},
                                                {DataType::kUint32, "uint32"},
                                                {DataType::kInt64, "int64"},
                                                {DataType::kUint64, "uint64"},
                                                {DataType::kHalf, "half", "float16 fp16"},
                                                {DataType::kBFloat16, "bfloat16", "bf16"},
                                                {DataType::kFloat, "float", "float32 fp32"},
                                                {DataType::kDouble, "double", "float64 fp64"}};

DataType parseDataType(std::string_view s) { return parseListItem(kDataTypeNames, s, "data type"); }

std::vector<DataType> parseDataTypeList(std::string_view s) {
  return parseEnumList<DataType>(s, kAllTypes, parseDataType, "empty data type list");
}

constexpr EnumRow<RedOp> kRedOps[] = {{RedOp::kSum, "sum"},         {RedOp::kProd, "prod"},
                                      {RedOp::kMax, "max"},         {RedOp::kMin, "min"},
                                      {RedOp::kAvg, "avg", "mean"}, {RedOp::kBand, "band"},
                                      {RedOp::kBor, "bor"},         {RedOp::kBxor, "bxor"}};
std::string_view redOpName(RedOp op) { return enumName(kRedOps, op); }

RedOp parseRedOp(std::string_view s) { return parseListItem(kRedOps, s, "reduction op"); }

std::vector<RedOp> parseRedOpList(std::string_view s) {
  return parseEnumList<RedOp>(s, kNcclOps, parseRedOp, "empty reduction op list");
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
