#include "collectives/Versions.h"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include "collectives/mpi/MpiWorld.h"

#if defined(COLLBENCH_HAVE_CUDA) && __has_include(<nccl.h>) && __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#include <nccl.h>
#define CB_VERSIONS_HAVE_GPU 1
#endif

namespace cb {

LibraryVersions libraryVersions() {
  LibraryVersions v;
  v.mpi = mpiLibraryVersion();
  v.ucx = ucp_get_version_string();
#if defined(CB_VERSIONS_HAVE_GPU)
  // Compile-time versions: the runtime ones need a driver, which may be absent.
  v.cuda = fmt::format("{}.{}", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
  v.nccl = fmt::format("{}.{}.{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
#endif
  return v;
}

}  // namespace cb
