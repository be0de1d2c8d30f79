// Text, CSV and JSON forms of link verdicts; links from imported pairwise logs.
#include "diagnosis/DiagReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/Error.h"
#include "core/Text.h"
#include "results/DiagRecords.h"
#include "results/import/ImportSupport.h"

namespace cb {
namespace {

using json = nlohmann::ordered_json;

std::string nameOf(const LinkMatrixInfo& info, int e) {
  return e >= 0 && static_cast<size_t>(e) < info.names.size() ? info.names[static_cast<size_t>(e)]
                                                              : std::to_string(e);
}

bool namesAreNumbers(const LinkMatrixInfo& info) {
  for (size_t i = 0; i < info.names.size(); ++i) {
    if (info.names[i] != std::to_string(i)) return false;
  }
  return true;
}

std::string pairText(const LinkMatrixInfo& info, LinkPair p) {
  return fmt::format("{}-{}", nameOf(info, p.a), nameOf(info, p.b));
}

char markOf(const LinkJudgement& l, double gap) {
  if (l.suspect || l.endpointGroup >= 0) return '!';
  if (!l.judged) return '?';
  if (l.relative < 1 - gap) return '~';
  return ' ';
}

// The gap is not in the verdict; the marks use the default's meaning via the bound only.
constexpr double kGapMark = 0.07;

std::string endpointLine(const EndpointJudgement& e) {
  return fmt::format(
      "{} of {} links more than the gap below typical; its median link {:.2f} x the median "
      "{}'s (bound {:.2f} x)",
      e.slowLinks, e.links, e.relative, e.kind, e.bound);
}

}  // namespace

std::string textHeatMap(const LinkVerdict& v, const LinkMatrixInfo& info) {
  const int n = static_cast<int>(info.names.size());
  std::map<std::pair<int, int>, size_t> at;
  for (size_t i = 0; i < v.links.size(); ++i) {
    at[{v.links[i].pair.a, v.links[i].pair.b}] = i;
    at[{v.links[i].pair.b, v.links[i].pair.a}] = i;
  }
  size_t width = 4;
  for (const LinkJudgement& l : v.links)
    width = std::max(width, diagCellNumber(l.value).size() + 1);
  std::string out = fmt::format("# {} ({}); ! suspect, ~ >7% below its class, ? not judged\n",
                                info.metric, info.unit);
  out += fmt::format("{:>4} ", "");
  for (int c = 0; c < n; ++c) out += fmt::format("{:>{}}", c, width + 1);
  out += "\n";
  for (int r = 0; r < n; ++r) {
    out += fmt::format("{:>4} ", r);
    for (int c = 0; c < n; ++c) {
      auto it = at.find({r, c});
      if (r == c) {
        out += fmt::format("{:>{}} ", "-", width);
      } else if (it == at.end()) {
        out += fmt::format("{:>{}} ", ".", width);
      } else {
        const LinkJudgement& l = v.links[it->second];
        out += fmt::format("{:>{}}{}", diagCellNumber(l.value), width, markOf(l, kGapMark));
      }
    }
    out += "\n";
  }
  if (!namesAreNumbers(info)) {
    for (int e = 0; e < n; ++e) out += fmt::format("# {:>3} = {}\n", e, nameOf(info, e));
  }
  return out;
}

std::string verdictText(const LinkVerdict& v, const LinkMatrixInfo& info,
                        const std::vector<ConfirmationNote>& confirmations) {
  std::string out;
  auto confirmation = [&](LinkPair p) -> std::string {
    for (const ConfirmationNote& c : confirmations) {
      if (c.pair == p) return "; " + c.text;
    }
    return "";
  };
  if (v.healthy()) {
    size_t judged = 0;
    for (const LinkJudgement& l : v.links) judged += l.judged;
    out += fmt::format("healthy ({}): {} links judged, no suspect\n", info.metric, judged);
  }
  for (const EndpointJudgement& e : v.endpoints) {
    out +=
        fmt::format("SUSPECT {} ({}): {}\n", e.kind + " " + e.name, info.metric, endpointLine(e));
    for (size_t i = 0; i < v.links.size(); ++i) {
      const LinkJudgement& l = v.links[i];
      std::string c = confirmation(l.pair);
      if (l.endpointGroup >= 0 && &v.endpoints[static_cast<size_t>(l.endpointGroup)] == &e &&
          !c.empty()) {
        out += fmt::format("  link {}: {} {}{}\n", pairText(info, l.pair), diagCellNumber(l.value),
                           info.unit, c);
      }
    }
  }
  for (size_t i : v.suspects) {
    const LinkJudgement& l = v.links[i];
    out += fmt::format(
        "SUSPECT link {} ({}): {} {}, {:.2f} x its class{} median {} (robust bound {:.2f} x){}\n",
        pairText(info, l.pair), info.metric, diagCellNumber(l.value), info.unit, l.relative,
        l.linkClass.empty() ? "" : " '" + l.linkClass + "'", diagCellNumber(l.classMedian), l.bound,
        confirmation(l.pair));
  }
  for (const std::string& note : v.notes) out += fmt::format("# note: {}\n", note);
  return out;
}

std::string linkMessage(const LinkVerdict& v, size_t link, const LinkMatrixInfo& info) {
  const LinkJudgement& l = v.links[link];
  if (l.endpointGroup >= 0) {
    const EndpointJudgement& e = v.endpoints[static_cast<size_t>(l.endpointGroup)];
    return fmt::format("suspect {} {} ({:.2f} x the median {})", e.kind, e.name, e.relative,
                       e.kind);
  }
  if (l.suspect) {
    return fmt::format("suspect link {} ({:.2f} x class median)", pairText(info, l.pair),
                       l.relative);
  }
  return "";
}

std::string linkCsvHeader() {
  return "metric,a,b,name_a,name_b,class,value,unit,relative,class_median,judged,suspect,"
         "verdict\n";
}

std::string linkCsvRows(const LinkVerdict& v, const LinkMatrixInfo& info) {
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out;
  for (size_t i = 0; i < v.links.size(); ++i) {
    const LinkJudgement& l = v.links[i];
    out += fmt::format("{},{},{},{},{},{},{:.6g},{},{:.4f},{:.6g},{},{},{}\n", field(info.metric),
                       l.pair.a, l.pair.b, field(nameOf(info, l.pair.a)),
                       field(nameOf(info, l.pair.b)), field(l.linkClass), l.value, info.unit,
                       l.relative, l.classMedian, l.judged ? 1 : 0,
                       l.suspect || l.endpointGroup >= 0 ? 1 : 0, field(linkMessage(v, i, info)));
  }
  return out;
}

std::string verdictJson(const LinkVerdict& v, const LinkMatrixInfo& info) {
  json j;
  j["metric"] = info.metric;
  j["unit"] = info.unit;
  j["endpoint_kind"] = info.endpointKind;
  j["endpoints"] = info.names;
  j["healthy"] = v.healthy();
  json links = json::array();
  for (size_t i = 0; i < v.links.size(); ++i) {
    const LinkJudgement& l = v.links[i];
    links.push_back({{"a", l.pair.a},
                     {"b", l.pair.b},
                     {"class", l.linkClass},
                     {"value", l.value},
                     {"relative", l.relative},
                     {"class_median", l.classMedian},
                     {"bound", l.bound},
                     {"judged", l.judged},
                     {"suspect", l.suspect || l.endpointGroup >= 0},
                     {"verdict", linkMessage(v, i, info)}});
  }
  j["links"] = links;
  json named = json::array();
  for (const EndpointJudgement& e : v.endpoints) {
    named.push_back({{"kind", e.kind},
                     {"name", e.name},
                     {"relative", e.relative},
                     {"bound", e.bound},
                     {"links", e.links},
                     {"slow_links", e.slowLinks}});
  }
  j["named"] = named;
  json suspects = json::array();
  for (size_t i : v.suspects) {
    suspects.push_back(
        {{"a", v.links[i].pair.a}, {"b", v.links[i].pair.b}, {"relative", v.links[i].relative}});
  }
  j["suspects"] = suspects;
  j["notes"] = v.notes;
  return j.dump(2);
}

std::vector<ImportedRun> parsePairwiseLog(const std::string& text, const ImportOptions& options) {
  const ImportFormat format = detectImportFormat(text, options.path);
  if (format != ImportFormat::kNcclTests) return parseImport(text, format, options);
  // Split before each test's first line; earlier lines become blank lines, so the importer's
  // FILE:LINE still points into the file.
  const std::vector<std::string> all = splitFields(text, '\n');
  std::vector<size_t> starts{0};
  bool versionLines = false;
  for (const std::string& l : all)
    versionLines = versionLines || startsWith(l, "# nccl-tests version");
  for (size_t i = 1; i < all.size(); ++i) {
    bool begins = versionLines ? startsWith(all[i], "# nccl-tests version")
                               : startsWith(all[i], "# Collective test starting");
    if (begins) starts.push_back(i);
  }
  starts.push_back(all.size());
  std::vector<ImportedRun> out;
  for (size_t s = 0; s + 1 < starts.size(); ++s) {
    std::string section(starts[s], '\n');
    bool content = false;
    for (size_t i = starts[s]; i < starts[s + 1]; ++i) {
      section += all[i] + "\n";
      content = content || !trim(all[i]).empty();
    }
    if (!content) continue;
    try {
      for (ImportedRun& r : parseImport(section, ImportFormat::kNcclTests, options)) {
        out.push_back(std::move(r));
      }
    } catch (const UsageError& e) {
      // A test cut short: its hosts and collective from its own lines, else the error stands.
      static const std::regex kDevice(R"(^#\s*Rank\s+\d+\s.*\son\s+(\S+)\s+device)");
      static const std::regex kStarting(R"(^#\s*Collective test starting:\s*(\S+))");
      std::vector<std::string> hosts;
      std::string coll;
      for (size_t i = starts[s]; i < starts[s + 1]; ++i) {
        std::smatch m;
        if (std::regex_search(all[i], m, kDevice) &&
            std::find(hosts.begin(), hosts.end(), m[1].str()) == hosts.end()) {
          hosts.push_back(m[1].str());
        }
        if (std::regex_search(all[i], m, kStarting)) {
          coll = importer::normalizeCollective(m[1].str());
        }
      }
      if (hosts.size() != 2 || coll.empty()) throw;
      ImportedRun failed;
      failed.run.source = "nccl-tests";
      failed.run.hosts = hosts[0] + "," + hosts[1];
      failed.run.worldSize = 2;
      failed.run.status = RunStatus::kFailed;
      ResultRecord r;
      r.collective = coll;
      r.status = ResultStatus::kFailed;
      r.message = e.what();
      failed.results.push_back(r);
      failed.notes.push_back(e.what());
      out.push_back(std::move(failed));
    }
  }
  return out;
}

PairwiseLogs pairwiseLinks(const std::vector<PairwiseInput>& inputs) {
  PairwiseLogs out;
  auto hostIndex = [&](const std::string& h) {
    auto it = std::find(out.hosts.begin(), out.hosts.end(), h);
    if (it != out.hosts.end()) return static_cast<int>(it - out.hosts.begin());
    out.hosts.push_back(h);
    return static_cast<int>(out.hosts.size()) - 1;
  };
  struct Entry {
    std::string file;
    LinkPair pair;
    const ImportedRun* run;
  };
  std::vector<Entry> entries;
  for (const PairwiseInput& in : inputs) {
    if (in.runs.empty()) throw UsageError(fmt::format("diag logs: {}: no run in the log", in.file));
    for (const ImportedRun& run : in.runs) {
      std::vector<std::string> hosts = splitList(run.run.hosts);
      if (hosts.size() != 2) {
        throw UsageError(fmt::format(
            "diag logs: {}: the run is on {} host{} ({}); diag logs needs logs of node pairs",
            in.file, hosts.size(), hosts.size() == 1 ? "" : "s",
            run.run.hosts.empty() ? "none named" : run.run.hosts));
      }
      int a = hostIndex(hosts[0]), b = hostIndex(hosts[1]);
      entries.push_back({in.file, {std::min(a, b), std::max(a, b)}, &run});
    }
  }
  // Collectives in order of first appearance, with the sizes each run measured ok.
  std::vector<std::string> collectives;
  for (const Entry& e : entries) {
    for (const ResultRecord& r : e.run->results) {
      if (std::find(collectives.begin(), collectives.end(), r.collective) == collectives.end()) {
        collectives.push_back(r.collective);
      }
    }
  }
  for (const std::string& coll : collectives) {
    PairwiseMatrix m;
    m.collective = coll;
    std::set<uint64_t> common;
    bool first = true;
    for (const Entry& e : entries) {
      std::set<uint64_t> mine;
      bool any = false;
      for (const ResultRecord& r : e.run->results) {
        if (r.collective != coll) continue;
        any = true;
        if (r.status == ResultStatus::kOk && r.busbw > 0) mine.insert(r.sizeBytes);
      }
      if (!any || mine.empty() || e.run->run.status != RunStatus::kOk) continue;
      if (first) {
        common = mine;
        first = false;
      } else {
        std::set<uint64_t> both;
        std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                              std::inserter(both, both.begin()));
        common = both;
      }
    }
    m.sizes.assign(common.begin(), common.end());
    std::map<std::pair<int, int>, size_t> seen;
    for (const Entry& e : entries) {
      bool has = false;
      for (const ResultRecord& r : e.run->results) has = has || r.collective == coll;
      // Each test of a log is its own run: a run without this collective says nothing of it.
      if (!has) continue;
      PairwiseLink l;
      l.pair = e.pair;
      l.file = e.file;
      double sum = 0;
      int count = 0;
      for (const ResultRecord& r : e.run->results) {
        if (r.collective != coll || r.status != ResultStatus::kOk || r.placement != "out") continue;
        if (r.busbw && std::binary_search(m.sizes.begin(), m.sizes.end(), r.sizeBytes)) {
          sum += *r.busbw;
          ++count;
        }
      }
      if (e.run->run.status != RunStatus::kOk) {
        l.failed = true;
        l.why = fmt::format("the run {}", runStatusName(e.run->run.status));
        for (const ResultRecord& r : e.run->results) {
          if (r.collective == coll && r.status == ResultStatus::kFailed && !r.message.empty()) {
            l.why = r.message;
            break;
          }
        }
      } else if (count == 0) {
        l.failed = true;
        l.why = "no ok out-of-place result at the sizes the other logs measured";
      } else {
        l.value = sum / count;
      }
      auto key = std::pair{l.pair.a, l.pair.b};
      if (seen.count(key)) {
        out.notes.push_back(fmt::format("{}: {} again (also in {}); the later log is used", coll,
                                        e.file, m.links[seen[key]].file));
        m.links[seen[key]] = l;
        continue;
      }
      seen[key] = m.links.size();
      m.links.push_back(l);
    }
    out.matrices.push_back(std::move(m));
  }
  return out;
}

}  // namespace cb
