#include "collectives/transport/LocalTransport.h"

#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"

namespace cb {
namespace {

constexpr int kScheduleTag = -1;  // tag of Transport::exchange traffic; user tags are >= 0

class LocalTransport final : public Transport {
 public:
  LocalTransport(Communicator& comm, LocalExchange& exchange) : comm_(comm), exchange_(exchange) {}
  std::string_view name() const override { return "local"; }
  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  void exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, Deadline d) override {
    exchange_.exchangeTagged(sends, recvs, kScheduleTag, d);
  }

 private:
  Communicator& comm_;
  LocalExchange& exchange_;
};

}  // namespace

std::unique_ptr<Transport> makeLocalTransport(Communicator& comm) {
  auto* local = dynamic_cast<LocalExchange*>(&comm);
  if (!local) throw UsageError("the local transport needs a local (threads) world");
  return std::make_unique<LocalTransport>(comm, *local);
}

}  // namespace cb
