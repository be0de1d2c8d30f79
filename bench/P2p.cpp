// Point-to-point link benchmarks (see P2p.h for the OSU definitions they follow).
#include "bench/P2p.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "collectives/Team.h"
#include "collectives/transport/Transports.h"
#include "core/Buffer.h"
#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Text.h"

namespace cb {

constexpr EnumRow<P2pTest> kP2pTests[] = {
    {P2pTest::kLatency, "latency"}, {P2pTest::kBw, "bw"}, {P2pTest::kBibw, "bibw"}};
std::string_view p2pTestName(P2pTest t) { return enumName(kP2pTests, t); }
P2pTest parseP2pTest(std::string_view name) {
  if (std::optional<P2pTest> t = enumValue(kP2pTests, toLower(name))) return *t;
  throw UsageError(fmt::format("unknown p2p test '{}' (known: {})", name, enumNames(kP2pTests)));
}

std::vector<std::string> p2pTransportNames() { return pointToPointTransportNames(); }

std::vector<std::string> parseP2pTransports(std::string_view list) {
  std::vector<std::string> items = splitList(list);
  if (items.empty() || std::find(items.begin(), items.end(), "all") != items.end()) return {"all"};
  const std::vector<std::string> known = p2pTransportNames();
  std::vector<std::string> out;
  for (const std::string& name : items) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw UsageError(
          fmt::format("unknown transport '{}' (known: {}, all)", name, fmt::join(known, ", ")));
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

RankPair parseRankPair(std::string_view text) {
  std::vector<std::string> parts = splitList(text);
  auto rank = [&](const std::string& s) {
    int v = -1;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0) return -1;
    return v;
  };
  if (parts.size() != 2 || rank(parts[0]) < 0 || rank(parts[1]) < 0) {
    throw UsageError(
        fmt::format("--pair '{}' is not two ranks A,B (non-negative integers, e.g. 0,1)", text));
  }
  RankPair p{rank(parts[0]), rank(parts[1])};
  if (p.a == p.b) {
    throw UsageError(
        fmt::format("--pair '{}' names rank {} twice: a link needs two ranks", text, p.a));
  }
  return p;
}

std::vector<RankPair> allRankPairs(int n) {
  std::vector<RankPair> pairs;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) pairs.push_back({i, j});
  }
  return pairs;
}

void validatePairs(std::span<const RankPair> pairs, int worldSize) {
  if (worldSize < 2) {
    throw UsageError(fmt::format(
        "p2p needs at least 2 ranks and this world has {} (use --np N, or mpirun -np N)",
        worldSize));
  }
  if (pairs.empty()) throw UsageError("no rank pair to measure");
  for (const RankPair& p : pairs) {
    if (p.a == p.b) throw UsageError(fmt::format("pair {},{} names the same rank twice", p.a, p.b));
    if (p.a < 0 || p.b < 0 || p.a >= worldSize || p.b >= worldSize) {
      throw UsageError(fmt::format("pair {},{} is out of range for {} ranks (0..{})", p.a, p.b,
                                   worldSize, worldSize - 1));
    }
  }
}

std::string p2pVariantLabel(const std::string& transport, RankPair pair) {
  if (pair == RankPair{0, 1}) return transport;
  return fmt::format("{}@{}-{}", transport, pair.a, pair.b);
}

int osuIterations(P2pTest t, uint64_t bytes) {
  const bool large = bytes > kOsuLargeMessage;
  if (t == P2pTest::kLatency) return large ? 1000 : 10000;
  return large ? 20 : 100;
}

int osuWarmup(P2pTest t, uint64_t bytes) {
  const bool large = bytes > kOsuLargeMessage;
  if (t == P2pTest::kLatency) return large ? 10 : 100;
  return large ? 2 : 10;
}

P2pOptions p2pDefaults(P2pTest t) {
  P2pOptions o;
  o.test = t;
  o.minBytes = t == P2pTest::kLatency ? 0 : 1;
  return o;
}

