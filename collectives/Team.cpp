#include "collectives/Team.h"

#include <fmt/format.h>

#include <numeric>

#include "core/Error.h"

namespace cb {

Team::Team(Communicator& comm, TransportOptions o)
    : comm_(&comm), options_(o), hosts_(gatherHostMap(comm, Deadline::after(o.setupSeconds))) {}

Team::Team(std::unique_ptr<Communicator> comm, TransportOptions o)
    : owned_(std::move(comm)),
      comm_(owned_.get()),
      options_(o),
      hosts_(gatherHostMap(*comm_, Deadline::after(o.setupSeconds))) {}

Team::Team(Communicator& comm, HostMap hosts, TransportOptions o)
    : comm_(&comm), options_(o), hosts_(std::move(hosts)) {}

Team::Team(std::unique_ptr<Communicator> comm, HostMap hosts, TransportOptions o)
    : owned_(std::move(comm)), comm_(owned_.get()), options_(o), hosts_(std::move(hosts)) {}

Team::~Team() { closeTransports(); }

void Team::closeTransports() { transports_.clear(); }

std::optional<std::string> Team::transportUnsupported(const std::string& name) const {
  return cb::transportUnsupported(name, worldKind(), hosts_);
}

const std::string& Team::defaultTransport() {
  if (!default_) default_ = cb::defaultTransport(*comm_, hosts_, setupDeadline());
  return *default_;
}

Transport& Team::transport(const std::string& name) {
  auto it = transports_.find(name);
  if (it == transports_.end()) {
    // Unknown or unusable names are the caller's mistake, not a set-up: nothing is cached.
    if (auto why = transportUnsupported(name)) throw UsageError(*why);
    Slot slot;
    ++setups_;
    try {
      slot.transport = makeTransport(name, *comm_, hosts_, options_);
      if (decorator_) slot.transport = decorator_(name, std::move(slot.transport));
    } catch (...) {
      slot.transport.reset();
      slot.error = std::current_exception();
    }
    it = transports_.emplace(name, std::move(slot)).first;
  }
  if (it->second.error) std::rethrow_exception(it->second.error);
  return *it->second.transport;
}

void Team::setLinkClasses(std::vector<LinkClass> links) {
  const size_t n = static_cast<size_t>(size());
  if (links.size() != n * n) {
    throw InternalError(fmt::format("{} link classes for a team of {}", links.size(), n));
  }
  hosts_.links = std::move(links);
}

std::unique_ptr<Team> Team::split(int color, int key) {
  const Deadline d = setupDeadline();
  auto sub = comm_->split(color, key, d);
  // The sub-communicator's rank i is parent rank members[i]: one allgather on the new
  // communicator instead of asking every host its name again.
  auto members = sub->allgather<int>(rank(), d);
  auto team = std::unique_ptr<Team>(new Team(std::move(sub), hosts_.subset(members), options_));
  team->decorator_ = decorator_;
  return team;
}

std::unique_ptr<Team> Team::pair(int a, int b) {
  if (a == b || a < 0 || b < 0 || a >= size() || b >= size()) {
    throw UsageError(fmt::format("ranks {} and {} are not two distinct ranks of {}", a, b, size()));
  }
  const bool member = rank() == a || rank() == b;
  auto team = split(member ? 0 : 1, rank() == a ? 0 : 1);
  if (!member) return nullptr;
  return team;
}

}  // namespace cb
