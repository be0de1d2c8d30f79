// One measured point, the one type from the engine to the store and every reporter: what was
// measured, how, and what came of it. A field the source did not give (a log's missing column, a
// point that was not verified, a collective without a root) is unset and stored as NULL, and
// every output writes it as null or an empty field: never 0 or -1, which are real values (0
// wrong elements, root 0, 0 GB/s at size 0). Text fields use "" for unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/Stats.h"

namespace cb {

// ok: measured; unsupported: the variant can't run here (why in the message); failed: it ran
// and broke; skipped: a log that lists the point without measuring it.
enum class ResultStatus : uint8_t { kOk, kUnsupported, kFailed, kSkipped };
std::string_view resultStatusName(ResultStatus s);  // "ok", "unsupported", "failed", "skipped"
// The inverse; nullopt for a name this build does not know.
std::optional<ResultStatus> parseResultStatus(std::string_view name);

struct ResultRecord {
  int64_t id = 0;           // assigned by the store
  int64_t runId = 0;        // set when stored
  std::string collective;   // "allreduce", ...; p2p: "latency", "bw", "bibw"
  std::string variant;      // "mpi", "ring", "ring/mpi", ...
  std::string dtype;        // "" when unknown
  std::string op;           // "sum", ..., "none" for collectives without reduction; "" unknown
  std::optional<int> root;  // unset: not a rooted collective, or unknown
  uint64_t sizeBytes = 0;
  std::optional<uint64_t> count;  // elements; unset when the element size is unknown
  std::string placement;          // "out" | "in"
  std::optional<int> nranks;      // unset when the log does not say
  ResultStatus status = ResultStatus::kOk;
  std::string message;  // why, when not ok; a note (a forced algorithm NCCL took) when ok
  std::optional<int64_t> iterations;
  // The reported statistic and the median: plain doubles with a flag rather than optionals, as
  // the gate's code and tests use them as numbers. Known false: stored NULL, the value 0 (a
  // point that was not timed; a log that gives no median).
  double timeUs = 0;
  bool timeKnown = true;
  std::string statistic = "median";
  double medianUs = 0;
  bool medianKnown = true;
  std::optional<double> meanUs, minUs, maxUs, p99Us, cv;
  // The spread of the iterations, for `run --json/--csv`; the database does not keep it (a
  // stored record reads it back unset).
  std::optional<double> stddevUs;
  std::optional<double> algbw, busbw;  // GB/s (1e9 B/s)
  std::optional<int64_t> wrong;        // unset: not checked; 0: verified
  // The busbw bound of the hardware under the point (core/PeakModel.h); unset: none known.
  std::optional<double> peakGBps;
  std::string peakLimit;  // what sets it: "NVLink4 x18", "host memory"; "" unknown
  // Per-iteration times in us as reported (combined over ranks), and per rank (rank-major,
  // nranks x iterations); empty when not kept (imports).
  std::vector<double> samplesUs;
  std::vector<double> rankSamplesUs;

  bool ok() const { return status == ResultStatus::kOk; }
  // Timed: ok with iterations (an unsupported or failed point, or a log's skipped row, is not).
  bool measured() const { return ok() && iterations.value_or(0) > 0; }
};

// The timing part of a record (seconds in, microseconds stored), shared by every measurement:
// what was not measured stays unset (stored NULL).
void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples);

}  // namespace cb