std::vector<uint64_t> p2pSizes(const P2pOptions& o) {
  std::vector<uint64_t> sizes;
  uint64_t s = o.minBytes;
  if (s == 0) {
    sizes.push_back(0);
    s = 1;
  }
  while (s <= o.maxBytes) {
    sizes.push_back(s);
    auto next = static_cast<uint64_t>(std::llround(static_cast<double>(s) * o.stepFactor));
    if (next <= s) break;  // -f 1: one point, as `run` does
    s = next;
  }
  return sizes;
}

bool p2pLowerIsBetter(P2pTest t) { return t == P2pTest::kLatency; }

double p2pMetricForTime(const P2pPoint& p, double seconds) {
  if (p.test == P2pTest::kLatency) return seconds * 1e6;
  if (seconds <= 0) return 0;
  const double bytes = static_cast<double>(p.bytes) * (p.test == P2pTest::kBibw ? 2 : 1);
  return bytes / seconds / 1e9;
}

double p2pMetric(const P2pPoint& p) {
  return p.test == P2pTest::kLatency ? p.timeSeconds * 1e6 : p.bandwidthGBs;
}

namespace {

// Byte i of what `rank` sends: differs between neighbouring ranks and positions, so a message
// from the wrong peer or at the wrong offset is counted wrong.
uint8_t patternByte(int rank, uint64_t i) {
  return static_cast<uint8_t>((i * 131u + static_cast<uint64_t>(rank) * 29u + 7u) & 0xffu);
}

// Encodes an error so every rank can rethrow the same kind with the same text.
std::string encodeError(const std::exception& e) {
  auto* err = dynamic_cast<const Error*>(&e);
  int kind = static_cast<int>(err ? err->kind() : ErrorKind::kInternal);
  return fmt::format("{}|{}", kind, e.what());
}

[[noreturn]] void throwEncoded(const std::string& encoded) {
  size_t bar = encoded.find('|');
  int kind = std::stoi(encoded.substr(0, bar));
  throw Error(static_cast<ErrorKind>(kind), encoded.substr(bar + 1));
}

}  // namespace

struct P2pBench::Impl {
  struct Channel {
    std::string name;
    Transport* transport;  // the team's, set up once per run
  };

  Impl(Team& t, const P2pOptions& opts) : team(t), comm(t.comm()), o(opts) {}

  Deadline deadline() const { return Deadline::after(o.timeoutSeconds); }

  void validate() {
    validatePairs(o.pairs, comm.size());
    if (o.minBytes > o.maxBytes) {
      throw UsageError(fmt::format("minimum size {} is larger than maximum size {} (-b > -e)",
                                   o.minBytes, o.maxBytes));
    }
    if (o.stepFactor < 1) {
      throw UsageError(fmt::format("step factor -f must be >= 1 (got {})", o.stepFactor));
    }
    if (o.iterations < 0) throw UsageError("iterations -n must not be negative (0: OSU's)");
    if (o.warmup < -1) throw UsageError("warm-up -w must not be negative");
    if (o.window < 1)
      throw UsageError(fmt::format("window -W must be at least 1 (got {})", o.window));
    if (o.timeoutSeconds <= 0) throw UsageError("timeout -T must be positive");
    if (o.transports.empty()) throw UsageError("no transport to measure");
  }

  // Every rank gets the first reason any rank has (or none).
  std::optional<std::string> agree(const std::optional<std::string>& mine) {
    auto all = comm.allgatherStrings(mine ? "!" + *mine : std::string(), deadline());
    for (const auto& s : all) {
      if (!s.empty()) return s.substr(1);
    }
    return std::nullopt;
  }

