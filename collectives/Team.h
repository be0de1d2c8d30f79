// A Team is a communicator with what every engine needs to know about it, gathered once: the
// host/rank map and the transports, set up on first use and cached by name for the team's life.
// The run session makes one Team on the world; engines (the sweep, p2p, proxies, diagnosis) take
// a Team&, and split() makes sub-teams (a pair, a tensor-parallel group) with their own
// communicator, host map and transports. Nothing is set up per measured point.
//
// Collective calls (every rank of the team calls them in the same order): the constructors,
// defaultTransport() the first time, transport(name) the first time for each name, split(),
// pair(). Everything else is local.
#pragma once

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "collectives/transport/Transports.h"
#include "core/Communicator.h"
#include "core/HostMap.h"
#include "core/Transport.h"

namespace cb {

class Team {
 public:
  // Collective (one allgather of host names). Borrows comm: it must outlive the team.
  explicit Team(Communicator& comm, TransportOptions o = {});
  // Local: borrows comm with a host map the caller already has (tests, a map recorded earlier).
  Team(Communicator& comm, HostMap hosts, TransportOptions o = {});
  // Collective. Owns comm (a split communicator).
  explicit Team(std::unique_ptr<Communicator> comm, TransportOptions o = {});
  // Tears the cached transports down (before the communicator they were set up over).
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  Communicator& comm() { return *comm_; }
  // Variants that only need the communicator take a Team where a Communicator& is expected.
  operator Communicator&() { return *comm_; }
  const Communicator& comm() const { return *comm_; }
  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  WorldKind worldKind() const { return comm_->worldKind(); }
  const HostMap& hosts() const { return hosts_; }
  // The link class of every rank pair (n*n by rank; HostMap::links), from the run's topology:
  // the run session sets it once; sub-teams made later carry their part of it.
  void setLinkClasses(std::vector<LinkClass> links);
  // Deadline of set-up waits (the run's -T).
  Deadline setupDeadline() const { return Deadline::after(options_.setupSeconds); }

  // Why `name` can't be used by this team (nullopt: it can). Local: decided from the world kind
  // and the host map, so it costs no message and every rank answers alike.
  std::optional<std::string> transportUnsupported(const std::string& name) const;
  // The default transport of the hand-written algorithms (see defaultTransport in
  // Transports.h). Collective on the first call only when the team spans hosts (UCX is probed).
  const std::string& defaultTransport();
  // The transport `name`, set up on the first call (collective) and cached; later calls return
  // the same object. A set-up that failed is remembered and its error thrown again by later
  // calls, without another attempt. UsageError (nothing cached) when transportUnsupported() says
  // why not.
  Transport& transport(const std::string& name);
  // Transports this team set up (successful or not): tests check that a sweep sets up once.
  int transportSetups() const { return setups_; }
  // Releases every cached transport now (each is torn down once). Later transport() calls set
  // up again.
  void closeTransports();

  // Wraps every transport set up from now on (fault injection, tracing). Sub-teams made later
  // inherit it.
  using TransportDecorator = std::function<std::unique_ptr<Transport>(const std::string& name,
                                                                      std::unique_ptr<Transport>)>;
  void setTransportDecorator(TransportDecorator d) { decorator_ = std::move(d); }

  // Collective: ranks with the same color form a sub-team, ordered by (key, rank here), with its
  // own communicator, host map (no new gather: taken from this one) and transport cache.
  std::unique_ptr<Team> split(int color, int key);
  // Collective: the two-rank sub-team {a, b} (a is its rank 0) on ranks a and b; nullptr on the
  // others. UsageError unless a and b are two distinct ranks of this team.
  std::unique_ptr<Team> pair(int a, int b);

 private:
  Team(std::unique_ptr<Communicator> comm, HostMap hosts, TransportOptions o);

  struct Slot {
    std::unique_ptr<Transport> transport;
    std::exception_ptr error;  // of a failed set-up, thrown again by every later call
  };

  std::unique_ptr<Communicator> owned_;
  Communicator* comm_;
  TransportOptions options_;
  HostMap hosts_;
  std::optional<std::string> default_;
  std::map<std::string, Slot> transports_;
  TransportDecorator decorator_;
  int setups_ = 0;
};

}  // namespace cb
