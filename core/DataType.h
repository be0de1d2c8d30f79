// Element types and reduction operators, named as nccl-tests names them (-d, -o).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

enum class DataType : uint8_t {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kBFloat16,
  kFloat,
  kDouble,
};

// sum, prod, max, min, avg as in NCCL; band/bor/bxor as in MPI (integer types only).
enum class RedOp : uint8_t { kSum, kProd, kMax, kMin, kAvg, kBand, kBor, kBxor };

size_t dataTypeSize(DataType t);
std::string_view dataTypeName(DataType t);  // "int8", ..., "half", "bfloat16", "float", "double"
bool isFloatingPoint(DataType t);
bool isSigned(DataType t);
// The largest integer N such that every integer in [-N, N] is exact in the type (for floating
// point) or representable (for integers). Verification keeps results inside it.
double exactIntegerLimit(DataType t);
std::span<const DataType> allDataTypes();
// Accepts nccl-tests spellings and aliases (int8/char, uint8, int32/int, uint32, int64, uint64,
// half/float16/fp16, bfloat16/bf16, float/float32/fp32, double/float64/fp64); throws UsageError.
DataType parseDataType(std::string_view s);
// "all" expands to every type; otherwise a comma-separated list.
std::vector<DataType> parseDataTypeList(std::string_view s);

std::string_view redOpName(RedOp op);
RedOp parseRedOp(std::string_view s);
std::vector<RedOp> parseRedOpList(std::string_view s);
// Bitwise ops make no sense for floating-point types; everything else is defined.
bool redOpValidFor(RedOp op, DataType t);

}  // namespace cb
