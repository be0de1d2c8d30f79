// The "mpi" variant of every collective, for every data type (half and bfloat16 included), every
// op valid for it, out of place and in place, counts 0, 1, 7 and 1000, against results computed
// on the host with cb::reduce. Inputs are small integers so every reduction order is exact and
// the comparison is bit for bit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "MpiTest.h"
#include "collectives/Registry.h"
#include "core/Collective.h"
#include "core/Error.h"
#include "core/Reduce.h"

namespace cb::test {
namespace {

const Registry& mpiRegistry() {
  static const Registry r = [] {
    Registry reg;
    registerMpiVariants(reg);
    return reg;
  }();
  return r;
}

const VariantInfo& mpiVariant(Collective c) {
  const VariantInfo* v = mpiRegistry().find(c, "mpi");
  if (!v) throw InternalError(fmt::format("no mpi variant for {}", collectiveName(c)));
  return *v;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool isBitwise(RedOp op) { return op == RedOp::kBand || op == RedOp::kBor || op == RedOp::kBxor; }

// Element i of rank r's send buffer, small enough that n-rank sums and products stay exact.
void writeElement(const CollArgs& a, int rank, size_t i, std::byte* dst) {
  uint64_t h = mix(static_cast<uint64_t>(rank) * 1000003u + i);
  bool reduction = hasReduction(a.coll);
  int64_t v;
  if (!reduction) {
    v = static_cast<int64_t>((static_cast<uint64_t>(rank) * 37 + i * 5 + 1) % 127);
  } else if (a.op == RedOp::kProd) {
    v = static_cast<int64_t>(1 + h % 3);
    if (isSigned(a.dtype) && (h >> 20) % 5 == 0) v = -v;
  } else {
    v = static_cast<int64_t>(h % 21);
    if (isSigned(a.dtype)) v -= 10;
  }
  dispatchDataType(a.dtype, [&]<class T>() {
    T x;
    if constexpr (std::is_integral_v<T>) {
      x = reduction && isBitwise(a.op) ? static_cast<T>(h) : static_cast<T>(v);
    } else {
      x = Arith<T>::store(static_cast<typename Arith<T>::Type>(v));
    }
    std::memcpy(dst, &x, sizeof(T));
  });
}

std::vector<std::byte> sendData(const CollArgs& a, int rank, int n) {
  size_t es = dataTypeSize(a.dtype);
  std::vector<std::byte> out(sendCount(a, n) * es);
  for (size_t i = 0; i < sendCount(a, n); ++i) writeElement(a, rank, i, out.data() + i * es);
  return out;
}

// The elements [first, first + count) of every rank's send buffer, reduced in rank order.
std::vector<std::byte> reducedBlock(const CollArgs& a, int n, size_t first, size_t count) {
  size_t es = dataTypeSize(a.dtype);
  std::vector<std::byte> acc;
  for (int r = 0; r < n; ++r) {
    auto data = sendData(a, r, n);
    std::vector<std::byte> block(data.begin() + first * es, data.begin() + (first + count) * es);
    if (r == 0) {
      acc = block;
    } else {
      reduce(a.dtype, a.op, acc.data(), acc.data(), block.data(), count);
    }
  }
  if (a.op == RedOp::kAvg) scaleForAvg(a.dtype, acc.data(), count, n);
  return acc;
}

// What rank `rank`'s receive buffer must hold afterwards.
std::vector<std::byte> expected(const CollArgs& a, int rank, int n) {
  size_t es = dataTypeSize(a.dtype);
  size_t c = a.count;
  std::vector<std::byte> out(recvCount(a, n) * es);
  switch (a.coll) {
    case Collective::kAllReduce:
    case Collective::kReduce: return reducedBlock(a, n, 0, c);
    case Collective::kReduceScatter: return reducedBlock(a, n, rank * c, c);
    case Collective::kAllGather:
      for (int r = 0; r < n; ++r) {
        auto d = sendData(a, r, n);
        std::copy(d.begin(), d.end(), out.begin() + r * c * es);
      }
      return out;
    case Collective::kBroadcast: return sendData(a, a.root, n);
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r) {
        auto d = sendData(a, r, n);  // rank r's block for us is its block number `rank`
        std::copy(d.begin() + rank * c * es, d.begin() + (rank + 1) * c * es,
                  out.begin() + r * c * es);
      }
      return out;
    case Collective::kSendRecv: return sendData(a, (rank - 1 + n) % n, n);
  }
  return out;
}

std::string firstDifference(const std::vector<std::byte>& got, const std::vector<std::byte>& want,
                            size_t es) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      std::string g, w;
      size_t e = i / es;
      for (size_t b = 0; b < es; ++b) {
        g += fmt::format("{:02x}", static_cast<unsigned>(got[e * es + b]));
        w += fmt::format("{:02x}", static_cast<unsigned>(want[e * es + b]));
      }
      return fmt::format("element {}: got bytes {}, want {}", e, g, w);
    }
  }
  return "";
}

