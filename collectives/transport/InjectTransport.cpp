#include "collectives/transport/InjectTransport.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <thread>

#include "core/Clock.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Size.h"
#include "core/Text.h"

namespace cb {
namespace {

int parseRank(std::string_view s, std::string_view whole) {
  int v = -1;
  s = trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
    throw UsageError(
        fmt::format("--inject '{}': '{}' is not a rank (a non-negative integer)", whole, s));
  }
  return v;
}

class InjectTransport final : public Transport {
 public:
  InjectTransport(std::unique_ptr<Transport> inner, std::vector<InjectSpec> specs,
                  std::vector<int> worldRanks)
      : inner_(std::move(inner)), specs_(std::move(specs)) {
    const auto n = static_cast<size_t>(inner_->size());
    if (worldRanks.size() != n) {
      worldRanks.resize(n);
      for (size_t r = 0; r < n; ++r) worldRanks[r] = static_cast<int>(r);
    }
    const int me = worldRanks[static_cast<size_t>(inner_->rank())];
    worldRank_ = me;
    factorOf_.assign(n, 1.0);
    for (const InjectSpec& s : specs_) {
      if (s.kind == InjectSpec::Kind::kSlowRank && s.rank == me) delay_ += s.delaySeconds;
      // Only the lower rank of the link stretches (see the header): s.a < s.b.
      if (s.kind != InjectSpec::Kind::kSlowLink || s.a != me) continue;
      const int peerWorld = s.b;
      for (size_t r = 0; r < n; ++r) {
        if (worldRanks[r] == peerWorld) factorOf_[r] = std::max(factorOf_[r], s.factor);
      }
    }
  }

  std::string_view name() const override { return inner_->name(); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  uint64_t zeroCopySends() const override { return inner_->zeroCopySends(); }

  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override {
    if (delay_ > 0) delayWithin(d);
    double factor = 1;
    for (const SendOp& s : sends) factor = std::max(factor, factorOf(s.peer));
    for (const RecvOp& r : recvs) factor = std::max(factor, factorOf(r.peer));
    if (factor <= 1) return inner_->exchange(sends, recvs, d);
    // The stretch ends factor x the exchange after it began, the clock reads inside it: a
    // ping-pong of 8 B takes 1.5 us here, and two more reads each way made x1.01 a 7% slow link.
    const double t0 = nowSeconds();
    inner_->exchange(sends, recvs, d);
    waitUntil(t0 + factor * (nowSeconds() - t0));
  }

 private:
  // A slow rank's delay ends at the deadline: a rank told to stall 10 s under -T 1 must not keep
  // the job alive after its peers gave up on it, and it says so itself.
  void delayWithin(const Deadline& d) const {
    const double left = std::chrono::duration<double>(d.at() - SteadyClock::now()).count();
    if (delay_ <= left) return waitFor(delay_);
    while (!d.expired()) {
      if (interruptStopsWaits()) {
        throw InterruptedError(fmt::format("rank {}'s injected delay interrupted by signal {}",
                                           worldRank_, interruptSignal()));
      }
      const auto rest = d.at() - SteadyClock::now();
      std::this_thread::sleep_for(
          std::min<SteadyClock::duration>(rest, std::chrono::milliseconds(50)));
    }
    d.check(fmt::format("rank {}, stalled by --inject slow-rank={}:{:g}s before its exchange,",
                        worldRank_, worldRank_, delay_));
  }

  double factorOf(int peer) const {
    return peer >= 0 && static_cast<size_t>(peer) < factorOf_.size()
               ? factorOf_[static_cast<size_t>(peer)]
               : 1.0;
  }

  std::unique_ptr<Transport> inner_;
  std::vector<InjectSpec> specs_;
  std::vector<double> factorOf_;  // per peer
  double delay_ = 0;
  int worldRank_ = 0;
};

}  // namespace

InjectSpec parseInject(std::string_view text) {
  const std::string_view whole = text;
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError(
        fmt::format("--inject '{}': expected slow-link=A-B:FACTOR or slow-rank=R:DELAY", whole));
  }
  const std::string kind = toLower(trim(text.substr(0, eq)));
  std::string_view rest = text.substr(eq + 1);
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    throw UsageError(fmt::format("--inject '{}': missing ':{}'", whole,
                                 kind == "slow-rank" ? "DELAY" : "FACTOR"));
  }
  std::string_view who = rest.substr(0, colon), how = trim(rest.substr(colon + 1));
  InjectSpec s;
  if (kind == "slow-link") {
    s.kind = InjectSpec::Kind::kSlowLink;
    size_t dash = who.find('-');
    if (dash == std::string_view::npos) {
      throw UsageError(fmt::format("--inject '{}': the link is two ranks A-B", whole));
    }
    s.a = parseRank(who.substr(0, dash), whole);
    s.b = parseRank(who.substr(dash + 1), whole);
    if (s.a == s.b) throw UsageError(fmt::format("--inject '{}': a link needs two ranks", whole));
    if (s.a > s.b) std::swap(s.a, s.b);
    double f = 0;
    auto [end, ec] = std::from_chars(how.data(), how.data() + how.size(), f);
    if (ec != std::errc() || end != how.data() + how.size() || !(f > 1) || f > 1e6) {
      throw UsageError(fmt::format(
          "--inject '{}': FACTOR '{}' must be a number above 1 (2 = half speed)", whole, how));
    }
    s.factor = f;
    return s;
  }
  if (kind == "slow-rank") {
    s.kind = InjectSpec::Kind::kSlowRank;
    s.rank = parseRank(who, whole);
    double sec = 0;
    try {
      sec = parseDurationSeconds(how);
    } catch (const UsageError&) {
      throw UsageError(
          fmt::format("--inject '{}': DELAY '{}' is not a duration (e.g. 200us, 1ms)", whole, how));
    }
    if (!(sec > 0) || sec > 10) {
      throw UsageError(fmt::format("--inject '{}': DELAY must be above 0 and at most 10 s", whole));
    }
    s.delaySeconds = sec;
    return s;
  }
  throw UsageError(
      fmt::format("--inject '{}': unknown fault '{}' (known: slow-link, slow-rank)", whole, kind));
}

