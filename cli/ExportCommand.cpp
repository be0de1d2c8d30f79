// `collbench export runs|results|samples`: the database as CSV, JSON or JSON lines for other
// tools (spreadsheets, pandas, scripts), and results in the formats of the tools clusters already
// run: Prometheus (a textfile for node_exporter, or one scrape with --listen), NCCL's example
// tuner plugin, ASTRA-sim and SimAI networks fitted from the measurements (results/export/).
#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/Command.h"
#include "core/Error.h"
#include "core/OutputFile.h"
#include "results/Store.h"
#include "results/export/Export.h"

namespace cb::cli {
namespace {

struct ExportArgs {
  std::string what;
  std::string db = "collbench.db";
  std::string run;
  std::string format = "csv";
  std::string output;
  bool perRank = false;
  std::optional<std::string> label, since, until, fingerprint;
  int limit = 0;
  int listenPort = -1;  // --listen: serve /metrics once on 127.0.0.1
  double listenTimeout = 60;
};

// The formats of whole documents (a header, then rows) and the tool formats of results.
bool tableFormat(const std::string& f) { return f == "csv" || f == "json" || f == "jsonl"; }
const std::vector<std::string> kToolFormats{"prometheus", "nccl-tuner", "nccl-tuner-conf",
                                            "sim-fit",    "astra-sim",  "simai-busbw"};

// RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled.
std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csvField(fields[i]);
  }
  return line + "\n";
}

// Shortest text that reads back to the same double.
std::string num(double v) { return fmt::format("{}", v); }

