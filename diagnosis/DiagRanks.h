// `diag ranks`: stragglers. An allreduce (the ring over the run's transport) is called
// `iterations` times in each direction of the ring (alternating), each after a barrier (outside
// the timer, as the engine does); each rank records when its first message of the call was
// posted (arrival: a rank slow before it talks arrives late) and when its call returned (finish).
// diagnosis/Diagnosis.h judges them: which rank arrives last, how often, by how much; and, from
// where the late finishers of the two directions sit, which rank sends or receives slowly, or which
// link is slow.
//
// The arrival is seen by a thin timestamping decorator under whatever transport the caller
// passes (wrap it before the fault injector, so an injected delay is a late arrival).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/Team.h"
#include "core/Communicator.h"
#include "core/CpuLoad.h"
#include "core/Transport.h"
#include "diagnosis/Diagnosis.h"

namespace cb {

// Records the time of the first exchange() after each arm(); forwards everything.
class ArrivalProbe final : public Transport {
 public:
  explicit ArrivalProbe(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  uint64_t zeroCopySends() const override { return inner_->zeroCopySends(); }
  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override;
  void arm() { first_ = -1; }
  double firstPost() const { return first_; }  // nowSeconds() of the first post, -1: none

 private:
  std::unique_ptr<Transport> inner_;
  double first_ = -1;
};

struct DiagRanksOptions {
  uint64_t bytes = 1 << 20;  // allreduce size (float sum)
  int iterations = 50, warmup = 5;
  double timeoutSeconds = 60;
  SuspectOptions suspect;
};

struct DiagRanksResult {
  RingStraggleVerdict verdict;
  int steps = 0;  // communication steps of the ring allreduce, 2(n-1)
  // [rank][iteration], seconds: the forward ring (r sends to r + 1), then the backward one.
  std::vector<std::vector<double>> arrive, finish, arriveBackward, finishBackward;
  // What other processes took from each host's ranks during the timed calls (core/CpuLoad.h).
  std::vector<CpuContention> cpu;
};

// Collective over the team: every rank calls it with the same options. `top` is the team's
// transport the allreduce runs over (team.transport(name)); `probe` is the ArrivalProbe inside it,
// under any fault injector (the team's transport decorator can make both).
// The result is complete on rank 0.
DiagRanksResult runDiagRanks(Team& team, ArrivalProbe& probe, Transport& top,
                             const DiagRanksOptions& o);

}  // namespace cb
