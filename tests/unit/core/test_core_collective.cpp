// Collective size conventions (core/Collective.h) and the dtype/op parsers (core/DataType.h),
// checked against nccl-tests' table: S, busbw factor, counts, in-place offsets, aliases.
#include <gtest/gtest.h>

#include <vector>

#include "core/Collective.h"
#include "core/DataType.h"
#include "core/Error.h"

namespace {

using cb::Collective;
using cb::DataType;
using cb::RedOp;

TEST(Collective, BusBwFactorsAsInNcclTests) {
  struct Row {
    Collective c;
    double f1, f2, f3, f4, f8;
  };
  const Row rows[] = {
      {Collective::kAllReduce, 0, 1, 4.0 / 3, 1.5, 1.75},
      {Collective::kAllGather, 0, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::kReduceScatter, 0, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::kAllToAll, 0, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::kBroadcast, 1, 1, 1, 1, 1},
      {Collective::kReduce, 1, 1, 1, 1, 1},
      {Collective::kSendRecv, 1, 1, 1, 1, 1},
  };
  EXPECT_EQ(std::size(rows), cb::allCollectives().size());
  for (const auto& r : rows) {
    SCOPED_TRACE(cb::collectiveName(r.c));
    EXPECT_DOUBLE_EQ(cb::busBwFactor(r.c, 1), r.f1);
    EXPECT_DOUBLE_EQ(cb::busBwFactor(r.c, 2), r.f2);
    EXPECT_DOUBLE_EQ(cb::busBwFactor(r.c, 3), r.f3);
    EXPECT_DOUBLE_EQ(cb::busBwFactor(r.c, 4), r.f4);
    EXPECT_DOUBLE_EQ(cb::busBwFactor(r.c, 8), r.f8);
  }
}

TEST(Collective, CountsAndAlgBytes) {
  const int n = 4;
  cb::CollArgs a;
  a.count = 10;
  a.dtype = DataType::kFloat;
  struct Row {
    Collective c;
    size_t send, recv;
    uint64_t bytes;
  };
  const Row rows[] = {
      {Collective::kAllReduce, 10, 10, 40},      {Collective::kAllGather, 10, 40, 160},
      {Collective::kReduceScatter, 40, 10, 160}, {Collective::kAllToAll, 40, 40, 160},
      {Collective::kBroadcast, 10, 10, 40},      {Collective::kReduce, 10, 10, 40},
      {Collective::kSendRecv, 10, 10, 40},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(cb::collectiveName(r.c));
    a.coll = r.c;
    EXPECT_EQ(cb::sendCount(a, n), r.send);
    EXPECT_EQ(cb::recvCount(a, n), r.recv);
    EXPECT_EQ(cb::algBytes(a, n), r.bytes);
  }
  a.coll = Collective::kAllGather;
  a.dtype = DataType::kDouble;
  EXPECT_EQ(cb::algBytes(a, 3), 10u * 8 * 3);
}

TEST(Collective, CountForBytesIsTheLargestThatFits) {
  for (Collective c : cb::allCollectives()) {
    for (DataType t : cb::allDataTypes()) {
      for (int n : {1, 2, 3, 4, 7, 8, 16}) {
        for (uint64_t bytes : {0ull, 1ull, 7ull, 8ull, 1000ull, 4096ull, 65537ull, 1ull << 30}) {
          size_t count = cb::countForBytes(c, t, bytes, n);
          cb::CollArgs a{c, t, RedOp::kSum, 0, count};
          EXPECT_LE(cb::algBytes(a, n), bytes);
          a.count = count + 1;
          EXPECT_GT(cb::algBytes(a, n), bytes)
              << cb::collectiveName(c) << " " << cb::dataTypeName(t) << " n=" << n;
        }
      }
    }
  }
  EXPECT_EQ(cb::countForBytes(Collective::kAllReduce, DataType::kFloat, 8, 16), 2u);
  EXPECT_EQ(cb::countForBytes(Collective::kAllToAll, DataType::kDouble, 33554432, 16), 262144u);
  EXPECT_EQ(cb::countForBytes(Collective::kReduceScatter, DataType::kFloat, 128, 8), 4u);
}

TEST(Collective, InPlaceOffsets) {
  cb::CollArgs a;
  a.count = 5;
  for (Collective c : cb::allCollectives()) {
    a.coll = c;
    bool hasIn = c != Collective::kAllToAll && c != Collective::kSendRecv;
    EXPECT_EQ(cb::hasInPlace(c), hasIn) << cb::collectiveName(c);
    for (int rank : {0, 1, 3}) {
      size_t send = c == Collective::kAllGather ? 5u * rank : 0;
      size_t recv = c == Collective::kReduceScatter ? 5u * rank : 0;
      EXPECT_EQ(cb::inPlaceSendOffset(a, rank), send) << cb::collectiveName(c);
      EXPECT_EQ(cb::inPlaceRecvOffset(a, rank), recv) << cb::collectiveName(c);
    }
  }
}

TEST(Collective, ReductionAndRoot) {
  std::vector<Collective> reducing, rooted;
  for (Collective c : cb::allCollectives()) {
    if (cb::hasReduction(c)) reducing.push_back(c);
    if (cb::hasRoot(c)) rooted.push_back(c);
  }
  EXPECT_EQ(reducing, (std::vector<Collective>{Collective::kAllReduce, Collective::kReduceScatter,
                                               Collective::kReduce}));
  EXPECT_EQ(rooted, (std::vector<Collective>{Collective::kBroadcast, Collective::kReduce}));
}

TEST(Collective, ParseAliases) {
  EXPECT_EQ(cb::parseCollective("all_reduce"), Collective::kAllReduce);
  EXPECT_EQ(cb::parseCollective("all_reduce_perf"), Collective::kAllReduce);
  EXPECT_EQ(cb::parseCollective("allreduce"), Collective::kAllReduce);
  EXPECT_EQ(cb::parseCollective("AllReduce"), Collective::kAllReduce);
  EXPECT_EQ(cb::parseCollective("all-gather"), Collective::kAllGather);
  EXPECT_EQ(cb::parseCollective("all_gather_perf"), Collective::kAllGather);
  EXPECT_EQ(cb::parseCollective("reduce_scatter"), Collective::kReduceScatter);
  EXPECT_EQ(cb::parseCollective("reducescatter"), Collective::kReduceScatter);
  EXPECT_EQ(cb::parseCollective("reduce_scatter_perf"), Collective::kReduceScatter);
  EXPECT_EQ(cb::parseCollective("bcast"), Collective::kBroadcast);
  EXPECT_EQ(cb::parseCollective("broadcast_perf"), Collective::kBroadcast);
  EXPECT_EQ(cb::parseCollective("reduce"), Collective::kReduce);
  EXPECT_EQ(cb::parseCollective("alltoall_perf"), Collective::kAllToAll);
  EXPECT_EQ(cb::parseCollective("sendrecv_perf"), Collective::kSendRecv);
  for (Collective c : cb::allCollectives()) {
    EXPECT_EQ(cb::parseCollective(cb::collectiveName(c)), c);
  }
  for (const char* bad : {"", "_perf", "allreduc", "gather", "scatter_perf", "all"}) {
    EXPECT_THROW(cb::parseCollective(bad), cb::UsageError) << bad;
  }
}

TEST(Collective, ParseList) {
  EXPECT_EQ(cb::parseCollectiveList("all").size(), 7u);
  EXPECT_EQ(cb::parseCollectiveList("allreduce, all_reduce,allgather"),
            (std::vector<Collective>{Collective::kAllReduce, Collective::kAllGather}));
  EXPECT_THROW(cb::parseCollectiveList(""), cb::UsageError);
  EXPECT_THROW(cb::parseCollectiveList(" , "), cb::UsageError);
  EXPECT_THROW(cb::parseCollectiveList("allreduce,nope"), cb::UsageError);
}

TEST(DataType, ParseAliases) {
  struct Alias {
    const char* name;
    DataType t;
  };
  const Alias aliases[] = {
      {"int8", DataType::kInt8},     {"char", DataType::kInt8},
      {"uint8", DataType::kUint8},   {"int32", DataType::kInt32},
      {"int", DataType::kInt32},     {"uint32", DataType::kUint32},
      {"int64", DataType::kInt64},   {"uint64", DataType::kUint64},
      {"half", DataType::kHalf},     {"float16", DataType::kHalf},
      {"fp16", DataType::kHalf},     {"bfloat16", DataType::kBFloat16},
      {"bf16", DataType::kBFloat16}, {"float", DataType::kFloat},
      {"float32", DataType::kFloat}, {"fp32", DataType::kFloat},
      {"double", DataType::kDouble}, {"float64", DataType::kDouble},
      {"fp64", DataType::kDouble},   {" FLOAT ", DataType::kFloat},
  };
  for (const auto& a : aliases) EXPECT_EQ(cb::parseDataType(a.name), a.t) << a.name;
  for (DataType t : cb::allDataTypes()) EXPECT_EQ(cb::parseDataType(cb::dataTypeName(t)), t);
  for (const char* bad : {"", "int16", "float8", "all", "f32x"}) {
    EXPECT_THROW(cb::parseDataType(bad), cb::UsageError) << bad;
  }
  EXPECT_EQ(cb::parseDataTypeList("all").size(), 10u);
  EXPECT_EQ(cb::parseDataTypeList("float,half"),
            (std::vector<DataType>{DataType::kFloat, DataType::kHalf}));
  EXPECT_THROW(cb::parseDataTypeList(""), cb::UsageError);
}

TEST(DataType, SizesAndKinds) {
  const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  size_t i = 0;
  for (DataType t : cb::allDataTypes()) EXPECT_EQ(cb::dataTypeSize(t), sizes[i++]);
  EXPECT_TRUE(cb::isFloatingPoint(DataType::kHalf));
  EXPECT_TRUE(cb::isFloatingPoint(DataType::kBFloat16));
  EXPECT_FALSE(cb::isFloatingPoint(DataType::kUint64));
  EXPECT_FALSE(cb::isSigned(DataType::kUint8));
  EXPECT_EQ(cb::exactIntegerLimit(DataType::kHalf), 2048.0);
  EXPECT_EQ(cb::exactIntegerLimit(DataType::kBFloat16), 256.0);
  EXPECT_EQ(cb::exactIntegerLimit(DataType::kFloat), 16777216.0);
}

TEST(RedOp, ParseListAndAliases) {
  EXPECT_EQ(cb::parseRedOpList("all"),
            (std::vector<RedOp>{RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg}));
  EXPECT_EQ(cb::parseRedOpList("sum,bxor"), (std::vector<RedOp>{RedOp::kSum, RedOp::kBxor}));
  EXPECT_EQ(cb::parseRedOp("mean"), RedOp::kAvg);
  EXPECT_EQ(cb::parseRedOp("BAND"), RedOp::kBand);
  for (int i = 0; i <= static_cast<int>(RedOp::kBxor); ++i) {
    auto op = static_cast<RedOp>(i);
    EXPECT_EQ(cb::parseRedOp(cb::redOpName(op)), op);
  }
  for (const char* bad : {"", "xor", "mulsum", "all"}) {
    EXPECT_THROW(cb::parseRedOp(bad), cb::UsageError) << bad;
  }
  EXPECT_THROW(cb::parseRedOpList(""), cb::UsageError);
}

}  // namespace