// Unknown values (NULL in the store): an empty CSV field, JSON null.
std::string text(const std::optional<double>& v) { return v ? num(*v) : ""; }
template <typename T>
std::string text(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "";
}
template <typename T>
nlohmann::json value(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json value(const std::string& v) {
  return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
}
std::optional<double> timeOf(const ResultRecord& r) {
  return r.timeKnown ? std::optional<double>(r.timeUs) : std::nullopt;
}
std::optional<double> medianOf(const ResultRecord& r) {
  return r.medianKnown ? std::optional<double>(r.medianUs) : std::nullopt;
}

std::vector<RunRecord> selectRuns(const Store& store, const ExportArgs& a) {
  const std::string& run = a.run;
  if (run.empty()) {
    RunFilter filter;
    filter.label = a.label;
    filter.since = a.since;
    filter.until = a.until;
    filter.fingerprint = a.fingerprint;
    filter.limit = a.limit;
    std::vector<RunRecord> runs = store.listRuns(filter);
    std::reverse(runs.begin(), runs.end());  // oldest first, as ids grow
    return runs;
  }
  if (run == "last" || run == "latest") {
    RunFilter newest;
    newest.limit = 1;
    std::vector<RunRecord> runs = store.listRuns(newest);
    if (runs.empty()) throw UsageError(fmt::format("no runs in '{}'", store.path()));
    return runs;
  }
  int64_t id = 0;
  auto [end, ec] = std::from_chars(run.data(), run.data() + run.size(), id);
  if (ec != std::errc() || end != run.data() + run.size() || id <= 0) {
    throw UsageError(fmt::format("--run '{}' is not a run id (a positive number, or last)", run));
  }
  std::optional<RunRecord> r = store.findRun(id);
  if (!r) throw UsageError(fmt::format("no run {} in '{}'", id, store.path()));
  return {*r};
}

const std::vector<std::string> kRunHeader{
    "id",          "started_at",  "finished_at",     "label",
    "status",      "source",      "command_line",    "collbench_version",
    "mpi_version", "ucx_version", "cuda_version",    "nccl_version",
    "hosts",       "world_size",  "world_kind",      "fingerprint",
    "pid",         "host",        "environment_json"};

std::vector<std::string> runFields(const RunRecord& r) {
  return {std::to_string(r.id),
          r.startedAt,
          r.finishedAt,
          r.label,
          std::string(runStatusName(r.status)),
          r.source,
          r.commandLine,
          r.collbenchVersion,
          r.mpiVersion,
          r.ucxVersion,
          r.cudaVersion,
          r.ncclVersion,
          r.hosts,
          std::to_string(r.worldSize),
          r.worldKind,
          r.fingerprint,
          std::to_string(r.pid),
          r.host,
          r.environmentJson};
}

nlohmann::json runJson(const RunRecord& r) {
  nlohmann::json env = nlohmann::json::parse(r.environmentJson, nullptr, false);
  if (env.is_discarded()) env = r.environmentJson;  // keep what is there, as text
  return {{"id", r.id},
          {"started_at", r.startedAt},
          {"finished_at", r.finishedAt},
          {"label", r.label},
          {"status", runStatusName(r.status)},
          {"source", r.source},
          {"command_line", r.commandLine},
          {"collbench_version", r.collbenchVersion},
          {"mpi_version", r.mpiVersion},
          {"ucx_version", r.ucxVersion},
          {"cuda_version", r.cudaVersion},
          {"nccl_version", r.ncclVersion},
          {"hosts", r.hosts},
          {"world_size", r.worldSize},
          {"world_kind", r.worldKind},
          {"fingerprint", r.fingerprint},
          {"pid", r.pid},
          {"host", r.host},
          {"environment", env}};
}

const std::vector<std::string> kCaseHeader{"result_id", "run_id",    "collective", "variant",
                                           "dtype",     "op",        "root",       "size_bytes",
                                           "count",     "placement", "nranks"};

std::vector<std::string> caseFields(const ResultRecord& r) {
  return {std::to_string(r.id),
          std::to_string(r.runId),
          r.collective,
          r.variant,
          r.dtype,
          r.op,
          text(r.root),
          std::to_string(r.sizeBytes),
          text(r.count),
          r.placement,
          text(r.nranks)};
}

nlohmann::json caseJson(const ResultRecord& r) {
  return {{"result_id", r.id},        {"run_id", r.runId},         {"collective", r.collective},
          {"variant", r.variant},     {"dtype", value(r.dtype)},   {"op", value(r.op)},
          {"root", value(r.root)},    {"size_bytes", r.sizeBytes}, {"count", value(r.count)},
          {"placement", r.placement}, {"nranks", value(r.nranks)}};
}

const std::vector<std::string> kResultTail{
    "status", "message", "iterations", "statistic", "time_us", "median_us", "mean_us",  "min_us",
    "max_us", "p99_us",  "cv",         "algbw",     "busbw",   "wrong",     "peak_gbps"};

std::vector<std::string> resultTail(const ResultRecord& r) {
  return {r.status,          r.message,      text(r.iterations), r.statistic,   text(timeOf(r)),
          text(medianOf(r)), text(r.meanUs), text(r.minUs),      text(r.maxUs), text(r.p99Us),
          text(r.cv),        text(r.algbw),  text(r.busbw),      text(r.wrong), text(r.peakGBps)};
}

// Writes the document through `sink` as it goes: to stdout, CSV rows and JSON lines leave one at
// a time (a reader of a pipe gets them as they are read); a JSON array is written at the end.
// -o files are written whole (core/OutputFile), so they are collected first.
void exportTable(const ExportArgs& a, const Store& store,
                 const std::function<void(std::string_view)>& sink) {
  const bool csv = a.format == "csv";
  const bool lines = a.format == "jsonl";
  std::vector<RunRecord> runs = selectRuns(store, a);
  nlohmann::json rows = nlohmann::json::array();
  auto header = [&](std::vector<std::string> columns) {
    if (csv) sink(csvLine(columns));
  };
  auto addRow = [&](nlohmann::json j) {
    if (lines) {
      sink(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } else {
      rows.push_back(std::move(j));
    }
  };
  if (a.what == "runs") {
    header(kRunHeader);
    for (const RunRecord& r : runs) {
      if (csv) {
        sink(csvLine(runFields(r)));
      } else {
        addRow(runJson(r));
      }
    }
  } else if (a.what == "results") {
    std::vector<std::string> columns = kCaseHeader;
    columns.insert(columns.end(), kResultTail.begin(), kResultTail.end());
    header(columns);
    for (const RunRecord& run : runs) {
      for (const ResultRecord& r : store.results(run.id, false)) {
        if (csv) {
          std::vector<std::string> fields = caseFields(r);
          std::vector<std::string> tail = resultTail(r);
          fields.insert(fields.end(), tail.begin(), tail.end());
          sink(csvLine(fields));
        } else {
          nlohmann::json j = caseJson(r);
          for (size_t i = 0; i < kResultTail.size(); ++i) j[kResultTail[i]] = resultTail(r)[i];
          // Numbers as numbers.
          j["iterations"] = value(r.iterations);
          for (auto [name, v] : {std::pair{"time_us", timeOf(r)},
                                 {"median_us", medianOf(r)},
                                 {"mean_us", r.meanUs},
                                 {"min_us", r.minUs},
                                 {"max_us", r.maxUs},
                                 {"p99_us", r.p99Us},
                                 {"cv", r.cv},
                                 {"algbw", r.algbw},
                                 {"busbw", r.busbw},
                                 {"peak_gbps", r.peakGBps}}) {
            j[name] = value(v);
          }
          j["wrong"] = value(r.wrong);
          addRow(std::move(j));
        }
      }
    }
  } else {
    // samples: CSV one row per iteration (rank empty for the combined time, the rank number
    // for per-rank times with --per-rank); JSON one object per result with arrays.
    std::vector<std::string> columns = kCaseHeader;
    columns.insert(columns.end(), {"rank", "iteration", "time_us"});
    header(columns);
    for (const RunRecord& run : runs) {
      std::vector<ResultRecord> results =
          a.perRank ? store.results(run.id, true) : store.resultsWithSamples(run.id);
      for (const ResultRecord& r : results) {
        const int n = r.nranks.value_or(0);
        size_t perRank = n > 0 ? r.rankSamplesUs.size() / static_cast<size_t>(n) : 0;
        if (csv) {
          std::vector<std::string> fields = caseFields(r);
          auto row = [&](const std::string& rank, size_t i, double t) {
            std::vector<std::string> f = fields;
            f.insert(f.end(), {rank, std::to_string(i), num(t)});
            sink(csvLine(f));
          };
          for (size_t i = 0; i < r.samplesUs.size(); ++i) row("", i, r.samplesUs[i]);
          for (size_t k = 0; a.perRank && k < r.rankSamplesUs.size(); ++k) {
            row(std::to_string(k / perRank), k % perRank, r.rankSamplesUs[k]);
          }
        } else {
          if (r.samplesUs.empty() && r.rankSamplesUs.empty()) continue;
          nlohmann::json j = caseJson(r);
          j["samples_us"] = r.samplesUs;
          if (a.perRank) {
            nlohmann::json ranks = nlohmann::json::array();
            for (size_t k = 0; perRank > 0 && k < r.rankSamplesUs.size(); k += perRank) {
              ranks.push_back(std::vector<double>(r.rankSamplesUs.begin() + k,
                                                  r.rankSamplesUs.begin() + k + perRank));
            }
            j["rank_samples_us"] = ranks;
          }
          addRow(std::move(j));
        }
      }
    }
  }
  if (a.format == "json") {
    sink(rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
}

std::vector<ExportRun> loadRuns(const ExportArgs& a, const Store& store) {
  std::vector<ExportRun> runs;
  for (const RunRecord& r : selectRuns(store, a)) runs.push_back(loadExportRun(store, r));
  return runs;
}

std::string toolText(const ExportArgs& a, const Store& store) {
  std::vector<ExportRun> runs = loadRuns(a, store);
  if (a.format == "prometheus") return prometheusText(runs);
  if (a.format == "nccl-tuner") return ncclTunerData(runs);
  if (a.format == "nccl-tuner-conf") return ncclTunerConf(runs);
  std::vector<std::string> leftOut;
  std::vector<AlphaBetaFit> fits = fitAlphaBeta(runs, &leftOut);
  for (const std::string& line : leftOut) fmt::print(stderr, "# export: {}\n", line);
  if (a.format == "sim-fit") return fitsCsv(fits);
  if (a.format == "astra-sim") return astraSimNetworkYaml(fits);
  return simaiBusbwYaml(fits);
}

// --listen: one HTTP/1.x exchange per connection on 127.0.0.1 until GET /metrics has been
// answered (other paths get 404 and the wait goes on), or the deadline passes (TimeoutError).
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

using SteadyClock = std::chrono::steady_clock;

int msLeft(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool waitReadable(int fd, SteadyClock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  while (true) {
    int rc = ::poll(&p, 1, msLeft(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR)
      throw EnvironmentError(fmt::format("--listen: poll: {}", std::strerror(errno)));
  }
}

void sendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away: nothing more to tell it
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// The request line of one request ("GET /metrics HTTP/1.1"), "" if the client sent none in time.
std::string readRequestLine(int fd, SteadyClock::time_point deadline) {
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    if (!waitReadable(fd, deadline)) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  return request.substr(0, request.find("\r\n"));
}

int serveMetricsOnce(const std::string& body, int port, double timeoutS) {
  Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.fd() < 0)
    throw EnvironmentError(fmt::format("--listen: socket: {}", std::strerror(errno)));
  int one = 1;
  ::setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(listener.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.fd(), 8) != 0) {
    throw EnvironmentError(fmt::format("--listen {}: cannot listen on 127.0.0.1:{} ({})", port,
                                       port, std::strerror(errno)));
  }
  socklen_t len = sizeof addr;
  ::getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  fmt::print(stderr, "collbench: serving http://127.0.0.1:{}/metrics for one scrape ({} s)\n",
             ntohs(addr.sin_port), timeoutS);
  std::fflush(stderr);
  const auto deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                 std::chrono::duration<double>(timeoutS));
  while (waitReadable(listener.fd(), deadline)) {
    Socket client(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (client.fd() < 0) continue;
    // A client that connects and says nothing gets 5 s, not the whole deadline.
    const auto requestDeadline = std::min(deadline, SteadyClock::now() + std::chrono::seconds(5));
    const std::string line = readRequestLine(client.fd(), requestDeadline);
    const bool get = line.rfind("GET ", 0) == 0;
    const bool head = line.rfind("HEAD ", 0) == 0;
    const size_t pathStart = line.find(' ') + 1;
    const std::string path =
        line.substr(pathStart, line.find_first_of(" ?", pathStart) - pathStart);
    if ((get || head) && path == "/metrics") {
      sendAll(client.fd(),
              fmt::format("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                          "charset=utf-8\r\nContent-Length: {}\r\nConnection: "
                          "close\r\n\r\n",
                          body.size()));
      if (get) sendAll(client.fd(), body);
      return 0;
    }
    const std::string_view notFound = "not found: collbench serves /metrics\n";
    sendAll(client.fd(), fmt::format("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                                     "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                                     notFound.size(), notFound));
  }
  throw TimeoutError(fmt::format("--listen: no scrape of /metrics within {} s", timeoutS));
}

int doExport(const ExportArgs& a) {
  if (a.what != "runs" && a.what != "results" && a.what != "samples") {
    throw UsageError(fmt::format("export '{}': expected runs, results or samples", a.what));
  }
  const bool tool =
      std::find(kToolFormats.begin(), kToolFormats.end(), a.format) != kToolFormats.end();
  if (!tableFormat(a.format) && !tool) {
    throw UsageError(fmt::format(
        "--format '{}' is not one of csv, json, jsonl, prometheus, nccl-tuner, nccl-tuner-conf, "
        "sim-fit, astra-sim, simai-busbw",
        a.format));
  }
  if (tool && a.what != "results") {
    throw UsageError(fmt::format(
        "--format {} exports results: collbench export results --format {}", a.format, a.format));
  }
  if (a.perRank && a.what != "samples") throw UsageError("--per-rank applies to samples only");
  if (a.listenPort >= 0 && a.format != "prometheus") {
    throw UsageError("--listen serves the prometheus format only (--format prometheus)");
  }
  if (a.listenPort > 65535) throw UsageError(fmt::format("--listen {}: not a port", a.listenPort));
  if (a.listenPort >= 0 && !a.output.empty())
    throw UsageError("--listen and -o exclude each other");
  if (!(a.listenTimeout > 0)) throw UsageError("--listen-timeout must be positive");
  if (!a.run.empty() && (a.label || a.since || a.until || a.fingerprint || a.limit > 0)) {
    throw UsageError(
        "--run names one run; --label, --since, --until, --fingerprint and --limit "
        "select among all of them");
  }
  if (a.limit < 0) throw UsageError(fmt::format("--limit {}: must be positive", a.limit));
  const bool toFile = !a.output.empty() && a.output != "-";
  if (toFile) checkOutputPath(a.output, "-o");
  Store store = Store::open(a.db, false);
  if (tool) {
    const std::string text = toolText(a, store);
    if (a.listenPort >= 0) return serveMetricsOnce(text, a.listenPort, a.listenTimeout);
    if (!toFile) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    writeOutputFile(a.output, text, "-o");
    return 0;
  }
  if (!toFile) {
    exportTable(a, store, [](std::string_view t) { std::fwrite(t.data(), 1, t.size(), stdout); });
    return 0;
  }
  std::string text;
  exportTable(a, store, [&](std::string_view t) { text += t; });
  writeOutputFile(a.output, text, "-o");
  return 0;
}

}  // namespace

void setupExportCommand(CLI::App& app, Action& action) {
  auto a = std::make_shared<ExportArgs>();
  auto* sub = app.add_subcommand(
      "export",
      "Write runs, results or raw samples as CSV, JSON or JSON lines, or results for Prometheus, "
      "NCCL's tuner plugin, ASTRA-sim or SimAI");
  sub->add_option("WHAT", a->what, "runs, results or samples")->required();
  sub->add_option("--db", a->db, "SQLite database")->capture_default_str();
  sub->add_option("--run", a->run, "Only this run (id or last); default: every run");
  sub->add_option("--label", a->label, "Only runs with this label");
  sub->add_option("--since", a->since, "Only runs started at or after this UTC date[Ttime]");
  sub->add_option("--until", a->until, "Only runs started up to this UTC date[Ttime]");
  sub->add_option("--fingerprint", a->fingerprint, "Only runs with this environment fingerprint");
  sub->add_option("--limit", a->limit, "Only the newest N runs of the selection");
  sub->add_option("--format", a->format,
                  "csv, json, jsonl (one object per line), or for results: prometheus, "
                  "nccl-tuner, nccl-tuner-conf, sim-fit, astra-sim, simai-busbw")
      ->capture_default_str();
  sub->add_option("-o,--output", a->output, "Write to FILE (default: stdout)");
  sub->add_flag("--per-rank", a->perRank, "samples: also every rank's own times");
  sub->add_option("--listen", a->listenPort,
                  "prometheus: serve GET /metrics once on 127.0.0.1:PORT (0: any free port, "
                  "printed on stderr), then exit");
  sub->add_option("--listen-timeout", a->listenTimeout,
                  "--listen: seconds to wait for the scrape (exit 2 past it)")
      ->capture_default_str();
  sub->callback([a, &action] { action = [a] { return doExport(*a); }; });
}

}  // namespace cb::cli