// Runs one call of the mpi variant on this rank and returns a description of what is wrong
// ("" if nothing). Every rank calls it with the same arguments.
std::string runCase(Team& team, const CollArgs& a, bool inPlace) {
  Communicator& comm = team.comm();
  int n = comm.size();
  int rank = comm.rank();
  size_t es = dataTypeSize(a.dtype);
  const VariantInfo& v = mpiVariant(a.coll);
  if (auto why = v.unsupported(team, a, {})) return "unexpectedly unsupported: " + *why;
  auto prepared = v.prepare(team, a, {});

  auto input = sendData(a, rank, n);
  size_t sendBytes = sendCount(a, n) * es;
  size_t recvBytes = recvCount(a, n) * es;
  std::vector<std::byte> sendBuf, recvBuf;
  std::byte* send;
  std::byte* recv;
  if (inPlace) {
    // One buffer, aliased as core/Collective.h lays it out.
    recvBuf.assign(std::max(sendBytes, recvBytes), std::byte{0xa5});
    send = recvBuf.data() + inPlaceSendOffset(a, rank) * es;
    recv = recvBuf.data() + inPlaceRecvOffset(a, rank) * es;
  } else {
    sendBuf.resize(sendBytes);
    recvBuf.assign(recvBytes, std::byte{0xa5});
    send = sendBuf.data();
    recv = recvBuf.data();
  }
  if (sendBytes) std::memcpy(send, input.data(), sendBytes);
  prepared->run(send, recv, Deadline::after(60));

  if (!inPlace && sendBytes && std::memcmp(sendBuf.data(), input.data(), sendBytes) != 0) {
    return "the send buffer was modified";
  }
  if (a.coll == Collective::kReduce && rank != a.root) return "";  // only the root has a result
  std::vector<std::byte> got(recv, recv + recvBytes);
  return firstDifference(got, expected(a, rank, n), es);
}

struct Param {
  Collective coll;
  DataType dtype;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << collectiveName(p.coll) << "/" << dataTypeName(p.dtype);
}

std::string paramName(const ::testing::TestParamInfo<Param>& p) {
  return fmt::format("{}_{}", collectiveName(p.param.coll), dataTypeName(p.param.dtype));
}

std::vector<Param> allParams() {
  std::vector<Param> out;
  for (Collective c : allCollectives()) {
    for (DataType t : allDataTypes()) out.push_back({c, t});
  }
  return out;
}

class MpiBackendTest : public MpiTest, public ::testing::WithParamInterface<Param> {};

