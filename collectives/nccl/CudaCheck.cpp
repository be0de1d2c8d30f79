// Error mapping for the CUDA runtime and NCCL (see CudaCheck.h).
#include "collectives/nccl/CudaCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/Error.h"

namespace cb {

std::string cudaErrorMessage(cudaError_t e, std::string_view what) {
  return fmt::format("{}: {} ({}, {})", what, cudaGetErrorString(e), cudaGetErrorName(e),
                     static_cast<int>(e));
}

void checkCuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // reset the non-sticky error state
  throw CudaError(cudaErrorMessage(e, what));
}

std::string_view ncclResultName(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclResult(?)";
  }
}

std::string ncclErrorMessage(ncclResult_t r, std::string_view what, std::string_view lastError) {
  std::string msg = fmt::format("{}: {} ({}, {})", what, ncclGetErrorString(r), ncclResultName(r),
                                static_cast<int>(r));
  std::string last(lastError);
  std::replace(last.begin(), last.end(), '\n', ' ');
  while (!last.empty() && last.back() == ' ') last.pop_back();
  if (!last.empty()) msg += fmt::format(": {}", last);
  return msg;
}

void checkNccl(ncclResult_t r, const char* what, ncclComm_t comm) {
  if (r == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);
  std::string lastText = last ? last : "";
  throw NcclCallError(ncclErrorMessage(r, what, lastText), r, lastText);
}

bool isNcclRefusal(ncclResult_t r, std::string_view lastError) {
  if (r != ncclInvalidUsage && r != ncclInvalidArgument && r != ncclInternalError) return false;
  // Only NCCL's own words about the forced settings make it a refusal: any other invalid usage
  // on a forced column is a bug of ours or NCCL's and must show as "failed".
  std::string lower(lastError);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view word : {"algorithm/protocol", "nccl_algo", "nccl_proto"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace cb
