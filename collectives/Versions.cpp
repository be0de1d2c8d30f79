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

std::string ncclVersionText(int code) {
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9, X * 1000 + Y * 100 + Z before.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

LibraryVersions libraryVersions() {
  LibraryVersions v;
  v.mpi = mpiLibraryVersion();
  v.ucx = ucp_get_version_string();
#if defined(CB_VERSIONS_HAVE_GPU)
  // The libraries actually loaded: neither call needs a driver (the headers' versions may differ
  // from the shared libraries found at run time).
  int cuda = 0;
  if (cudaRuntimeGetVersion(&cuda) != cudaSuccess) cuda = CUDART_VERSION;
  v.cuda = fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10);
  int nccl = 0;
  v.nccl = ncclGetVersion(&nccl) == ncclSuccess
               ? ncclVersionText(nccl)
               : fmt::format("{}.{}.{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
#endif
  return v;
}

}  // namespace cb
