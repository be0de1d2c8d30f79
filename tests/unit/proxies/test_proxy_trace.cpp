// The DP proxy against a real job: a PyTorch execution trace of a 2-rank ResNet-50 DDP run
// (facebookresearch/param, et_replay/tests/inputs/1.1.0-chakra.0.0.4/resnet_2gpu_et.json.gz,
// MIT; tests/data/SOURCES-proxy-traces.md). Its record_param_comms nodes name each collective
// and its element count; the all-reduces are DDP's gradient buckets, three iterations of five.
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/DataType.h"
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

struct TraceCall {
  std::string coll, dtype;
  uint64_t elems;
  bool operator==(const TraceCall&) const = default;
};

// The trace's collectives (name, dtype, elements), in the order they were issued.
std::vector<TraceCall> traceCalls() {
  const std::string text = gunzip(std::string(CB_SOURCE_DIR) +
                                  "/tests/data/traces/pytorch-et/param-resnet-ddp-2rank/"
                                  "resnet_2gpu_et.json.gz");
  std::vector<TraceCall> out;
  if (text.empty()) return out;
  auto j = nlohmann::json::parse(text);
  for (const auto& node : j.at("nodes")) {
    if (node.value("name", "") != "record_param_comms") continue;
    TraceCall c;
    for (const auto& a : node.value("attrs", nlohmann::json::array())) {
      if (a.value("name", "") == "collective_name") c.coll = a.at("value").get<std::string>();
      if (a.value("name", "") == "dtype") c.dtype = a.at("value").get<std::string>();
      if (a.value("name", "") == "in_msg_nelems") c.elems = a.at("value").get<uint64_t>();
    }
    if (c.coll == "allreduce" || c.coll == "broadcast") out.push_back(c);
  }
  return out;
}

std::vector<uint64_t> allReduces(const std::vector<TraceCall>& calls) {
  std::vector<uint64_t> out;
  for (const auto& c : calls) {
    if (c.coll == "allreduce") out.push_back(c.elems);
  }
  return out;
}

TEST(ProxyTrace, ResNetDdpBucketsEqualTheRealJobs) {
  const std::vector<TraceCall> calls = traceCalls();
  const std::vector<uint64_t> trace = allReduces(calls);
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
  std::vector<TraceCall> planned;
  for (const auto& c : planStep(o, 2, 0)) {
    ASSERT_EQ(c.group, "dp");
    EXPECT_EQ(c.nranks, 2);
    const uint64_t elems = c.bytes / dataTypeSize(c.dtype);
    for (int k = 0; k < c.callsPerStep; ++k) {
      if (c.coll == "allreduce") issued.push_back(elems);
      planned.push_back({c.coll, c.dtype == DataType::kFloat ? "Float" : "Long", elems});
    }
  }
  EXPECT_EQ(issued, iteration);
  // Before each forward DDP broadcasts rank 0's buffers (broadcast_buffers): the batch norms'
  // running mean and variance, 2 x 26,560 floats, and their 53 num_batches_tracked (int64).
  // The trace's iteration: the two broadcasts, then the five buckets; so is the proxy's step.
  const std::vector<TraceCall> traceIteration(calls.begin(), calls.begin() + 7);
  EXPECT_EQ(traceIteration[0], (TraceCall{"broadcast", "Float", 53'120}));
  EXPECT_EQ(traceIteration[1], (TraceCall{"broadcast", "Long", 53}));
  EXPECT_EQ(planned, traceIteration);
  // The sum is torchvision's ResNet-50: 25,557,032 parameters.
  uint64_t sum = 0;
  for (uint64_t v : iteration) sum += v;
  EXPECT_EQ(sum, m.params());
}

}  // namespace
}  // namespace cb::proxy
