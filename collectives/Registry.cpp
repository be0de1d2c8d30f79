#include "collectives/Registry.h"

#include <fmt/format.h>

#include "core/Error.h"

namespace cb {

const Registry& Registry::builtin() {
  static const Registry registry = [] {
    Registry r;
    registerMpiVariants(r);
    registerScheduleVariants(r);
#if defined(COLLBENCH_HAVE_CUDA)
    registerNcclVariants(r);
#endif
    return r;
  }();
  return registry;
}

void Registry::add(VariantInfo info) {
  if (find(info.coll, info.name)) {
    throw InternalError(
        fmt::format("variant '{}' registered twice for {}", info.name, collectiveName(info.coll)));
  }
  variants_.push_back(std::move(info));
}

std::vector<const VariantInfo*> Registry::forCollective(Collective c) const {
  std::vector<const VariantInfo*> out;
  for (const auto& v : variants_) {
    if (v.coll == c) out.push_back(&v);
  }
  return out;
}

const VariantInfo* Registry::find(Collective c, std::string_view name) const {
  for (const auto& v : variants_) {
    if (v.coll == c && v.name == name) return &v;
  }
  return nullptr;
}

const VariantInfo* variantOnTransport(const VariantInfo* v, std::string_view transport) {
#if defined(COLLBENCH_HAVE_CUDA)
  if (v->backend == "hand" && transport == "cuda") {
    if (const auto* d = deviceScheduleVariant(v->coll, v->name)) return d;
  }
#else
  (void)transport;
#endif
  return v;
}

#if !defined(COLLBENCH_HAVE_CUDA)
int visibleGpuCount() { return 0; }
#endif

}  // namespace cb
