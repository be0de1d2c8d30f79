// The statistical flags `compare` and `gate` share, and their check into CompareOptions.
#pragma once

#include <string>

#include "results/Compare.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct CompareFlags {
  std::string db = "collbench.db";
  std::string metric = "busbw";
  std::string threshold = "5%";
  double alpha = 0.01;
  std::string sizes;
  std::string runValue = "min";
  double power = 0.9;
  bool allowDifferentEnvironment = false;
};

// Adds --db --metric --threshold --alpha --sizes --run-value --allow-different-environment.
void addCompareFlags(CLI::App& sub, CompareFlags& flags);
CompareOptions toCompareOptions(const CompareFlags& flags);  // UsageError for bad values

}  // namespace cb::cli
