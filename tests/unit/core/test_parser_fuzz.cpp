// A bounded fuzz pass over the parsers of command-line values (sizes, durations, lists of
// collectives, types and ops, statistics, thresholds, size ranges, rank pairs, date bounds):
// thousands of mutations of valid inputs, seeded so a failure reproduces. Each input must either
// parse or throw UsageError, never anything else (no std::out_of_range from stoi, no crash; under
// scripts/sanitize.sh also no undefined behaviour).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/P2p.h"
#include "bench/Report.h"
#include "common/TempDir.h"
#include "core/Collective.h"
#include "core/DataType.h"
#include "core/Error.h"
#include "core/Size.h"
#include "core/Stats.h"
#include "results/Case.h"
#include "results/Compare.h"
#include "results/Store.h"

namespace {

// Mutations of a seed text: byte flips, insertions of interesting characters, deletions,
// duplications, truncation, and very long digit runs.
std::string mutate(const std::string& seed, std::mt19937_64& rng) {
  static const std::string kAlphabet = "0123456789.-+eEkKmMgGtTbBiI,:%/ \t\n\xff\x80xnaf";
  std::string s = seed;
  std::uniform_int_distribution<int> op(0, 6);
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (op(rng)) {
      case 0:
        if (!s.empty() && at < s.size()) s[at] = static_cast<char>(rng() & 0xff);
        break;
      case 1: s.insert(at, 1, kAlphabet[rng() % kAlphabet.size()]); break;
      case 2:
        if (at < s.size()) s.erase(at, 1);
        break;
      case 3: s += s; break;
      case 4: s = s.substr(0, at); break;
      case 5: s.insert(at, std::string(20 + rng() % 400, '9')); break;
      default: s.insert(at, kAlphabet.substr(rng() % kAlphabet.size(), 2)); break;
    }
  }
  return s;
}

void fuzz(const char* name, const std::vector<std::string>& seeds,
          const std::function<void(const std::string&)>& parse, int rounds = 3000) {
  std::mt19937_64 rng(0xc011bec4);
  int parsed = 0, refused = 0;
  for (int i = 0; i < rounds; ++i) {
    std::string input = mutate(seeds[static_cast<size_t>(i) % seeds.size()], rng);
    try {
      parse(input);
      ++parsed;
    } catch (const cb::UsageError&) {
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": '" << input << "' threw " << e.what();
      return;
    }
  }
  // Both outcomes occur: the mutations are neither all trivial nor all garbage.
  EXPECT_GT(parsed, 0) << name;
  EXPECT_GT(refused, 0) << name;
}

TEST(ParserFuzz, SizesDurationsAndRanges) {
  fuzz("parseSize", {"8", "64M", "1.5K", "16GiB", "1T", "0"},
       [](const std::string& s) { cb::parseSize(s); });
  fuzz("parseDurationSeconds", {"200ms", "2s", "1.5s", "500us", "3m", "10"},
       [](const std::string& s) { cb::parseDurationSeconds(s); });
  fuzz("parseSizeRange", {"1K-4M", "8", "1M-", "-64K"},
       [](const std::string& s) { cb::parseSizeRange(s, "--sizes"); });
  fuzz("parseThreshold", {"5%", "5", "0.5%", "12.5"},
       [](const std::string& s) { cb::parseThreshold(s); });
  fuzz("parseRankPair", {"0,1", "3,7", "12,0"}, [](const std::string& s) { cb::parseRankPair(s); });
}

TEST(ParserFuzz, NamesAndLists) {
  fuzz("parseCollectiveList", {"allreduce,allgather", "all", "all_reduce_perf", "broadcast"},
       [](const std::string& s) { cb::parseCollectiveList(s); });
  fuzz("parseDataTypeList", {"float,half", "all", "int8", "bfloat16,double"},
       [](const std::string& s) { cb::parseDataTypeList(s); });
  fuzz("parseRedOpList", {"sum,max", "all", "avg", "band"},
       [](const std::string& s) { cb::parseRedOpList(s); });
  fuzz("parseStatistic", {"median", "p99", "mean"},
       [](const std::string& s) { cb::parseStatistic(s); });
  fuzz("parseSideMetric", {"busbw", "time"}, [](const std::string& s) { cb::parseSideMetric(s); });
}

TEST(ParserFuzz, DateBounds) {
  cb::TempDir dir;
  cb::Store store = cb::Store::open(dir.file("f.db"));
  fuzz(
      "RunFilter.since",
      {"2025-03-01", "2025-03-01T12:00", "2024-02-29T23:59:60Z", "2025-03-01 09:00:00.5"},
      [&](const std::string& s) {
        cb::RunFilter f;
        f.since = s;
        store.listRuns(f);
      },
      1500);
}

}  // namespace
