// Shareable host memory (core/SharedMemory.h): the region table answers only for whole ranges
// inside live buffers, ids are never reused, and a mapping through /proc sees the same bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

#include "core/Buffer.h"
#include "core/Error.h"
#include "core/SharedMemory.h"

namespace cb {
namespace {

TEST(SharedMemory, FindsOnlyWholeRangesInsideLiveBuffers) {
  SharedHostBuffer b(10000);  // rounded up to 3 pages
  ASSERT_TRUE(b.shareable()) << "memfd_create is expected on Linux >= 3.17";
  auto* p = static_cast<std::byte*>(b.data());
  auto whole = findSharedRegion(p, 10000);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->offset, 0u);
  EXPECT_EQ(whole->regionBytes, 3u * 4096);
  auto inner = findSharedRegion(p + 100, 200);
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->offset, 100u);
  EXPECT_EQ(inner->id, whole->id);
  EXPECT_TRUE(findSharedRegion(p + 3 * 4096 - 8, 8));
  EXPECT_FALSE(findSharedRegion(p + 3 * 4096 - 8, 9)) << "runs past the region";
  EXPECT_FALSE(findSharedRegion(p - 1, 2)) << "starts before it";
  int onStack = 0;
  EXPECT_FALSE(findSharedRegion(&onStack, sizeof onStack));
  HostBuffer privateMemory(4096);
  EXPECT_FALSE(findSharedRegion(privateMemory.data(), 1));
}

TEST(SharedMemory, IdsAreNeverReusedAndFreedBuffersAreForgotten) {
  uint64_t firstId = 0;
  const void* firstBase = nullptr;
  {
    SharedHostBuffer a(4096);
    firstId = findSharedRegion(a.data(), 1)->id;
    firstBase = a.data();
  }
  EXPECT_FALSE(findSharedRegion(firstBase, 1));
  SharedHostBuffer b(4096);
  EXPECT_NE(findSharedRegion(b.data(), 1)->id, firstId);
  SharedHostBuffer moved = std::move(b);
  EXPECT_TRUE(findSharedRegion(moved.data(), 4096));
}

TEST(SharedMemory, APeerMappingSeesTheSameBytes) {
  SharedHostBuffer b(8192);
  b.faultIn();
  std::memcpy(b.data(), "written by the owner", 21);
  PeerMapping m(*findSharedRegion(b.data(), 8192));
  ASSERT_EQ(m.bytes(), 8192u);
  EXPECT_EQ(std::memcmp(m.base(), "written by the owner", 21), 0);
  std::memcpy(m.base() + 4096, "and by the peer", 16);
  EXPECT_EQ(std::memcmp(static_cast<char*>(b.data()) + 4096, "and by the peer", 16), 0);
}

TEST(SharedMemory, MappingAMissingRegionIsAnEnvironmentError) {
  SharedRegionRef ref{};
  {
    SharedHostBuffer gone(4096);
    ref = *findSharedRegion(gone.data(), 1);
  }                  // its memfd is closed now
  ref.fd = 1 << 20;  // and this descriptor never existed
  EXPECT_THROW(PeerMapping{ref}, EnvironmentError);
}

TEST(SharedMemory, HostDataBuffersAreShareable) {
  HostAllocator alloc;
  auto buf = alloc.allocate(1 << 20);
  EXPECT_TRUE(findSharedRegion(buf->data(), 1 << 20));
}

}  // namespace
}  // namespace cb