  void setUp() {
    validate();
    const bool all = o.transports.size() == 1 && o.transports[0] == "all";
    const std::vector<std::string> names = all ? p2pTransportNames() : o.transports;
    for (const std::string& name : names) {
      std::optional<std::string> why = team.transportUnsupported(name);
      Transport* t = nullptr;
      if (!why) {
        std::optional<std::string> failed;
        try {
          t = &team.transport(name);
        } catch (const std::exception& e) {
          failed = e.what();
        }
        why = agree(failed);
        if (why) t = nullptr;
      }
      if (why) {
        if (!all) throw EnvironmentError(fmt::format("--transport {}: {}", name, *why));
        skipped.emplace_back(name, *why);
        continue;
      }
      channels.push_back({name, t});
      transports.push_back(name);
    }
    if (channels.empty()) {
      std::string reasons;
      for (const auto& [name, why] : skipped) {
        reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", name, why);
      }
      throw EnvironmentError(fmt::format("no transport usable here ({})", reasons));
    }
    sizes = p2pSizes(o);
    const size_t bytes = std::max<size_t>(o.maxBytes, 64);
    sendBuf = SharedHostBuffer(bytes);
    recvBuf = SharedHostBuffer(bytes);
    auto* s = static_cast<uint8_t*>(sendBuf.data());
    for (size_t i = 0; i < bytes; ++i) s[i] = patternByte(comm.rank(), i);
    recvBuf.faultIn();
  }

  // One iteration of the test on one rank of the pair.
  struct Loop {
    Transport& t;
    P2pTest test;
    bool initiator;
    std::vector<SendOp> window;
    std::vector<RecvOp> windowRecv;
    SendOp ackSend;
    RecvOp ackRecv;

    void once(Deadline d) {
      switch (test) {
        case P2pTest::kLatency:
          if (initiator) {
            t.exchange(window, {}, d);
            t.exchange({}, windowRecv, d);
          } else {
            t.exchange({}, windowRecv, d);
            t.exchange(window, {}, d);
          }
          break;
        case P2pTest::kBw:
          if (initiator) {
            t.exchange(window, {}, d);
            t.exchange({}, std::span<const RecvOp>(&ackRecv, 1), d);
          } else {
            t.exchange({}, windowRecv, d);
            t.exchange(std::span<const SendOp>(&ackSend, 1), {}, d);
          }
          break;
        case P2pTest::kBibw: t.exchange(window, windowRecv, d); break;
      }
    }
  };

  bool receives(bool initiator) const { return o.test != P2pTest::kBw || !initiator; }

  void measure(Channel& ch, RankPair pair, uint64_t bytes, const P2pSink& sink,
               P2pSummary& summary) {
    const int me = comm.rank();
    const bool inPair = me == pair.a || me == pair.b;
    const bool initiator = me == pair.a;
    const int peer = initiator ? pair.b : pair.a;
    const int iters = o.iterations > 0 ? o.iterations : osuIterations(o.test, bytes);
    const int warm = o.warmup >= 0 ? o.warmup : osuWarmup(o.test, bytes);
    const int w = o.test == P2pTest::kLatency ? 1 : o.window;
    // Samples are divided as OSU divides its total: round trip / 2, or window / W.
    const double divisor = o.test == P2pTest::kLatency ? 2.0 : w;

    std::vector<double> mine(static_cast<size_t>(iters), 0.0);
    int64_t wrong = 0;
    std::optional<std::string> failure;
    auto* recv = static_cast<uint8_t*>(recvBuf.data());
    if (inPair && receives(initiator)) {
      // Poison with the complement of the expected bytes: a byte never written is counted.
      for (uint64_t i = 0; i < bytes; ++i) recv[i] = static_cast<uint8_t>(~patternByte(peer, i));
    }
    comm.barrier(deadline());
    if (inPair) {
      try {
        Loop loop{*ch.transport, o.test, initiator, {}, {}, {}, {}};
        loop.window.assign(static_cast<size_t>(w), SendOp{peer, sendBuf.data(), bytes});
        loop.windowRecv.assign(static_cast<size_t>(w), RecvOp{peer, recvBuf.data(), bytes});
        loop.ackSend = SendOp{peer, &ackOut, sizeof ackOut};
        loop.ackRecv = RecvOp{peer, &ackIn, sizeof ackIn};
        for (int i = 0; i < warm; ++i) loop.once(deadline());
        for (int i = 0; i < iters; ++i) {
          Deadline d = deadline();  // made outside the timer
          double t0 = nowSeconds();
          loop.once(d);
          mine[i] = (nowSeconds() - t0) / divisor;
        }
        if (receives(initiator)) {
          for (uint64_t i = 0; i < bytes; ++i) wrong += recv[i] != patternByte(peer, i);
        }
      } catch (const std::exception& e) {
        failure = encodeError(e);
      }
    }
    P2pPoint p;
    p.test = o.test;
    p.transport = ch.name;
    p.pair = pair;
    p.link = team.hosts().linkClass(pair.a, pair.b);
    p.bytes = bytes;
    p.window = w;
    if (auto agreed = agree(failure)) {
      // A failed exchange may leave messages in flight: the transport can't be trusted for
      // the next point, so the run stops here, on every rank, with the same error.
      p.status = ResultStatus::kFailed;
      p.message = agreed->substr(agreed->find('|') + 1);
      ++summary.failed;
      ++summary.points;
      if (comm.rank() == 0 && sink.onPoint) sink.onPoint(p);
      throwEncoded(*agreed);
    }
    auto all = comm.allgatherBytes(mine.data(), mine.size() * sizeof(double), deadline());
    auto wrongs = comm.allgather<int64_t>(wrong, deadline());
    ++summary.points;
    int64_t pairWrong = wrongs[pair.a] + wrongs[pair.b];
    summary.wrongTotal += pairWrong;
    if (comm.rank() != 0) return;
    const auto* samples = reinterpret_cast<const double*>(all.data());
    p.iterations = iters;
    p.samples.assign(samples + static_cast<size_t>(pair.a) * iters,
                     samples + static_cast<size_t>(pair.a + 1) * iters);
    p.rankSamples = p.samples;
    p.rankSamples.insert(p.rankSamples.end(), samples + static_cast<size_t>(pair.b) * iters,
                         samples + static_cast<size_t>(pair.b + 1) * iters);
    p.summary = summarize(p.samples);
    p.timeSeconds = pick(p.summary, o.statistic);
    if (p.test == P2pTest::kLatency) {
      p.bandwidthGBs = p.timeSeconds > 0 ? static_cast<double>(bytes) / p.timeSeconds / 1e9 : 0;
    } else {
      p.bandwidthGBs = p2pMetricForTime(p, p.timeSeconds);
    }
    p.wrong = pairWrong;
    if (sink.onPoint) sink.onPoint(p);
  }

