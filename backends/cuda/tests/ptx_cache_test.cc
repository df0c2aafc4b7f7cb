// The PTX disk cache without a GPU (codegen/ptx_cache.h): a second cache over the same
// directory (another process) reads back the PTX and launch facts compiled by the first;
// corrupt or truncated entries are rejected with the reason, recompiled and rewritten; the
// architecture and the options are part of the key; malformed payloads fail naming the part.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "backends/cuda/codegen/ptx_cache.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"

namespace plugsdk::cuda {
namespace {

// A row sum (its loop may be split over blocks) with a CHECK (a check message to keep).
const char* kRowSum = R"(kernel @rowsum(%x: f32 in, %i: i64 in, %y: f32 out) grid [s0] {
  %0 = load %i[i0] : i64
  %1 = const 0 : i64
  %2 = ge %0, %1 : bool
  check %2, "a row index is negative"
  loop [s1] {
    %3 = load %x[s1*i0+r0] : f32
    %4 = reduce sum %3 : f32
  }
  store %y[i0], %4
}
)";

struct Encoded {
  std::unique_ptr<plugin::EncodedKernel> e;
  sdk::KernelView view() const { return sdk::KernelView(e->get()); }
};

Encoded encode(const char* text) {
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().message();
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return Encoded{std::move(*e)};
}

std::string tempDir() {
  std::string t = (std::filesystem::temp_directory_path() / "plugsdk-ptx-cache-XXXXXX").string();
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}

