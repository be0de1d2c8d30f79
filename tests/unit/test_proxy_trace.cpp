// The DP proxy against a real job: a PyTorch execution trace of a 2-rank ResNet-50 DDP run
// (facebookresearch/param, et_replay/tests/inputs/1.1.0-chakra.0.0.4/resnet_2gpu_et.json.gz,
// MIT; tests/data/SOURCES-proxy-traces.md). Its record_param_comms nodes name each collective
// and its element count; the all-reduces are DDP's gradient buckets, three iterations of five.
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "training_proxies/Model.h"
#include "training_proxies/Plan.h"
#include "training_proxies/Proxy.h"

namespace cb::proxy {
namespace {

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// The element counts of the trace's all-reduces, in the order they were issued.
std::vector<uint64_t> traceAllReduces() {
  const std::string text = gunzip(std::string(CB_SOURCE_DIR) +
                                  "/tests/data/traces/pytorch-et/param-resnet-ddp-2rank/"
                                  "resnet_2gpu_et.json.gz");
  std::vector<uint64_t> out;
  if (text.empty()) return out;
  auto j = nlohmann::json::parse(text);
  for (const auto& node : j.at("nodes")) {
    if (node.value("name", "") != "record_param_comms") continue;
    std::string coll;
    uint64_t elems = 0;
    for (const auto& a : node.value("attrs", nlohmann::json::array())) {
      if (a.value("name", "") == "collective_name") coll = a.at("value").get<std::string>();
      if (a.value("name", "") == "in_msg_nelems") elems = a.at("value").get<uint64_t>();
    }
    if (coll == "allreduce") out.push_back(elems);
  }
  return out;
}

TEST(ProxyTrace, ResNetDdpBucketsEqualTheRealJobs) {
  const std::vector<uint64_t> trace = traceAllReduces();
  ASSERT_EQ(trace.size(), 15u) << "the trace could not be read";
  const std::vector<uint64_t> iteration(trace.begin(), trace.begin() + 5);
  EXPECT_EQ(iteration,
            (std::vector<uint64_t>{2'049'000, 7'875'584, 6'563'840, 6'637'568, 2'431'040}));
  // Every iteration issues the same buckets in the same order.
  for (size_t i = 5; i < trace.size(); ++i) EXPECT_EQ(trace[i], iteration[i % 5]) << i;

  // The proxy's buckets for `proxy dp --model resnet50` (defaults: 25 MiB, first 1 MiB, float):
  // the plan of buckets, and the all-reduces the step issues, in issue order. The trace's are
  // DDP's rebuilt buckets (after the first iteration, in the order gradients became ready);
  // ResNet-50's gradients become ready in reverse parameter order (each block's downsample
  // branch is the last module run in forward, so its gradients come first in backward, as its
  // parameters come last), which is the order the proxy fills buckets in: the same five.
  Model m = presetModel("resnet50");
  std::vector<uint64_t> plan;
  for (const auto& b : ddpBuckets(m, 4, kDefaultBucketCapBytes, kDefaultFirstBucketBytes)) {
    plan.push_back(b.bytes / 4);
  }
  EXPECT_EQ(plan, iteration);
  ProxyOptions o;
  o.mode = ProxyMode::kDp;
  o.model = m;
  std::vector<uint64_t> issued;
  for (const auto& c : planStep(o, 2, 0)) {
    ASSERT_EQ(c.group, "dp");
    ASSERT_EQ(c.coll, "allreduce");
    EXPECT_EQ(c.nranks, 2);
    for (int k = 0; k < c.callsPerStep; ++k) issued.push_back(c.bytes / 4);
  }
  EXPECT_EQ(issued, iteration);
  // The sum is torchvision's ResNet-50: 25,557,032 parameters.
  uint64_t sum = 0;
  for (uint64_t v : iteration) sum += v;
  EXPECT_EQ(sum, m.params());
}

}  // namespace
}  // namespace cb::proxy
