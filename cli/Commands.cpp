// The table of subcommands (see Command.h): `collbench --help` lists them in this order.
#include "cli/Command.h"

namespace cb::cli {
namespace {

struct CommandRow {
  const char* name;
  const char* help;  // the one line `collbench --help` shows
  void (*setup)(CLI::App* sub, Action& action);
};

const CommandRow kCommands[] = {
    {"run",
     "Measure collectives (default: allreduce and allgather, 8 B to 64 MiB, every variant "
     "usable here) with nccl-tests flags; results go to the database",
     setupRunCommand},
    {"list", "List collectives, algorithms and backends, and say which are usable here and why not",
     setupListCommand},
    {"runs", "List the runs kept in the database, newest first (#wrong: the worst point)",
     setupRunsCommand},
    {"show", "Show one stored run: its header and its results", setupShowCommand},
    {"import",
     "Import nccl-tests (text or -J JSON), OSU micro-benchmarks and Intel MPI Benchmarks "
     "logs, and NCCL Inspector's per-collective JSON records, as runs in the database.",
     setupImportCommand},
    {"p2p",
     "Point-to-point links with the OSU definitions (latency, bw, bibw) over every transport "
     "and raw MPI; results go to the database",
     setupP2pCommand},
    {"proxy",
     "Training proxies: one DP, TP, PP or hybrid training step's communication with modelled "
     "compute; step time, exposed communication, overlap, bubble, scaling; stored like runs",
     setupProxyCommand},
    {"diag",
     "Find the slow link, rank or node and say so (exit 0 healthy, 1 suspects, 2 usage, 3 "
     "too noisy to judge)",
     setupDiagCommand},
    {"compare", "Compare runs case by case: replicate medians, change, run-level t-tests, verdict",
     setupCompareCommand},
    {"gate",
     "CI gate: fail (exit 1) when the candidate run is significantly and practically slower "
     "than the baseline",
     setupGateCommand},
    {"history", "One metric of the matching cases over the stored runs, with a text trend",
     setupHistoryCommand},
    {"export",
     "Write runs, results or raw samples as CSV, JSON or JSON lines, or results for "
     "Prometheus, NCCL's tuner plugin, ASTRA-sim or SimAI",
     setupExportCommand},
    {"db", "Database maintenance: check, prune, vacuum", setupDbCommand},
    {"report",
     "Write one self-contained HTML page (works offline): busbw and latency against size per "
     "run, two runs compared, a history trend",
     setupReportCommand},
    {"topo", "Show the machine's topology (CPUs, PCI tree, GPUs, NICs, NVLinks) and check it",
     setupTopoCommand},
    {"replay",
     "Replay a recorded job's communication (PyTorch ET, Kineto or Chakra .et traces, one "
     "per rank) op by op on this world; per op kind and size times, recorded vs replayed; "
     "stored",
     setupReplayCommand},
    {"predict",
     "Predict a bigger cluster from runs at small scale: NCCL's cost structure fitted by least "
     "squares on time; per size time, algbw, busbw with a band, the algorithm, the measured "
     "figure beside",
     setupPredictCommand},
};

}  // namespace

void addCommands(CLI::App& app, Action& action) {
  for (const CommandRow& c : kCommands) c.setup(app.add_subcommand(c.name, c.help), action);
}

}  // namespace cb::cli
