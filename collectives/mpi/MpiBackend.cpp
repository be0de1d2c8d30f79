// The vendor MPI backend: one variant named "mpi" per collective, each one call into the MPI
// library (MPI_Allreduce, MPI_Allgather, ...), so collbench measures what the library's own
// algorithm selection gives, like the OSU and IMB collective benchmarks.
//
// - In place: the engine aliases the buffers as core/Collective.h lays them out; we detect the
//   aliasing and pass MPI_IN_PLACE where MPI requires it. MPI_Reduce_scatter_block in place
//   leaves this rank's block at the start of the buffer, so it is then moved to rank * count.
// - half and bfloat16 have no MPI type in MPI 3.1: they travel as MPI_UINT16_T and reduce with
//   a commutative user MPI_Op running collbench's own functors (created once per prepared call).
// - avg is MPI_SUM followed by a division by n on every rank that holds the result; the
//   division is part of the timed call, as it is inside ncclAvg.
// - The MPI calls block, as in OSU and IMB (a non-blocking collective would run another library's
//   algorithms), so run() can't honour its Deadline inside the call: the call is marked on the
//   rank board as blocking, whose watchdog ends the process with a line naming the ranks that
//   never arrived once the deadline passes (core/RankBoard.h). A signal needs nothing here: the
//   ranks stop at agreed points, so every rank completes the call (a rank still inside it when
//   the signal's grace has passed is ended by the same watchdog, core/Interrupt.h).
#include <fmt/format.h>
#include <climits>
#include <cstring>

#include "collectives/Registry.h"
#include "collectives/mpi/MpiPoll.h"
#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"
#include "core/RankBoard.h"
#include "core/Reduce.h"

namespace cb {
namespace {

MPI_Datatype mpiType(DataType t) {
  switch (t) {
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kUint8: return MPI_UINT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kUint32: return MPI_UINT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUint64: return MPI_UINT64_T;
    case DataType::kHalf:
    case DataType::kBFloat16: return MPI_UINT16_T;  // bits only; reduced by a user op
    case DataType::kFloat: return MPI_FLOAT;
    case DataType::kDouble: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

bool needsUserOp(DataType t) { return t == DataType::kHalf || t == DataType::kBFloat16; }

MPI_Op builtinOp(RedOp op) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return MPI_SUM;
    case RedOp::kProd: return MPI_PROD;
    case RedOp::kMax: return MPI_MAX;
    case RedOp::kMin: return MPI_MIN;
    case RedOp::kBand: return MPI_BAND;
    case RedOp::kBor: return MPI_BOR;
    case RedOp::kBxor: return MPI_BXOR;
  }
  return MPI_SUM;
}

// MPI's user-function contract: inout[i] = in[i] op inout[i].
template <class T, template <class> class Fn>
void userReduce(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  Fn<T> fn;
  for (int i = 0; i < *len; ++i) b[i] = fn(a[i], b[i]);
}

template <class T>
MPI_User_function* userFunction(RedOp op) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return &userReduce<T, SumFn>;
    case RedOp::kProd: return &userReduce<T, ProdFn>;
    case RedOp::kMax: return &userReduce<T, MaxFn>;
    case RedOp::kMin: return &userReduce<T, MinFn>;
    default: break;
  }
  throw UsageError(fmt::format("{} is not defined for floating-point types", redOpName(op)));
}

// The MPI_Op of one prepared collective: a builtin op, or a user op freed on destruction.
class MpiOp {
 public:
  MpiOp(DataType t, RedOp op) {
    if (!needsUserOp(t)) {
      op_ = builtinOp(op);
      return;
    }
    MPI_User_function* fn =
        t == DataType::kHalf ? userFunction<Half>(op) : userFunction<BFloat16>(op);
    checkMpi(MPI_Op_create(fn, /*commute=*/1, &op_), "MPI_Op_create");
    owned_ = true;
  }
  ~MpiOp() {
    if (owned_ && !mpi_detail::mpiFinalized()) MPI_Op_free(&op_);
  }
  MpiOp(const MpiOp&) = delete;
  MpiOp& operator=(const MpiOp&) = delete;
  MPI_Op get() const { return op_; }

 private:
  MPI_Op op_ = MPI_OP_NULL;
  bool owned_ = false;
};

// The rank board's name of each call, indexed by Collective (string literals: BoardWait copies a
// name only when it changes).
constexpr const char* kCallNames[] = {"MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block",
                                      "MPI_Bcast",     "MPI_Reduce",    "MPI_Alltoall",
                                      "MPI_Sendrecv"};

class MpiCollective final : public PreparedCollective {
 public:
  MpiCollective(Communicator& comm, const CollArgs& args)
      : comm_(mpiCommOf(comm)),
        args_(args),
        rank_(comm.rank()),
        size_(comm.size()),
        count_(static_cast<int>(args.count)),
        bytes_(args.count * dataTypeSize(args.dtype)),
        type_(mpiType(args.dtype)),
        worldRanks_(worldRanksOf(comm_)) {
    if (hasReduction(args.coll)) op_ = std::make_unique<MpiOp>(args.dtype, args.op);
  }

