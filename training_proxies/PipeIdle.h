// Splitting a pipeline stage's idle time by its cause. A stage waiting in an exchange for its peer
// to post the other side is idle because of whatever that peer was doing meanwhile: computing (the
// schedule's bubble), moving an earlier message (transfer), in a collective (exposed), waiting in
// turn for another stage (followed there), or nothing the program shows (host gaps: handing work
// to the compute thread, waking up).
//
// Pure, so the attribution is tested on hand-made timelines; RankProxy records the timeline while
// it runs and gathers it over the pipeline team once at the end (one clock: stages on one host).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cb::proxy {

// One message of an exchange, named by its ordinal between the two stages: the k-th message a
// stage sends to a peer is the k-th that peer receives from it (transports match in posting
// order), so ordinals pair the two sides without any other key.
struct PipeMessage {
  bool send = false;
  int peer = 0;  // stage
  uint32_t ordinal = 0;
};

// When a stage posted its k-th message to (sends) and from (recvs) each peer, k = index.
struct PipePostings {
  std::map<int, std::vector<int64_t>> sends, recvs;
  // Throws InternalError when m is not the next message with its peer.
  void record(const PipeMessage& m, int64_t startNs);
  // The latest posting among the counterparts of `messages` of stage `stage` and the stage that
  // made it; {start, -1} when every counterpart came before `start`. Throws InternalError when a
  // counterpart is missing.
  static std::pair<int64_t, int> ready(int stage, int64_t start,
                                       const std::vector<PipeMessage>& messages,
                                       const std::vector<PipePostings>& byStage);
  // A flat byte string for an allgather, and back (throws InternalError on a malformed one).
  std::string encode() const;
  static PipePostings decode(const std::string& s);
};

struct TimeSpan {
  int64_t start = 0, end = 0;  // steady clock, ns
};

// A pipeline exchange: posted at start, its last counterpart posted at ready (by stage `on`;
// -1: none came later), done at end.
struct ExchangeSpan {
  int step = 0;
  int64_t start = 0, ready = 0, end = 0;
  int on = -1;
};

// What one stage did in its timed steps.
struct StageTimeline {
  std::vector<TimeSpan> compute, collectives;
  std::vector<ExchangeSpan> exchanges;
  std::string encode() const;
  static StageTimeline decode(const std::string& s);
};

struct PipeIdleSplit {
  // Per step, seconds of this stage's exchanges: waiting on a stage that was computing (bubble),
  // moving messages (the exchange's own transfer, or a peer's it waited through), waiting on a
  // peer in a collective (exposed), or on a host gap (other).
  std::vector<double> bubble, transfer, exposed, other;
};

// The split for stage `stage` given every stage's timeline. The stage's own compute inside an
// exchange (a prefetching stage computes meanwhile) is not idle and counts nowhere.
PipeIdleSplit splitPipeIdle(int stage, const std::vector<StageTimeline>& byStage, int steps);

// A stage's wait in one step (seconds in exchanges on a computing peer, and for the flush)
// against the idle the schedule itself imposes with the stages' compute (Plan.h,
// scheduleIdlePerStep, the same orders with instant transfers): the bubble is that idle, as far
// as the stage was idle. Beyond it the stage waited on peers whose compute came late because of
// their transfers or collectives, so the excess is added to `transfer` and `exposed` in their
// proportion (all to transfer when both are 0). Short of it, the stage's own messages moved
// while the schedule had it idle anyway: that much of `transfer` is bubble (as the simulation
// counts transfer: the idle the links add over instant ones).
struct WaitSplit {
  double bubble = 0, transfer = 0, exposed = 0;
};
WaitSplit splitWait(double wait, double scheduleIdle, double transfer, double exposed);

}  // namespace cb::proxy
