// The proxy modes, one row each (ProxyModeInfo in Proxy.h). The first four rows are
// ProxyMode::kDp, kTp, kPp and kHybrid, in this order; a new mode is a new row here, found by its
// name (`collbench proxy NAME`).
#include <fmt/format.h>

#include "training_proxies/Proxy.h"

namespace cb::proxy {
namespace {

std::string dpForm(const ProxyOptions& o, const Layout&) {
  return fmt::format("{}{}", dpKindName(o.dpKind),
                     o.dpKind != DpKind::kParameterServer && !o.overlap ? "-nooverlap" : "");
}

std::string tpForm(const ProxyOptions& o, const Layout&) {
  return std::string(tpKindName(o.tpKind));
}

std::string ppForm(const ProxyOptions& o, const Layout& l) {
  return fmt::format("{}-m{}", ppScheduleName(o.schedule), microBatchesFor(o, l));
}

std::string hybridForm(const ProxyOptions&, const Layout& l) {
  return fmt::format("dp{}xtp{}xpp{}", l.dp, l.tp, l.pp);
}

}  // namespace

const std::vector<ProxyModeInfo>& proxyModes() {
  static const std::vector<ProxyModeInfo> kModes{
      {"dp", "data parallel", &Layout::dp, dpForm},
      {"tp", "tensor parallel", &Layout::tp, tpForm},
      {"pp", "pipeline", &Layout::pp, ppForm},
      {"hybrid", "--dp/--tp/--pp", nullptr, hybridForm},
  };
  return kModes;
}

}  // namespace cb::proxy