  void run(const void* send, void* recv, Deadline d) override {
    BoardWait mark(kCallNames[static_cast<size_t>(args_.coll)], worldRanks_, d, /*blocking=*/true);
    auto* out = static_cast<char*>(recv);
    auto* in = const_cast<char*>(static_cast<const char*>(send));  // MPI reads, never writes
    switch (args_.coll) {
      case Collective::kAllReduce:
        checkMpi(
            MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, count_, type_, op_->get(), comm_),
            "MPI_Allreduce");
        finishAvg(out);
        break;
      case Collective::kAllGather: {
        bool inPlace = in == out + rank_ * bytes_;
        checkMpi(
            MPI_Allgather(inPlace ? MPI_IN_PLACE : in, count_, type_, out, count_, type_, comm_),
            "MPI_Allgather");
        break;
      }
      case Collective::kReduceScatter:
        if (out == in + rank_ * bytes_) {
          // In place the input is the whole send buffer and MPI leaves the result at its start.
          checkMpi(MPI_Reduce_scatter_block(MPI_IN_PLACE, in, count_, type_, op_->get(), comm_),
                   "MPI_Reduce_scatter_block");
          if (out != in && bytes_) std::memcpy(out, in, bytes_);
        } else {
          checkMpi(MPI_Reduce_scatter_block(in, out, count_, type_, op_->get(), comm_),
                   "MPI_Reduce_scatter_block");
        }
        finishAvg(out);
        break;
      case Collective::kBroadcast:
        if (rank_ == args_.root) {
          checkMpi(MPI_Bcast(in, count_, type_, args_.root, comm_), "MPI_Bcast");
          if (out != in && bytes_) std::memcpy(out, in, bytes_);
        } else {
          checkMpi(MPI_Bcast(out, count_, type_, args_.root, comm_), "MPI_Bcast");
        }
        break;
      case Collective::kReduce:
        if (rank_ == args_.root) {
          checkMpi(MPI_Reduce(in == out ? MPI_IN_PLACE : in, out, count_, type_, op_->get(),
                              args_.root, comm_),
                   "MPI_Reduce");
          finishAvg(out);
        } else {
          // recvbuf is not significant off the root; in place it aliases sendbuf, so pass none.
          checkMpi(MPI_Reduce(in, nullptr, count_, type_, op_->get(), args_.root, comm_),
                   "MPI_Reduce");
        }
        break;
      case Collective::kAllToAll:
        checkMpi(
            MPI_Alltoall(in == out ? MPI_IN_PLACE : in, count_, type_, out, count_, type_, comm_),
            "MPI_Alltoall");
        break;
      case Collective::kSendRecv: {
        int right = (rank_ + 1) % size_;
        int left = (rank_ - 1 + size_) % size_;
        if (in == out) {
          checkMpi(MPI_Sendrecv_replace(out, count_, type_, right, kMpiSendRecvTag, left,
                                        kMpiSendRecvTag, comm_, MPI_STATUS_IGNORE),
                   "MPI_Sendrecv_replace");
        } else {
          checkMpi(MPI_Sendrecv(in, count_, type_, right, kMpiSendRecvTag, out, count_, type_, left,
                                kMpiSendRecvTag, comm_, MPI_STATUS_IGNORE),
                   "MPI_Sendrecv");
        }
        break;
      }
    }
  }

 private:
  void finishAvg(void* result) {
    if (args_.op == RedOp::kAvg) scaleForAvg(args_.dtype, result, args_.count, size_);
  }

  MPI_Comm comm_;
  CollArgs args_;
  int rank_;
  int size_;
  int count_;
  size_t bytes_;
  MPI_Datatype type_;
  std::vector<int> worldRanks_;
  std::unique_ptr<MpiOp> op_;
};

struct CollectiveDoc {
  Collective coll;
  const char* description;
};

constexpr CollectiveDoc kDocs[] = {
    {Collective::kAllReduce,
     "MPI_Allreduce (the MPI library's algorithm; avg = sum / n; half, bf16 via user MPI_Op)"},
    {Collective::kAllGather, "MPI_Allgather (the MPI library's algorithm)"},
    {Collective::kReduceScatter,
     "MPI_Reduce_scatter_block (the MPI library's algorithm; avg = sum / n)"},
    {Collective::kBroadcast, "MPI_Bcast (the MPI library's algorithm)"},
    {Collective::kReduce, "MPI_Reduce (the MPI library's algorithm; avg = sum / n on the root)"},
    {Collective::kAllToAll, "MPI_Alltoall (the MPI library's algorithm)"},
    {Collective::kSendRecv, "ring shift with MPI_Sendrecv: send to rank+1, receive from rank-1"},
};

std::optional<std::string> mpiUnsupported(const Communicator& comm, const CollArgs& args,
                                          const VariantOptions&) {
  if (comm.worldKind() != WorldKind::kMpi) return "needs an MPI world (run under mpirun)";
  if (args.count > static_cast<size_t>(INT_MAX)) {
    return fmt::format("count {} exceeds MPI's int count limit", args.count);
  }
  if (hasReduction(args.coll) && !redOpValidFor(args.op, args.dtype)) {
    return fmt::format("{} is not defined for {}", redOpName(args.op), dataTypeName(args.dtype));
  }
  if (hasRoot(args.coll) && (args.root < 0 || args.root >= comm.size())) {
    return fmt::format("root {} outside ranks 0..{}", args.root, comm.size() - 1);
  }
  return std::nullopt;
}

}  // namespace

void registerMpiVariants(Registry& r) {
  for (const auto& doc : kDocs) {
    VariantInfo v;
    v.coll = doc.coll;
    v.name = "mpi";
    v.backend = "mpi";
    v.description = doc.description;
    v.memory = MemoryKind::kHost;
    v.unsupported = [](Team& team, const CollArgs& args, const VariantOptions& opts) {
      return mpiUnsupported(team.comm(), args, opts);
    };
    v.prepare = [](Team& team, const CollArgs& args, const VariantOptions& opts) {
      if (auto why = mpiUnsupported(team.comm(), args, opts)) {
        throw UsageError(fmt::format("mpi {}: {}", collectiveName(args.coll), *why));
      }
      return std::unique_ptr<PreparedCollective>(new MpiCollective(team.comm(), args));
    };
    r.add(std::move(v));
  }
}

}  // namespace cb
