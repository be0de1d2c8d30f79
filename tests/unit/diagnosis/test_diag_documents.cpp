// What each diag command prints, writes and stores (diagnosis/DiagDocuments.h) and the stored form
// of a diagnosis (results/DiagRecords.h): the verdict's outcome rules, the records of the real
// pairwise cluster logs, the run record they are stored under.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diagnosis/DiagDocuments.h"
#include "results/DiagRecords.h"

namespace cb {
namespace {

TEST(DiagRecords, MetricsHaveTheirStoredNames) {
  EXPECT_EQ(diagCollective(DiagMetric::kBibw), "diag-bibw");
  EXPECT_EQ(diagCollective(DiagMetric::kLatency), "diag-latency");
  EXPECT_EQ(diagCollective(DiagMetric::kBisect), "diag-bisect");
  EXPECT_EQ(diagCollective(DiagMetric::kArrival), "diag-arrival");
  EXPECT_EQ(diagCollective(DiagMetric::kFinish), "diag-finish");
  EXPECT_EQ(diagCollective("alltoall"), "diag-alltoall");
  ResultRecord r;
  r.collective = diagCollective(DiagMetric::kFinish);
  EXPECT_TRUE(isDiagResult(r));
  r.collective = "allreduce";
  EXPECT_FALSE(isDiagResult(r));
}

TEST(DiagDocuments, LinksAreHealthyOnlyWhenAlikeQuietAndWithinTheirBound) {
  DiagLinksResult res;  // no suspect link
  DiagOutcome o = linksOutcome(res, "");
  EXPECT_TRUE(o.healthy);
  EXPECT_FALSE(o.tooNoisy);
  res.agreement.tooNoisy = true;  // the schedules disagreed: neither healthy nor a suspect
  o = linksOutcome(res, "");
  EXPECT_FALSE(o.healthy);
  EXPECT_TRUE(o.tooNoisy);
  // Every link equally slow is not healthy: the bound judges, and that is a finding, not noise.
  o = linksOutcome(res, "below bound: ...\n");
  EXPECT_FALSE(o.healthy);
  EXPECT_FALSE(o.tooNoisy);
}

// 4 ranks on 2 CPUs of host "vm" of which other processes used 0.85 CPUs for 4.2 s.
CpuContention busyHost() {
  CpuContention c;
  c.host = "vm";
  c.cpus = 2;
  c.ranks = 4;
  c.seconds = 4.2;
  c.foreignCpus = c.competingCpus = 0.85;
  c.contended = true;
  return c;
}

TEST(DiagDocuments, SchedulesThatDisagreeOnAnOversubscribedHostSayWhyAndWhatToRun) {
  // 4 thread ranks on the idle 2-core VM: a round's two pairs take turns on the CPUs, and the
  // schedules disagree. The machine is quiet; the ranks outnumber its CPUs, and --sequential is
  // the way to judge its links.
  DiagLinksResult res;
  res.ranks = 4;
  res.agreement.tooNoisy = true;
  res.agreement.spreadPct = 12.0;
  res.agreement.repeats = 5;
  res.agreement.gap = 0.07;
  CpuContention idle;
  idle.host = "vm";
  idle.cpus = 2;
  idle.ranks = 4;
  res.cpu = {idle};
  LinkGraph graph;
  graph.endpointNames = {"0", "1", "2", "3"};
  ASSERT_EQ(res.contended(), nullptr);
  std::string text = linksDocuments({}, res, {}, graph, "pattern", "").text;
  EXPECT_NE(text.find("too noisy to judge: a link's figure moved 12.0% between the 5 schedules"),
            std::string::npos);
  EXPECT_NE(text.find("host vm runs 4 ranks on 2 CPUs, so the pairs of a round take turns on "
                      "them"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(--sequential)"), std::string::npos);
  EXPECT_EQ(text.find("quieter machine"), std::string::npos);
  // A CPU for every rank: the disagreement is the machine's.
  res.cpu[0].ranks = 2;
  text = linksDocuments({}, res, {}, graph, "pattern", "").text;
  EXPECT_NE(text.find("rerun on a quieter machine or with more --schedules"), std::string::npos);
  EXPECT_EQ(text.find("--sequential"), std::string::npos);
}

// Healthy runs on 2 cores named suspects with "no typical link to re-measure against" (4 of
// 36 under mpirun -np 4, issue 49): a link the matrix points at but nothing typical can check is
// no suspect, and the run is too noisy to judge, not healthy.
TEST(DiagDocuments, ALinkWithNoTypicalLinkToReMeasureAgainstIsNoSuspect) {
  DiagLinksResult res;
  res.ranks = 4;
  Confirmation c;
  c.metric = "latency";
  c.pair = {1, 2};
  c.matrixRelative = 0.55;
  c.confirmed = false;  // decideConfirmations: no references, never confirmed
  res.confirmations = {c};
  LinkGraph graph;
  graph.endpointNames = {"0", "1", "2", "3"};
  DiagOutcome o = linksOutcome(res, "");
  EXPECT_FALSE(o.healthy);
  EXPECT_TRUE(o.tooNoisy);
  std::string text = linksDocuments({}, res, {}, graph, "pattern", "").text;
  EXPECT_NE(text.find("too noisy to judge: link 1-2 (latency 0.55 x typical) read slow in the "
                      "matrix, but no typical link"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("SUSPECT"), std::string::npos) << text;
  EXPECT_EQ(text.find("healthy"), std::string::npos) << text;
  // A suspect re-measured against typical links and not upheld leaves the run healthy.
  res.confirmations[0].references = {{0, 3}};
  o = linksOutcome(res, "");
  EXPECT_TRUE(o.healthy);
}

TEST(DiagDocuments, LinksMeasuredWhileStrangersHeldTheCpusAreTooNoisyWhateverTheyShow) {
  // Beside a busy loop, 4 thread ranks on 2 cores measured the scheduler's time slice on every
  // link (1.5 ms one way), steady across repeats, and a confirmed "suspect" came of it.
  DiagLinksResult res;
  res.ranks = 4;
  res.links.resize(1);
  res.links[0].pair = {0, 1};
  res.cpu = {busyHost()};
  for (LinkVerdict* v : {&res.finalBandwidth, &res.finalLatency}) {
    v->links.resize(1);
    v->links[0].pair = {0, 1};
  }
  res.finalBandwidth.suspects = {0};
  LinkGraph graph;
  graph.endpointNames = {"0", "1", "2", "3"};
  DiagOutcome o = linksOutcome(res, "");
  EXPECT_TRUE(o.tooNoisy);
  EXPECT_FALSE(o.healthy);
  const DiagDocuments d = linksDocuments({}, res, {}, graph, "pattern", "");
  EXPECT_NE(d.text.find("too noisy to judge: while the links were measured (4.2 s), other "
                        "processes used 0.85 of the 2 CPUs that host vm's 4 ranks run on "
                        "(they leave none free)"),
            std::string::npos)
      << d.text;
  EXPECT_NE(d.text.find("# not evidence under this load: the measurement pointed at link 0-1"),
            std::string::npos)
      << d.text;
  EXPECT_EQ(d.text.find("SUSPECT"), std::string::npos) << d.text;
  for (const ResultRecord& r : d.records) EXPECT_EQ(r.message, "") << r.variant;
  const auto j = nlohmann::json::parse(d.json);
  EXPECT_TRUE(j["too_noisy"].get<bool>());
  EXPECT_FALSE(j["healthy"].get<bool>());
  EXPECT_DOUBLE_EQ(j["cpu_contention"][0]["competing_cpus"].get<double>(), 0.85);
  EXPECT_TRUE(j["cpu_contention"][0]["contended"].get<bool>());
  // A stranger's stray tick does not take the verdict away.
  res.cpu[0].contended = false;
  res.finalBandwidth.suspects.clear();
  EXPECT_TRUE(linksOutcome(res, "").healthy);
}

TEST(DiagDocuments, BisectionDefersToThePairMatrixWhenItFellBack) {
  DiagBisectResult res;
  res.healthy = false;
  res.fellBack = true;  // halves alike: the (healthy) pair matrix decides
  EXPECT_TRUE(bisectOutcome(res).healthy);
  res.fellBack = false;
  EXPECT_FALSE(bisectOutcome(res).healthy);
  res.healthy = true;
  res.slowRank = 2;
  EXPECT_FALSE(bisectOutcome(res).healthy);
}

TEST(DiagDocuments, StragglersAndHalvesTimedUnderAStrangersLoadAreTooNoisy) {
  DiagRanksResult ranks;
  ranks.steps = 6;
  ranks.verdict.suspects.push_back({StraggleSuspect::Kind::kSendsSlowly, 3});
  EXPECT_FALSE(ranksOutcome(ranks).tooNoisy);
  ranks.cpu = {busyHost()};
  EXPECT_TRUE(ranksOutcome(ranks).tooNoisy);
  EXPECT_FALSE(ranksOutcome(ranks).healthy);
  DiagDocuments d = ranksDocuments({}, ranks, {}, 4);
  EXPECT_NE(d.text.find("too noisy to judge: while the calls ran (4.2 s)"), std::string::npos)
      << d.text;
  EXPECT_NE(d.text.find("pointed at rank 3 (sends slowly)"), std::string::npos) << d.text;
  EXPECT_EQ(d.text.find("SUSPECT"), std::string::npos) << d.text;
  EXPECT_TRUE(nlohmann::json::parse(d.json)["too_noisy"].get<bool>());

  DiagBisectResult bisect;
  bisect.slowRank = 2;
  bisect.cpu = {busyHost()};
  EXPECT_TRUE(bisectOutcome(bisect).tooNoisy);
  d = bisectDocuments({}, bisect, {}, {}, 4);
  EXPECT_NE(d.text.find("while the halves were measured (4.2 s)"), std::string::npos) << d.text;
  EXPECT_EQ(d.text.find("SUSPECT"), std::string::npos) << d.text;
  // Fallen back to the pair matrix, whose own verdict said too noisy: so does the bisection
  // (it said healthy, exit 0, before).
  DiagBisectResult fell;
  fell.fellBack = true;
  fell.links.agreement.tooNoisy = true;
  EXPECT_TRUE(bisectOutcome(fell).tooNoisy);
  EXPECT_FALSE(bisectOutcome(fell).healthy);
}

TEST(DiagDocuments, ClusterLogsGiveOneRecordPerLinkAndTheVerdict) {
  // The 28 real node-pair logs of 8 H100 nodes (tests/data/diag/cluster00-g1): alltoall names
  // exactly four slow pairs, as tests/cli/diag.sh checks through the command.
  const std::filesystem::path dir =
      std::filesystem::path(CB_SOURCE_DIR) / "tests/data/diag/cluster00-g1";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 28u);
  std::vector<PairwiseInput> inputs;
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::ostringstream text;
    text << in.rdbuf();
    ImportOptions io;
    io.path = f;
    inputs.push_back({f, parsePairwiseLog(text.str(), io)});
  }
  const PairwiseLogs logs = pairwiseLinks(inputs);
  const LogsDiagnosis d = logsDocuments(logs, files, SuspectOptions{});
  EXPECT_FALSE(d.healthy);
  for (const char* pair : {"cnode2-001-cnode2-004", "cnode2-002-cnode2-003",
                           "cnode2-002-cnode2-006", "cnode2-004-cnode2-006"}) {
    EXPECT_NE(d.docs.text.find(std::string("SUSPECT link ") + pair + " (alltoall busbw)"),
              std::string::npos)
        << pair;
  }
  size_t links = 0;
  for (const PairwiseMatrix& m : logs.matrices) links += m.links.size();
  ASSERT_EQ(d.docs.records.size(), links);  // measured and failed links alike
  int suspects = 0;
  for (const ResultRecord& r : d.docs.records) {
    EXPECT_TRUE(isDiagResult(r)) << r.collective;
    EXPECT_EQ(r.runId, 0);  // the caller's run sets it
    std::string source, a, b;
    ASSERT_TRUE(parseDiagVariant(r.variant, source, a, b)) << r.variant;
    EXPECT_EQ(source, "nccl-tests");
    EXPECT_FALSE(r.timeKnown);  // the logs give a link's bandwidth only
    if (r.collective == "diag-alltoall" && r.message.rfind("suspect", 0) == 0) ++suspects;
  }
  EXPECT_EQ(suspects, 4);
  const auto j = nlohmann::json::parse(d.docs.json);
  EXPECT_EQ(j["command"], "diag logs");
  EXPECT_EQ(j["format"], "collbench-diag");  // the documents' one style: format + version
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["files"].size(), 28u);
  EXPECT_EQ(d.docs.csv.substr(0, d.docs.csv.find('\n')),
            linkCsvHeader().substr(0, linkCsvHeader().find('\n')));

  const RunRecord run = logsRunRecord(logs, "cluster00", "collbench diag logs ...");
  EXPECT_EQ(run.worldKind, "imported");
  EXPECT_EQ(run.worldSize, 8);
  EXPECT_EQ(std::count(run.hosts.begin(), run.hosts.end(), ','), 7);
  EXPECT_EQ(run.label, "cluster00");
  EXPECT_EQ(run.status, RunStatus::kRunning);
}

}  // namespace
}  // namespace cb