TEST(PtxCache, SecondProcessReadsBackWhatTheFirstCompiled) {
  const std::string dir = tempDir();
  const Encoded k = encode(kRowSum);
  const PtxOptions o{3, "", false};
  std::string log;
  PtxCache first(dir);
  sdk::StatusOr<PtxKernel> a = first.get(k.view(), GpuArch{9, 0}, o, &log);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_EQ(log, "PTX compiled");
  EXPECT_EQ(first.stats().compiled, 1u);
  ASSERT_TRUE(a->mapping.splittable) << "a one-loop row reduction may be split";
  ASSERT_EQ(a->checkMessages.size(), 1u);

  PtxCache second(dir);
  sdk::StatusOr<PtxKernel> b = second.get(k.view(), GpuArch{9, 0}, o, &log);
  ASSERT_TRUE(b.isOk()) << b.status().message();
  EXPECT_NE(log.find("PTX from the disk cache"), std::string::npos) << log;
  EXPECT_EQ(second.stats().hits, 1u);
  EXPECT_EQ(second.stats().compiled, 0u);
  EXPECT_TRUE(b->ptx == a->ptx) << "the PTX read back is not the PTX stored";
  EXPECT_EQ(b->entry, a->entry);
  EXPECT_EQ(b->entry.rfind("plugsdk_", 0), 0u);
  EXPECT_EQ(b->checkMessages, a->checkMessages);
  EXPECT_EQ(b->mapping.kind, a->mapping.kind);
  EXPECT_EQ(b->mapping.lanes, a->mapping.lanes);
  EXPECT_EQ(b->mapping.blockThreads, a->mapping.blockThreads);
  EXPECT_EQ(b->mapping.pointsPerBlock, a->mapping.pointsPerBlock);
  EXPECT_TRUE(b->mapping.splittable);
  EXPECT_EQ(b->mapping.splitDim.first, a->mapping.splitDim.first);
  EXPECT_EQ(b->mapping.splitDim.count, a->mapping.splitDim.count);
  EXPECT_TRUE(b->llvmIr.empty());

  // Another architecture or other options: other keys, compiled anew.
  EXPECT_NE(PtxCache::keyOf(k.view(), GpuArch{8, 0}, o), PtxCache::keyOf(k.view(), GpuArch{9, 0}, o));
  EXPECT_NE(PtxCache::keyOf(k.view(), GpuArch{9, 0}, PtxOptions{3, "", false, 8}),
            PtxCache::keyOf(k.view(), GpuArch{9, 0}, o));
  sdk::StatusOr<PtxKernel> c = second.get(k.view(), GpuArch{8, 0}, o, &log);
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(log, "PTX compiled");
  EXPECT_NE(c->ptx.find(".target sm_80"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PtxCache, CorruptEntriesAreRejectedAndRewritten) {
  const std::string dir = tempDir();
  const Encoded k = encode(kRowSum);
  const PtxOptions o{3, "", false};
  std::string log;
  PtxCache cache(dir);
  sdk::StatusOr<PtxKernel> a = cache.get(k.view(), GpuArch{9, 0}, o, &log);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  const std::string path = cache.disk().path(PtxCache::keyOf(k.view(), GpuArch{9, 0}, o));
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  for (const char* damage : {"flip", "truncate"}) {
    std::string data;
    {
      std::ifstream f(path, std::ios::binary);
      data.assign(std::istreambuf_iterator<char>(f), {});
    }
    if (std::string(damage) == "flip")
      data[data.size() - 20] ^= 0x5a;
    else
      data.resize(data.size() / 2);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
    PtxCache again(dir);
    sdk::StatusOr<PtxKernel> b = again.get(k.view(), GpuArch{9, 0}, o, &log);
    ASSERT_TRUE(b.isOk()) << b.status().message();
    EXPECT_EQ(again.stats().rejected, 1u) << damage;
    EXPECT_NE(log.find("rejected ("), std::string::npos) << damage << ": " << log;
    EXPECT_NE(log.find(damage == std::string("flip") ? "checksum" : "truncated"), std::string::npos) << log;
    // Recompiled (LLVM numbers call sequences per process, so the text need not be a's).
    EXPECT_EQ(b->entry, a->entry);
    EXPECT_NE(b->ptx.find(".entry " + a->entry), std::string::npos);
    PtxCache third(dir);
    ASSERT_TRUE(third.get(k.view(), GpuArch{9, 0}, o, &log).isOk());
    EXPECT_EQ(third.stats().hits, 1u) << damage << ": the entry was rewritten";
  }
  std::filesystem::remove_all(dir);
}

TEST(PtxCache, FaultInjectionAndADisabledCacheStoreNothing) {
  const std::string dir = tempDir();
  const Encoded k = encode(kRowSum);
  std::string log;
  PtxCache cache(dir);
  EXPECT_FALSE(cache.get(k.view(), GpuArch{9, 0}, PtxOptions{3, "", true}, &log).isOk());
  PtxCache off("");
  ASSERT_TRUE(off.get(k.view(), GpuArch{9, 0}, PtxOptions{3, "", false}, &log).isOk());
  ASSERT_TRUE(off.get(k.view(), GpuArch{9, 0}, PtxOptions{3, "", false}, &log).isOk());
  EXPECT_EQ(off.stats().compiled, 2u);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(PtxCache, MalformedPayloadsNameThePart) {
  const Encoded k = encode(kRowSum);
  sdk::StatusOr<PtxKernel> a = compileToPtx(k.view(), GpuArch{9, 0}, "plugsdk_x", PtxOptions{3, "", false});
  ASSERT_TRUE(a.isOk()) << a.status().message();
  const std::string good = serializePtx(*a);
  ASSERT_TRUE(parsePtx(good, k.view()).isOk());
  struct Case {
    std::string payload, part;
  };
  std::string noEntry = good;
  noEntry.replace(noEntry.rfind(".entry plugsdk_x"), 16, ".entry plugsdk_y");
  for (const Case& c :
       {Case{"garbage", "the thread mapping"}, Case{good.substr(0, good.size() / 2), "the PTX"},
        Case{noEntry, "no .entry plugsdk_x"}, Case{"mapping 2 4 256 1 0 1 99\nchecks 0\n", "the split loop"}}) {
    sdk::StatusOr<PtxKernel> p = parsePtx(c.payload, k.view());
    ASSERT_FALSE(p.isOk()) << c.part;
    EXPECT_NE(p.status().message().find(c.part), std::string::npos) << p.status().message();
  }
}

}  // namespace
}  // namespace plugsdk::cuda