std::vector<InjectSpec> parseInjects(std::span<const std::string> texts) {
  std::vector<InjectSpec> out;
  for (const std::string& t : texts) out.push_back(parseInject(t));
  return out;
}

void validateInjects(std::span<const InjectSpec> specs, int worldSize) {
  for (const InjectSpec& s : specs) {
    int hi = s.kind == InjectSpec::Kind::kSlowLink ? std::max(s.a, s.b) : s.rank;
    if (hi >= worldSize) {
      throw UsageError(fmt::format("--inject {}: rank {} is out of range for {} ranks (0..{})",
                                   describeInject(s), hi, worldSize, worldSize - 1));
    }
  }
}

std::string describeInject(const InjectSpec& s) {
  if (s.kind == InjectSpec::Kind::kSlowLink) {
    return fmt::format("slow-link {}-{} x{:g}", s.a, s.b, s.factor);
  }
  return fmt::format("slow-rank {} +{:g} us", s.rank, s.delaySeconds * 1e6);
}

std::unique_ptr<Transport> injectFaults(std::unique_ptr<Transport> inner,
                                        std::span<const InjectSpec> specs,
                                        std::vector<int> worldRanks) {
  if (specs.empty()) return inner;
  return std::make_unique<InjectTransport>(
      std::move(inner), std::vector<InjectSpec>(specs.begin(), specs.end()), std::move(worldRanks));
}

Team::TransportDecorator injectDecorator(std::vector<InjectSpec> specs,
                                         std::vector<int> worldRanks) {
  return [specs = std::move(specs), worldRanks = std::move(worldRanks)](
             const std::string&, std::unique_ptr<Transport> inner) {
    return injectFaults(std::move(inner), specs, worldRanks);
  };
}

void waitFor(double seconds) {
  if (seconds > 0) waitUntil(nowSeconds() + seconds);
}

void waitUntil(double end) {
  constexpr double kSpin = 100e-6;
  double left = end - nowSeconds();  // the one clock read when nothing is left to wait
  if (left > 2 * kSpin) {
    std::this_thread::sleep_for(std::chrono::duration<double>(left - kSpin));
    left = end - nowSeconds();
  }
  // Yield while more than 20 us are left, so the spinning does not hold a CPU the other ranks
  // need (on a busy machine that couples every pair to this one); spin the last 20 us without
  // yielding, since one yield can give the CPU away for a time slice and make even a x1.01 link
  // look slow.
  constexpr double kNoYield = 20e-6;
  for (; left > 0; left = end - nowSeconds()) {
    if (left > kNoYield) sched_yield();
  }
}

}  // namespace cb
