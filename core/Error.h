// Errors with context. Set-up code throws; the CLI maps the kind to an exit code and prints one
// line (never a stack trace). Library code never calls exit().
#pragma once

#include <stdexcept>
#include <string>

namespace cb {

enum class ErrorKind {
  kUsage,        // bad flags or arguments
  kEnvironment,  // something this machine lacks (no device, no launcher, ...)
  kMpi,
  kCuda,
  kNccl,
  kUcx,
  kTimeout,       // a blocking wait passed its deadline
  kDatabase,      // unwritable, corrupt or foreign database file
  kVerification,  // a collective produced wrong data
  kInterrupted,   // SIGINT/SIGTERM
  kInternal,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

#define CB_DEFINE_ERROR(Name, Kind)                                          \
  class Name : public Error {                                                \
   public:                                                                   \
    explicit Name(const std::string& what) : Error(ErrorKind::Kind, what) {} \
  };
CB_DEFINE_ERROR(UsageError, kUsage)
CB_DEFINE_ERROR(EnvironmentError, kEnvironment)
CB_DEFINE_ERROR(MpiError, kMpi)
CB_DEFINE_ERROR(CudaError, kCuda)
CB_DEFINE_ERROR(NcclError, kNccl)
CB_DEFINE_ERROR(UcxError, kUcx)
CB_DEFINE_ERROR(TimeoutError, kTimeout)
CB_DEFINE_ERROR(DatabaseError, kDatabase)
CB_DEFINE_ERROR(VerificationError, kVerification)
CB_DEFINE_ERROR(InterruptedError, kInterrupted)
CB_DEFINE_ERROR(InternalError, kInternal)
#undef CB_DEFINE_ERROR

// 128 + the signal that interrupted the process (130 SIGINT, 143 SIGTERM), as shells and Slurm
// read an exit code; 130 when no signal was received (core/Interrupt.cpp).
int interruptExitCode();

// Exit codes shared by every subcommand: 0 ok, 1 regression or verification failure,
// 2 usage or environment error, 128 + N interrupted by signal N (130 SIGINT, 143 SIGTERM).
inline int exitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kVerification: return 1;
    case ErrorKind::kInterrupted: return interruptExitCode();
    default: return 2;
  }
}

}  // namespace cb
