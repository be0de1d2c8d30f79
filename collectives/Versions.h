// Versions of the communication libraries in this build, for run headers and fingerprints.
#pragma once

#include <string>

namespace cb {

struct LibraryVersions {
  std::string mpi;   // MPI_Get_library_version, first line
  std::string ucx;   // ucp_get_version_string
  std::string cuda;  // "" when the GPU path is not built
  std::string nccl;  // "" when the GPU path is not built
};

LibraryVersions libraryVersions();

}  // namespace cb
