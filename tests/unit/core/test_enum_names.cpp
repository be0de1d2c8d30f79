// core/EnumNames.h: one table of rows per enum read both ways (name of a value, value of a name
// or alias), the parse error listing the table's names, and list flags; core/Result.h's status
// names through the same rows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/Collective.h"
#include "core/DataType.h"
#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Result.h"

namespace cb {
namespace {

enum class Fruit { kApple, kPear, kQuince };
constexpr EnumRow<Fruit> kFruits[] = {
    {Fruit::kApple, "apple", "malus pomme"}, {Fruit::kPear, "pear"}, {Fruit::kQuince, "quince"}};

TEST(EnumNames, NamesAndAliasesReadBothWays) {
  EXPECT_EQ(enumName(kFruits, Fruit::kPear), "pear");
  EXPECT_EQ(enumName(kFruits, static_cast<Fruit>(9)), "?");
  EXPECT_EQ(enumName(kFruits, static_cast<Fruit>(9), "none"), "none");
  EXPECT_EQ(enumValue(kFruits, "quince"), Fruit::kQuince);
  EXPECT_EQ(enumValue(kFruits, "malus"), Fruit::kApple);
  EXPECT_EQ(enumValue(kFruits, "pomme"), Fruit::kApple);
  // Aliases are whole words: no prefix or part of the alias list matches.
  EXPECT_FALSE(enumValue(kFruits, "mal").has_value());
  EXPECT_FALSE(enumValue(kFruits, "malus pomme").has_value());
  EXPECT_FALSE(enumValue(kFruits, "").has_value());
  EXPECT_EQ(enumNames(kFruits), "apple, pear, quince");
}

TEST(EnumNames, AParseErrorListsTheTablesNames) {
  EXPECT_EQ(parseEnum(kFruits, "pear", "fruit"), Fruit::kPear);
  try {
    parseEnum(kFruits, "plum", "fruit");
    FAIL() << "plum parsed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown fruit 'plum' (apple, pear, quince)");
  }
}

TEST(EnumNames, ListFlagsTakeAllOrEachItemOnce) {
  EXPECT_EQ(parseCollectiveList("all").size(), allCollectives().size());
  EXPECT_EQ(parseCollectiveList("allreduce, allgather,allreduce"),
            (std::vector<Collective>{Collective::kAllReduce, Collective::kAllGather}));
  EXPECT_EQ(parseDataTypeList("fp16,half,float"),
            (std::vector<DataType>{DataType::kHalf, DataType::kFloat}));
  EXPECT_EQ(parseRedOpList("mean,avg"), (std::vector<RedOp>{RedOp::kAvg}));
  EXPECT_THROW(parseRedOpList(" , "), UsageError);
  EXPECT_THROW(parseDataTypeList("float,fp17"), UsageError);
}

TEST(ResultStatus, NamesRoundTrip) {
  for (ResultStatus s : {ResultStatus::kOk, ResultStatus::kUnsupported, ResultStatus::kFailed,
                         ResultStatus::kSkipped}) {
    EXPECT_EQ(parseResultStatus(resultStatusName(s)), s);
  }
  EXPECT_EQ(resultStatusName(ResultStatus::kUnsupported), "unsupported");
  EXPECT_FALSE(parseResultStatus("suspect").has_value());
  ResultRecord r;
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.measured());  // no iterations yet
  r.iterations = 5;
  EXPECT_TRUE(r.measured());
  r.status = ResultStatus::kFailed;
  EXPECT_FALSE(r.measured());
}

}  // namespace
}  // namespace cb
