// GPU error mapping and pure helpers: CUDA/NCCL messages for given codes, NCCL refusals, the
// no-device wording, dtype/op mapping to NCCL, -z/-G/-R validation, graph timing, local ranks.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/GpuOptions.h"
#include "collectives/nccl/NcclVariants.h"
#include "core/Error.h"

namespace cb {
namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The E that `call` throws; a test failure, and none, when it throws nothing.
template <class E, class Call>
std::optional<E> thrown(Call call) {
  try {
    call();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "nothing thrown";
  return std::nullopt;
}

TEST(GpuErrors, CheckCudaNamesTheCallAndTheCode) {
  EXPECT_NO_THROW(checkCuda(cudaSuccess, "cudaMalloc"));
  auto driver =
      thrown<CudaError>([] { checkCuda(cudaErrorInsufficientDriver, "cudaGetDeviceCount"); });
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->kind(), ErrorKind::kCuda);
  EXPECT_STREQ(driver->what(),
               "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version "
               "(cudaErrorInsufficientDriver, 35)");
  auto memory = thrown<CudaError>([] { checkCuda(cudaErrorMemoryAllocation, "cudaMalloc"); });
  ASSERT_TRUE(memory);
  EXPECT_STREQ(memory->what(), "cudaMalloc: out of memory (cudaErrorMemoryAllocation, 2)");
}

TEST(GpuErrors, NcclMessagesCarryNameCodeAndLastError) {
  EXPECT_EQ(ncclErrorMessage(ncclInvalidUsage, "ncclAllReduce", ""),
            "ncclAllReduce: invalid usage (run with NCCL_DEBUG=WARN for details) "
            "(ncclInvalidUsage, 5)");
  // NCCL's last-error text often ends in a newline; it stays on one line.
  EXPECT_EQ(
      ncclErrorMessage(ncclSystemError, "ncclCommInitRankConfig", "socket: refused\npeer 3\n"),
      "ncclCommInitRankConfig: unhandled system error (run with NCCL_DEBUG=INFO for details) "
      "(ncclSystemError, 2): socket: refused peer 3");
  EXPECT_EQ(ncclResultName(ncclRemoteError), "ncclRemoteError");
  EXPECT_EQ(ncclResultName(ncclInProgress), "ncclInProgress");
  EXPECT_EQ(ncclResultName(static_cast<ncclResult_t>(42)), "ncclResult(?)");

  EXPECT_NO_THROW(checkNccl(ncclSuccess, "ncclGroupEnd"));
  auto invalid = thrown<NcclCallError>([] { checkNccl(ncclInvalidUsage, "ncclAllReduce"); });
  ASSERT_TRUE(invalid);
  EXPECT_EQ(invalid->kind(), ErrorKind::kNccl);
  EXPECT_EQ(invalid->code(), ncclInvalidUsage);
  EXPECT_TRUE(
      std::string_view(invalid->what())
          .starts_with("ncclAllReduce: invalid usage (run with NCCL_DEBUG=WARN for details) "
                       "(ncclInvalidUsage, 5)"))
      << invalid->what();
  // In progress is not success: non-blocking callers must wait it out (NcclComm::complete).
  EXPECT_THROW(checkNccl(ncclInProgress, "ncclCommInitRankConfig"), NcclError);
}

TEST(GpuErrors, RefusalsOfForcedAlgorithmsAreRecognized) {
  // Only with NCCL's words about the forced settings (a bare invalid usage may be a bug).
  EXPECT_FALSE(isNcclRefusal(ncclInvalidUsage, ""));
  EXPECT_FALSE(isNcclRefusal(ncclInvalidArgument, ""));
  EXPECT_TRUE(isNcclRefusal(ncclInvalidUsage, "NCCL_ALGO: unknown algorithm"));
  // After the NCCL_ALGO variable is restored, NCCL 2.28 reports the refusal as internal error.
  EXPECT_TRUE(isNcclRefusal(ncclInternalError,
                            "No algorithm/protocol nor symKernelId available for function "
                            "AllGather with datatype ncclInt8."));
  EXPECT_TRUE(isNcclRefusal(ncclInternalError, "Error : no algorithm/protocol available"));
  EXPECT_FALSE(isNcclRefusal(ncclInternalError, "proxy thread died"));
  EXPECT_FALSE(isNcclRefusal(ncclSystemError, "no algorithm/protocol available"));
  EXPECT_FALSE(isNcclRefusal(ncclRemoteError, ""));
}

TEST(GpuErrors, NoDeviceReasonsAreOneClearLine) {
  auto driver = gpuUnavailableReasonFor(35, 0);
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->rfind("no usable CUDA device: CUDA driver is missing or too old", 0), 0u)
      << *driver;
  EXPECT_TRUE(endsWith(*driver, "(cudaErrorInsufficientDriver, 35)")) << *driver;

