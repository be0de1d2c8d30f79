// Fault injection for diagnosis tests and demos, as a decorator over any Transport, so the
// measurement engine stays unaware of it:
//   slow-link=A-B:FACTOR  every exchange of the lower rank of A, B that involves the other
//                         takes FACTOR times as long: after the real exchange it waits
//                         (FACTOR - 1) x the time the exchange took. One end only: the other
//                         end's exchanges already hold the wait for it, and stretching those
//                         too would compound (each end's wait feeding the other's, call after
//                         call). The peer sees the link FACTOR times slower either way.
//   slow-rank=R:DELAY     rank R waits DELAY (e.g. 200us) before it posts each exchange: it
//                         arrives late at every step, as a rank that is slow to compute does.
// Specs are parsed before any rank starts (UsageError, one line), checked against the world size
// when it is known.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/Team.h"
#include "core/Transport.h"

namespace cb {

struct InjectSpec {
  enum class Kind : uint8_t { kSlowLink, kSlowRank };
  Kind kind = Kind::kSlowLink;
  int a = 0, b = 0;         // slow-link: the two ranks
  double factor = 1;        // slow-link: > 1
  int rank = 0;             // slow-rank
  double delaySeconds = 0;  // slow-rank: > 0
};

// "slow-link=0-3:4", "slow-rank=2:200us" (durations as -T takes them: us, ms, s).
InjectSpec parseInject(std::string_view text);
std::vector<InjectSpec> parseInjects(std::span<const std::string> texts);
// UsageError when a spec names a rank outside 0..worldSize-1.
void validateInjects(std::span<const InjectSpec> specs, int worldSize);
// "slow-link 0-3 x4", "slow-rank 2 +200 us": for headers and notes.
std::string describeInject(const InjectSpec& s);

// Wraps `inner` (rank and size from it). With no spec touching this rank, the decorator only
// forwards; name() is the inner transport's, so results keep their names. Specs name world
// ranks: over a sub-communicator, `worldRanks[r]` is the world rank of its rank r (empty: the
// transport's ranks are the world's).
std::unique_ptr<Transport> injectFaults(std::unique_ptr<Transport> inner,
                                        std::span<const InjectSpec> specs,
                                        std::vector<int> worldRanks = {});

// The decorator a Team installs (Team::setTransportDecorator) so every transport it sets up
// injects `specs`; `worldRanks` as for injectFaults (a sub-team's ranks in the world).
Team::TransportDecorator injectDecorator(std::vector<InjectSpec> specs,
                                         std::vector<int> worldRanks = {});

// Waits until `seconds` have passed: sleeps the long part, spins the last 100 us (yielding until
// the last 20 us) so short delays are exact.
void waitFor(double seconds);
// The same, until the steady clock (nowSeconds) reads `end`; one clock read when it already has.
void waitUntil(double end);

}  // namespace cb