  P2pSummary run(const P2pSink& sink) {
    P2pSummary summary;
    summary.transports = transports;
    bool stop = false;
    for (RankPair pair : o.pairs) {
      // Transports inside the size loop: every transport of a size is measured close in time,
      // so drifting machine noise hits them alike (as `run` does with variants).
      for (uint64_t bytes : sizes) {
        for (Channel& ch : channels) {
          measure(ch, pair, bytes, sink, summary);
          if (interruptAgreed(comm, deadline())) {
            stop = true;
            break;
          }
        }
        if (stop) break;
      }
      if (comm.rank() == 0 && sink.onPairEnd) sink.onPairEnd(pair);
      if (stop) break;
    }
    summary.interrupted = stop;
    return summary;
  }

  Team& team;
  Communicator& comm;
  const P2pOptions o;
  std::vector<Channel> channels;
  std::vector<std::string> transports;
  std::vector<std::pair<std::string, std::string>> skipped;
  std::vector<uint64_t> sizes;
  SharedHostBuffer sendBuf, recvBuf;  // shareable, as the collectives' buffers
  uint32_t ackOut = 0, ackIn = 0;
};

P2pBench::P2pBench(Team& team, const P2pOptions& o) : impl_(std::make_unique<Impl>(team, o)) {
  impl_->setUp();
}

P2pBench::~P2pBench() = default;

const std::vector<std::string>& P2pBench::transports() const { return impl_->transports; }

const std::vector<std::pair<std::string, std::string>>& P2pBench::skipped() const {
  return impl_->skipped;
}

P2pSummary P2pBench::run(const P2pSink& sink) { return impl_->run(sink); }

P2pSummary runP2p(Team& team, const P2pOptions& o, const P2pSink& sink) {
  P2pBench bench(team, o);
  if (team.rank() == 0 && sink.onSkipped) {
    for (const auto& [name, why] : bench.skipped()) sink.onSkipped(name, why);
  }
  return bench.run(sink);
}

}  // namespace cb
