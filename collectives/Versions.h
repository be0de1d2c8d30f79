// Versions of the communication libraries in this build, for run headers and fingerprints.
#pragma once

#include <string>

namespace cb {

struct LibraryVersions {
  std::string mpi;   // MPI_Get_library_version, first line
  std::string ucx;   // ucp_get_version_string
  std::string cuda;  // cudaRuntimeGetVersion; "" when the GPU path is not built
  std::string nccl;  // ncclGetVersion (the library loaded); "" when the GPU path is not built
};

LibraryVersions libraryVersions();
// "2.28.9" from ncclGetVersion's code (22809; before NCCL 2.9 the code was X*1000+Y*100+Z).
std::string ncclVersionText(int code);

}  // namespace cb
