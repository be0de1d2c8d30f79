// Error mapping for the CUDA runtime and NCCL: every call goes through checkCuda/checkNccl, which
// throw CudaError/NcclError with the call's name, the library's own text and the symbolic code,
// on one line, e.g. "cudaMalloc: out of memory (cudaErrorMemoryAllocation, 2)".
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <string_view>
#include <utility>

#include "core/Error.h"

namespace cb {

// An NcclError that keeps NCCL's result code and last-error text, so callers can tell a refused
// algorithm/protocol (isNcclRefusal) from a failure. The CLI sees a plain NcclError.
class NcclCallError : public NcclError {
 public:
  NcclCallError(const std::string& what, ncclResult_t code, std::string lastError)
      : NcclError(what), code_(code), lastError_(std::move(lastError)) {}
  ncclResult_t code() const { return code_; }
  const std::string& lastError() const { return lastError_; }

 private:
  ncclResult_t code_;
  std::string lastError_;
};

// "<what>: <cudaGetErrorString> (<cudaGetErrorName>, <code>)".
std::string cudaErrorMessage(cudaError_t e, std::string_view what);
// Throws CudaError(cudaErrorMessage(e, what)) unless e == cudaSuccess. Clears the runtime's
// last-error slot first, so a reported error does not resurface in a later check.
void checkCuda(cudaError_t e, const char* what);

// "ncclInvalidUsage" for ncclInvalidUsage, ... ("ncclResult(<n>)" for unknown codes).
std::string_view ncclResultName(ncclResult_t r);
// "<what>: <ncclGetErrorString> (<name>, <code>)[: <lastError>]", newlines folded to spaces.
std::string ncclErrorMessage(ncclResult_t r, std::string_view what, std::string_view lastError);
// Throws NcclCallError unless r == ncclSuccess. ncclInProgress is an error here too: callers of
// non-blocking communicators wait it out with NcclComm::complete() instead. `comm` (may be null)
// supplies ncclGetLastError's text.
void checkNccl(ncclResult_t r, const char* what, ncclComm_t comm = nullptr);

// True when NCCL refused a forced algorithm/protocol rather than failing: invalid usage or
// argument, or the internal error NCCL returns for "no algorithm/protocol available" once the
// NCCL_ALGO/NCCL_PROTO variables it consults at call time are gone (we restore them after init),
// and only when NCCL's last error names the algorithm/protocol or those variables. A bare
// invalid usage is not a refusal: it may be a real bug, and must not hide as "unsupported".
bool isNcclRefusal(ncclResult_t r, std::string_view lastError);

}  // namespace cb
