// Size and duration parsing as users type them for -b/-e/-T (core/Size.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/Error.h"
#include "core/Size.h"
#include "core/Text.h"

namespace {

TEST(ParseSize, BinarySuffixes) {
  EXPECT_EQ(cb::parseSize("8"), 8u);
  EXPECT_EQ(cb::parseSize("0"), 0u);
  EXPECT_EQ(cb::parseSize("16K"), 16384u);
  EXPECT_EQ(cb::parseSize("16k"), 16384u);
  EXPECT_EQ(cb::parseSize("1M"), 1048576u);
  EXPECT_EQ(cb::parseSize("1MB"), 1048576u);
  EXPECT_EQ(cb::parseSize("1MiB"), 1048576u);
  EXPECT_EQ(cb::parseSize("1mib"), 1048576u);
  EXPECT_EQ(cb::parseSize("1.5K"), 1536u);
  EXPECT_EQ(cb::parseSize("0.5K"), 512u);
  EXPECT_EQ(cb::parseSize("1G"), 1073741824u);
  EXPECT_EQ(cb::parseSize("8G"), 8589934592u);
  EXPECT_EQ(cb::parseSize("2T"), 2199023255552u);
  EXPECT_EQ(cb::parseSize("64B"), 64u);
  EXPECT_EQ(cb::parseSize(" 32 K "), 32768u);
  EXPECT_EQ(cb::parseSize("18446744073709551615"), UINT64_MAX);
}

TEST(ParseSize, RejectsBadInput) {
  for (const char* bad : {"", "  ", "-1", "-1K", "abc", "K", "1.3", "1.3K", "0.1K", "10Q", "1KX",
                          "1.2.3", ".", "100000000T", "18446744073709551616", "16384P"}) {
    EXPECT_THROW(cb::parseSize(bad), cb::UsageError) << "'" << bad << "'";
  }
}

TEST(ParseSize, ErrorMessagesNameTheInput) {
  try {
    cb::parseSize("10Q");
    FAIL() << "no exception";
  } catch (const cb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("10Q"), std::string::npos) << e.what();
  }
}

TEST(FormatSize, BinaryUnits) {
  EXPECT_EQ(cb::formatSize(0), "0 B");
  EXPECT_EQ(cb::formatSize(8), "8 B");
  EXPECT_EQ(cb::formatSize(1023), "1023 B");
  EXPECT_EQ(cb::formatSize(1024), "1 KiB");
  EXPECT_EQ(cb::formatSize(1536), "1.5 KiB");
  EXPECT_EQ(cb::formatSize(65536), "64 KiB");
  EXPECT_EQ(cb::formatSize(1572864), "1.5 MiB");
  EXPECT_EQ(cb::formatSize(1ull << 30), "1 GiB");
  EXPECT_EQ(cb::formatSize(8ull << 40), "8 TiB");
  EXPECT_EQ(cb::formatSize(1ull << 50), "1 PiB");
  EXPECT_EQ(cb::formatSize(1ull << 60), "1 EiB");
  EXPECT_EQ(cb::formatSize(~0ull), "16 EiB");
  EXPECT_EQ(cb::formatSize(1000), "1000 B");
  EXPECT_EQ(cb::formatSize(1234567), "1.18 MiB");
  EXPECT_EQ(cb::formatSize(1000000), "977 KiB");
}

TEST(FormatSize, NeverUsesExponentNotation) {
  // Just below a unit boundary: rounds up into the next unit instead of "1.02e+03 KiB".
  EXPECT_EQ(cb::formatSize(1048575), "1 MiB");
  EXPECT_EQ(cb::formatSize((1ull << 30) - 1), "1 GiB");
  for (uint64_t b = 1; b < (1ull << 62); b = b * 3 + 1) {
    std::string s = cb::formatSize(b);
    EXPECT_EQ(s.find('e'), std::string::npos) << b << " -> " << s;
  }
}

TEST(FormatSize, RoundTripsThroughParseForWholeUnits) {
  for (uint64_t b : {1ull, 1024ull, 65536ull, 3ull << 20, 5ull << 30}) {
    std::string s = cb::formatSize(b);
    std::string compact;
    for (char c : s) {
      if (c != ' ') compact += c;
    }
    EXPECT_EQ(cb::parseSize(compact), b) << s;
  }
}

TEST(ParseDuration, Units) {
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("2"), 2.0);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("2s"), 2.0);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("200ms"), 0.2);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("500us"), 500e-6);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("3m"), 180.0);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("3min"), 180.0);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("1h"), 3600.0);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("1.3"), 1.3);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds(" 10 MS "), 0.01);
}

TEST(ParseDuration, RejectsBadInput) {
  for (const char* bad : {"", "-1", "-2s", "abc", "s", "5x", "1.2.3", "10Q"}) {
    EXPECT_THROW(cb::parseDurationSeconds(bad), cb::UsageError) << "'" << bad << "'";
  }
}

// Issue 50: one grammar for every duration flag. A bare number is in the flag's unit (seconds,
// or --inject-delay's microseconds); every unit means the same everywhere; a refusal names the
// expected form.
TEST(ParseDuration, BareNumbersTakeTheFlagsUnitAndRefusalsNameTheForm) {
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("50", 1e-6), 50e-6);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("50us", 1e-6), 50e-6);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("2ms", 1e-6), 2e-3);
  EXPECT_DOUBLE_EQ(cb::parseDurationSeconds("1min", 1e-6), 60.0);
  for (const char* bad : {"10x", "-1", "abc", ""}) {
    try {
      cb::parseDurationSeconds(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const cb::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("a number of seconds or one with a unit: 500us, 20ms"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    cb::parseDurationSeconds("5q", 1e-6);
    ADD_FAILURE() << "'5q' accepted";
  } catch (const cb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a number of microseconds"), std::string::npos)
        << e.what();
  }
}

// splitFields keeps every field (the proxy's --layout and the pairwise log's lines need the empty
// ones); splitList trims and drops them.
TEST(SplitText, FieldsKeepEmptiesAndListsDropThem) {
  using V = std::vector<std::string>;
  EXPECT_EQ(cb::splitFields("a,,b", ','), (V{"a", "", "b"}));
  EXPECT_EQ(cb::splitFields("", ','), (V{""}));
  EXPECT_EQ(cb::splitFields("x\n", '\n'), (V{"x", ""}));
  EXPECT_EQ(cb::splitFields(" a ,b", ','), (V{" a ", "b"}));
  EXPECT_EQ(cb::splitList(" a ,, b ,"), (V{"a", "b"}));
  EXPECT_EQ(cb::nonEmptyLines("a\n\nb\n"), (V{"a", "b"}));
}

}  // namespace