  auto none = gpuUnavailableReasonFor(100, 0);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->rfind("no CUDA devices (cudaErrorNoDevice, 100", 0), 0u) << *none;

  EXPECT_EQ(gpuUnavailableReasonFor(0, 0), "no CUDA devices");
  EXPECT_EQ(gpuUnavailableReasonFor(0, 8), std::nullopt);
  auto other = gpuUnavailableReasonFor(2, 0);
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, "no usable CUDA device: out of memory (cudaErrorMemoryAllocation, 2)");
  for (const auto& r : {*driver, *none, *other}) EXPECT_EQ(r.find('\n'), std::string::npos);
}

TEST(GpuErrors, EveryDataTypeMapsToItsNcclType) {
  const std::map<DataType, ncclDataType_t> want{
      {DataType::kInt8, ncclInt8},     {DataType::kUint8, ncclUint8},
      {DataType::kInt32, ncclInt32},   {DataType::kUint32, ncclUint32},
      {DataType::kInt64, ncclInt64},   {DataType::kUint64, ncclUint64},
      {DataType::kHalf, ncclFloat16},  {DataType::kBFloat16, ncclBfloat16},
      {DataType::kFloat, ncclFloat32}, {DataType::kDouble, ncclFloat64}};
  ASSERT_EQ(want.size(), allDataTypes().size());
  for (DataType t : allDataTypes()) {
    ASSERT_TRUE(toNcclDataType(t)) << dataTypeName(t);
    EXPECT_EQ(*toNcclDataType(t), want.at(t)) << dataTypeName(t);
  }
  EXPECT_EQ(toNcclRedOp(RedOp::kSum), ncclSum);
  EXPECT_EQ(toNcclRedOp(RedOp::kProd), ncclProd);
  EXPECT_EQ(toNcclRedOp(RedOp::kMax), ncclMax);
  EXPECT_EQ(toNcclRedOp(RedOp::kMin), ncclMin);
  EXPECT_EQ(toNcclRedOp(RedOp::kAvg), ncclAvg);
  for (RedOp op : {RedOp::kBand, RedOp::kBor, RedOp::kBxor}) EXPECT_FALSE(toNcclRedOp(op));
}

TEST(GpuOptions, ValidatesNcclTestsRanges) {
  VariantOptions o;
  auto g = gpuOptionsFrom(o);
  EXPECT_EQ(g.blockingWait, 0);
  EXPECT_EQ(g.graphLaunches, 0);
  EXPECT_EQ(g.bufferRegistration, 0);
  o.gpu.blockingWait = 1;
  o.gpu.graphLaunches = 10;
  o.gpu.bufferRegistration = 2;
  o.prepareTimeoutSeconds = 30;
  g = gpuOptionsFrom(o);
  EXPECT_EQ(g.blockingWait, 1);
  EXPECT_EQ(g.graphLaunches, 10);
  EXPECT_EQ(g.bufferRegistration, 2);
  EXPECT_EQ(g.prepareTimeoutSeconds, 30);
  EXPECT_EQ(callsPerRun(g), 10);
  g.graphLaunches = 0;
  EXPECT_EQ(callsPerRun(g), 1);

  VariantOptions bad;
  bad.gpu.blockingWait = 2;
  EXPECT_THROW(gpuOptionsFrom(bad), UsageError);
  bad = {};
  bad.gpu.graphLaunches = -1;
  EXPECT_THROW(gpuOptionsFrom(bad), UsageError);
  bad = {};
  bad.gpu.bufferRegistration = 3;
  EXPECT_THROW(gpuOptionsFrom(bad), UsageError);
  bad = {};
  bad.prepareTimeoutSeconds = 0;
  EXPECT_THROW(gpuOptionsFrom(bad), UsageError);
}

TEST(GpuOptions, GraphTimeIsTotalOverCalls) {
  EXPECT_DOUBLE_EQ(perCallSeconds(10.0f, 4), 2.5e-3);  // 10 ms for a graph of 4 calls
  EXPECT_DOUBLE_EQ(perCallSeconds(1.5f, 1), 1.5e-3);
  EXPECT_DOUBLE_EQ(perCallSeconds(0.0f, 100), 0.0);
  EXPECT_THROW(perCallSeconds(1.0f, 0), InternalError);
}

TEST(GpuDevice, LocalRankComesFromTheLauncher) {
  auto lookup = [](std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(localRankFromEnvironment(lookup({})), std::nullopt);
  EXPECT_EQ(localRankFromEnvironment(lookup({{"SLURM_LOCALID", "3"}})), 3);
  EXPECT_EQ(localRankFromEnvironment(lookup({{"MPI_LOCALRANKID", "0"}})), 0);
  // Open MPI's variable wins over Slurm's when mpirun runs inside an allocation.
  EXPECT_EQ(localRankFromEnvironment(
                lookup({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"SLURM_LOCALID", "3"}})),
            1);
  EXPECT_EQ(localRankFromEnvironment(lookup({{"OMPI_COMM_WORLD_LOCAL_RANK", ""}})), std::nullopt);
  try {
    localRankFromEnvironment(lookup({{"MPI_LOCALRANKID", "x1"}}));
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& e) {
    EXPECT_STREQ(e.what(), "MPI_LOCALRANKID='x1' is not a local rank");
  }
  EXPECT_THROW(localRankFromEnvironment(lookup({{"PMI_LOCAL_RANK", "-1"}})), EnvironmentError);
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
