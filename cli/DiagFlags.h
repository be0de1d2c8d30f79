// The flags of `collbench diag` and their translation into the measurements' options: every
// bad value fails here with one line naming the flag, before any rank starts.
#pragma once

#include <string>
#include <vector>

#include "cli/MeasureOptions.h"
#include "diagnosis/DiagBisect.h"
#include "diagnosis/DiagLinks.h"
#include "diagnosis/DiagRanks.h"
#include "diagnosis/Fleet.h"

namespace CLI {
class App;
}

namespace cb::cli {

inline MeasureOptions withTimeout(double seconds) {
  MeasureOptions o;
  o.timeout = seconds;
  return o;
}

// Options every live diagnosis shares.
struct LiveOptions {
  std::string transport;  // "" = the world's default
  std::vector<std::string> inject;
  double k = 3;
  std::string gap = "7%";
  std::string jsonPath, csvPath;
  MeasureOptions measure = withTimeout(60);  // -T, --db, --no-db, --label, --np
};

struct LinksCli {
  LiveOptions live;
  bool quick = false, sequential = false, noConfirm = false;
  int repeats = 5;
  std::string size = "1M", latencySize = "8";
  int window = 8, iters = 10, latencyIters = 200;
  double linkRate = 0;  // Gb/s per direction of every link (diag links --link-rate); 0: topology
};

struct BisectCli {
  LinksCli links;  // live options and the pair matrix's, for the fallback
  std::string collSize = "1M";
  int calls = 5, repeats = 5;
};

struct RanksCli {
  LiveOptions live;
  std::string size = "1M";
  int iters = 50, warmup = 5;
};

struct LogsCli {
  std::vector<std::string> files;
  double k = 3;
  std::string gap = "7%";
  std::string db = "collbench.db";
  bool noDb = false;
  std::string label;
  std::string jsonPath, csvPath;
};

struct NodesCli {
  std::vector<std::string> files;  // nccl-tests logs, one node each
  bool stored = false;             // the newest ok run of each host in --db
  std::string db = "collbench.db";
  std::string label;
  double k = 3.5;
  std::string gap = "5%";
  int run = 3;
  int minNodes = 5;
  std::string minBytes = "1M";
  std::vector<std::string> minimums;  // [KIND/]COLLECTIVE@SIZE=GBPS
  std::string baseline, saveBaseline, jsonPath, htmlPath;
};

// "7%" or "0.07" -> 0.07.
// --k and --gap ("7%" or "0.07") as the verdict's options.
SuspectOptions suspectOptions(double k, const std::string& gap);
DiagLinksOptions toLinksOptions(const LinksCli& c);
DiagBisectOptions toBisectOptions(const BisectCli& c);
DiagRanksOptions toRanksOptions(const RanksCli& c);
// diag nodes: the rules, and the --min figures as references (UsageError on a bad one).
FleetOptions toFleetOptions(const NodesCli& c);
KindReferences minimumReferences(const std::vector<std::string>& minimums);

// Each subcommand's flags over its options (which must outlive the parse).
void addLinksFlags(CLI::App* sub, LinksCli& o);
void addBisectFlags(CLI::App* sub, BisectCli& o);
void addRanksFlags(CLI::App* sub, RanksCli& o);
void addLogsFlags(CLI::App* sub, LogsCli& o);
void addNodesFlags(CLI::App* sub, NodesCli& o);

}  // namespace cb::cli