TEST_P(MpiBackendTest, MatchesHostReference) {
  const Param p = GetParam();
  std::vector<RedOp> ops{RedOp::kSum};
  if (hasReduction(p.coll)) {
    ops.clear();
    for (int o = 0; o <= static_cast<int>(RedOp::kBxor); ++o) {
      if (redOpValidFor(static_cast<RedOp>(o), p.dtype)) ops.push_back(static_cast<RedOp>(o));
    }
  }
  std::vector<int> roots{0};
  if (hasRoot(p.coll)) roots.push_back(size() - 1);
  int cases = 0;
  for (RedOp op : ops) {
    for (int root : roots) {
      // Aliased send == recv also works for alltoall and sendrecv (MPI_IN_PLACE and
      // MPI_Sendrecv_replace), although the engine never asks for it.
      for (bool inPlace : {false, true}) {
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
          CollArgs a{p.coll, p.dtype, op, root, count};
          SCOPED_TRACE(fmt::format("{} {} op={} root={} {} count={}", collectiveName(p.coll),
                                   dataTypeName(p.dtype), redOpName(op), root,
                                   inPlace ? "in-place" : "out-of-place", count));
          EXPECT_EQ(runCase(team(), a, inPlace), "");
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

INSTANTIATE_TEST_SUITE_P(AllCollectivesAllTypes, MpiBackendTest, ::testing::ValuesIn(allParams()),
                         paramName);

class MpiBackendInfoTest : public MpiTest {};

TEST_F(MpiBackendInfoTest, OneMpiVariantPerCollective) {
  for (Collective c : allCollectives()) {
    auto vs = mpiRegistry().forCollective(c);
    ASSERT_EQ(vs.size(), 1u) << collectiveName(c);
    EXPECT_EQ(vs[0]->name, "mpi");
    EXPECT_EQ(vs[0]->backend, "mpi");
    EXPECT_NE(vs[0]->description.find("MPI_"), std::string::npos) << vs[0]->description;
    EXPECT_EQ(vs[0]->memory, MemoryKind::kHost);
  }
  EXPECT_NE(mpiVariant(Collective::kReduceScatter).description.find("MPI_Reduce_scatter_block"),
            std::string::npos);
  EXPECT_NE(mpiVariant(Collective::kSendRecv).description.find("MPI_Sendrecv"), std::string::npos);
}

TEST_F(MpiBackendInfoTest, UnsupportedReasons) {
  FakeLocalCommunicator local;
  CollArgs a{Collective::kAllReduce, DataType::kFloat, RedOp::kSum, 0, 16};
  const auto& v = mpiVariant(Collective::kAllReduce);
  Team localTeam(local, HostMap::fromHosts({hostName()}));
  auto why = v.unsupported(localTeam, a, {});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("mpirun"), std::string::npos) << *why;
  EXPECT_FALSE(v.unsupported(team(), a, {}).has_value());

  CollArgs band = a;
  band.op = RedOp::kBand;
  EXPECT_TRUE(v.unsupported(team(), band, {}).has_value());
  EXPECT_THROW(v.prepare(team(), band, {}), UsageError);  // local check, no MPI call made
  band.dtype = DataType::kUint32;
  EXPECT_FALSE(v.unsupported(team(), band, {}).has_value());

  CollArgs huge = a;
  huge.count = static_cast<size_t>(INT_MAX) + 1;
  EXPECT_TRUE(v.unsupported(team(), huge, {}).has_value());

  // Ops mean nothing to allgather: a bitwise op on float is not a reason there.
  CollArgs ag{Collective::kAllGather, DataType::kFloat, RedOp::kBxor, 0, 4};
  EXPECT_FALSE(mpiVariant(Collective::kAllGather).unsupported(team(), ag, {}).has_value());

  CollArgs bcast{Collective::kBroadcast, DataType::kFloat, RedOp::kSum, size(), 4};
  EXPECT_TRUE(mpiVariant(Collective::kBroadcast).unsupported(team(), bcast, {}).has_value());
}

TEST_F(MpiBackendInfoTest, PreparedCallRunsRepeatedly) {
  // One prepared collective (and its user MPI_Op for half) serves many calls.
  CollArgs a{Collective::kAllReduce, DataType::kHalf, RedOp::kAvg, 0, 7};
  auto prepared = mpiVariant(a.coll).prepare(team(), a, {});
  auto want = expected(a, rank(), size());
  for (int it = 0; it < 20; ++it) {
    auto buf = sendData(a, rank(), size());
    prepared->run(buf.data(), buf.data(), soon());
    EXPECT_EQ(firstDifference(buf, want, 2), "") << "iteration " << it;
  }
}

}  // namespace
}  // namespace cb::test
