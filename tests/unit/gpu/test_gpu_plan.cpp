// NCCL algorithm x protocol variants: the --nccl-algo/--nccl-proto expansion and its registration.
#if defined(COLLBENCH_HAVE_CUDA)
#include <gtest/gtest.h>

#include <set>

#include "collectives/Registry.h"
#include "collectives/nccl/NcclVariantPlan.h"
#include "collectives/nccl/NcclVariants.h"
#include "core/Error.h"

namespace cb {
namespace {

std::vector<std::string> names(const std::vector<NcclVariantSpec>& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan) out.push_back(s.name);
  return out;
}

TEST(NcclVariantPlan, AllTimesAllIsEveryAlgorithmWithEveryProtocol) {
  auto plan = ncclVariantPlan("all", "all");
  ASSERT_EQ(plan.size(), 21u);  // 7 algorithms x 3 protocols, algorithm-major
  EXPECT_EQ(plan.front().name, "nccl:Ring/LL");
  EXPECT_EQ(plan[1].name, "nccl:Ring/LL128");
  EXPECT_EQ(plan[2].name, "nccl:Ring/Simple");
  EXPECT_EQ(plan.back().name, "nccl:PAT/Simple");
  std::set<std::string> algos, unique;
  for (const auto& s : plan) {
    algos.insert(s.algo);
    unique.insert(s.name);
    ASSERT_EQ(s.env.size(), 2u);
    EXPECT_EQ(s.env[0], (std::pair<std::string, std::string>{"NCCL_ALGO", s.algo}));
    EXPECT_EQ(s.env[1], (std::pair<std::string, std::string>{"NCCL_PROTO", s.proto}));
    EXPECT_EQ(s.name, "nccl:" + s.algo + "/" + s.proto);
  }
  EXPECT_EQ(unique.size(), 21u);
  EXPECT_EQ(algos, (std::set<std::string>{"Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS",
                                          "NVLSTree", "PAT"}));
}

TEST(NcclVariantPlan, ListsAreCaseInsensitiveAndDeduplicated) {
  EXPECT_EQ(names(ncclVariantPlan("ring, TREE,Ring", "ll128")),
            (std::vector<std::string>{"nccl:Ring/LL128", "nccl:Tree/LL128"}));
  auto plan = ncclVariantPlan("collnet_direct,nvls-tree", "");
  EXPECT_EQ(names(plan),
            (std::vector<std::string>{"nccl:CollNetDirect/auto", "nccl:NVLSTree/auto"}));
  ASSERT_EQ(plan[0].env.size(), 1u);  // the protocol is left to NCCL
  EXPECT_EQ(plan[0].env[0].first, "NCCL_ALGO");
  EXPECT_EQ(plan[0].env[0].second, "CollNetDirect");
  EXPECT_EQ(ncclEnvText(plan[1].env), "NCCL_ALGO=NVLSTree");
}

TEST(NcclVariantPlan, ProtocolOnlyAndNothing) {
  auto plan = ncclVariantPlan("", "simple,LL");
  EXPECT_EQ(names(plan), (std::vector<std::string>{"nccl:auto/Simple", "nccl:auto/LL"}));
  EXPECT_EQ(ncclEnvText(plan[0].env), "NCCL_PROTO=Simple");
  EXPECT_TRUE(ncclVariantPlan("", "").empty());
  EXPECT_TRUE(ncclVariantPlan(" ", " ").empty());
}

TEST(NcclVariantPlan, UnknownNamesAreUsageErrors) {
  try {
    ncclVariantPlan("Ring,Butterfly", "");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'Butterfly'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected Ring, Tree"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ncclVariantPlan("", "LL64"), UsageError);
  EXPECT_THROW(ncclVariantPlan("^Ring", ""), UsageError);  // NCCL's exclusion syntax: not here
}

TEST(NcclVariantPlan, RegistersOneVariantPerCollective) {
  Registry r;
  registerNcclVariants(r);
  EXPECT_EQ(r.all().size(), allCollectives().size());
  registerNcclPlanVariants(r, ncclVariantPlan("Ring,Tree", "LL"));
  EXPECT_EQ(r.all().size(), allCollectives().size() * 3);
  for (Collective c : allCollectives()) {
    for (const char* name : {"nccl", "nccl:Ring/LL", "nccl:Tree/LL"}) {
      const VariantInfo* v = r.find(c, name);
      ASSERT_NE(v, nullptr) << collectiveName(c) << " " << name;
      EXPECT_EQ(v->backend, "nccl");
      EXPECT_EQ(v->memory, MemoryKind::kDevice);
      EXPECT_TRUE(v->allocator && v->unsupported && v->prepare);
    }
  }
  EXPECT_NE(r.find(Collective::kAllReduce, "nccl:Tree/LL")->description.find("NCCL_ALGO=Tree"),
            std::string::npos);
  // The same plan twice would register duplicate names.
  EXPECT_THROW(registerNcclPlanVariants(r, ncclVariantPlan("Ring", "LL")), InternalError);
}

}  // namespace
}  // namespace cb
#endif  // COLLBENCH_HAVE_CUDA
