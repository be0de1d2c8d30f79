// Checks of command-line values shared by the subcommands, made before any rank starts or any
// database is opened: every bad value gets one line naming the flag (UsageError, exit 2), and a
// value that would be ignored or mean something other than it says is refused, not guessed at.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/MemoryFit.h"
#include "bench/Sweep.h"
#include "bench/SweepPlan.h"
#include "collectives/Team.h"

namespace cb::cli {

// The whole of `text` as a finite decimal number ("5abc", "nan", "inf", "0x1p3", "" -> nullopt).
std::optional<double> finiteNumber(std::string_view text);
// A comma list with no empty element ("ring,", ",ring", "a,,b" name nothing after the comma).
void checkListElements(const std::string& text, std::string_view flag);
// A number of seconds or a factor must be a finite number in [lo, hi].
void checkRange(double value, std::string_view flag, double lo, double hi);
// --np: not given, or 1..1024.
void checkNp(int np);
// A deadline in seconds: finite, > 0, at most a week (there is no "wait for ever").
void checkTimeout(double seconds, std::string_view flag);
// --db: a non-empty path unless --no-db.
void checkDbPath(const std::string& db, bool noDb);
// Labels are shown in tables and used as keys: valid UTF-8, no control characters, <= 200 bytes.
void checkLabel(const std::string& label, std::string_view flag = "--label");
// --transport for `list`: empty or one of the known transports.
void checkTransportName(const std::string& name);
// --ranks-per-node: 0 (not given) or positive.
void checkRanksPerNode(int ranksPerNode);
// The sweep's step options as the user gave them: -f finite and > 1 unless -b = -e; -i > 0 if
// given.
void checkSteps(const SweepOptions& s, bool stepBytesGiven);

// What `run` checks before any rank starts, beyond what toSweep parses: -T, -f/-i, --db,
// --label, --ranks-per-node.
void checkRunInputs(const SweepOptions& s, bool stepBytesGiven, int ranksPerNode,
                    const std::string& db, bool noDb, const std::string& label);

// Collective (every rank calls it): --inject-delay's VARIANT must name a variant the sweep runs
// (a name such as "ring", or a stored label such as "ring/local" with the transport in use).
void checkInjectDelayTarget(Team& team, const SweepPlan& plan);
// Collective: `want` names a variant the sweep runs (by name or stored label); else UsageError
// naming `flag` and the variants.
void checkNamesVariant(Team& team, const SweepPlan& plan, const std::string& want,
                       std::string_view flag);
// Collective: `need` per rank times the ranks on this host fits in its available memory, on
// every host; else the same UsageError (with the figures) on every rank. Returns this host's
// figures as one line for the run header ("memory: about ... per rank x N ...").
std::string checkMemoryOnEveryHost(Team& team, const MemoryNeed& need, uint64_t maxBytes,
                                   double timeoutSeconds);
// Collective: the plan's largest point fits (checkMemoryOnEveryHost).
std::string checkSweepMemory(Team& team, const SweepPlan& plan);

}  // namespace cb::cli
