// ABI 1.2's stream_import through the C++ layer and the core: the trampoline's checks, the
// core's per-handle cache, runs queued on an imported stream that return without waiting
// unless a kernel can fail at run time (Kernel::mayFail) and the device does not raise that
// on the stream itself (ABI 1.3 async_stream_failures) or a tensor is copied, and a 1.0
// plugin (no entry) answering UNIMPLEMENTED.
#include <gtest/gtest.h>

#include <vector>

#include "core/compile/pipeline.h"
#include "core/kernel/kernel_ir.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

std::unique_ptr<Device> open(const char* dir, const char* name) {
  auto p = Loader({dir}).load(name);
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  if (!p.isOk()) return nullptr;
  auto d = Device::open(*p, 0, "");
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? std::move(*d) : nullptr;
}

TEST(StreamImport, TheTrampolineChecksItsArgs) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest");
  ASSERT_TRUE(dev);
  auto fn = dev->plugin().streamImportFn();
  ASSERT_NE(fn, nullptr);
  plugsdk_stream_import_args_t a{};
  a.struct_size = sizeof(a);
  a.client = dev->client();
  Status s = dev->check(fn(&a), "stream_import");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("stream_import: native is NULL"), std::string::npos) << s.toString();
  int token = 0;
  a.native = &token;
  a.device = 3;
  s = dev->check(fn(&a), "stream_import");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  a.device = 0;
  a.client = nullptr;
  EXPECT_EQ(dev->check(fn(&a), "stream_import").code(), StatusCode::kInvalidArgument);
}

TEST(StreamImport, OneStreamPerNativeHandle) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest");
  ASSERT_TRUE(dev);
  EXPECT_TRUE(dev->importsStreams());
  int a = 0, b = 0;
  auto sa = dev->importStream(&a), sa2 = dev->importStream(&a), sb = dev->importStream(&b);
  ASSERT_TRUE(sa.isOk() && sa2.isOk() && sb.isOk()) << sa.status().toString();
  EXPECT_EQ(*sa, *sa2);
  EXPECT_NE(*sa, *sb);
  EXPECT_NE(*sa, dev->stream());
  EXPECT_TRUE(dev->synchronize(*sa).isOk());
  EXPECT_EQ(dev->importStream(nullptr).status().code(), StatusCode::kInvalidArgument);
}

TEST(StreamImport, APluginWithoutTheEntryAnswersUnimplemented) {
  auto dev = open(PLUGSDK_TEST_PLUGIN_DIR, "frozen_v1_0");  // the minimal sample built as ABI 1.0
  ASSERT_TRUE(dev);
  EXPECT_FALSE(dev->importsStreams());
  int token = 0;
  auto s = dev->importStream(&token);
  EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.status().message().find("has no stream_import"), std::string::npos) << s.status().toString();
}

/// y = x + x (+ an integer division when `divides`: a kernel that can fail at run time).
std::unique_ptr<DeviceProgram> compileFor(const Device& dev, const ir::Context& ctx, const char* src) {
  auto g = text::parseGraph(ctx, src);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return nullptr;
  auto c = compile::compileGraph(ctx, *g, optionsFor(dev.caps()));
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  if (!c.isOk()) return nullptr;
  auto dp = DeviceProgram::compile(dev, c->program);
  EXPECT_TRUE(dp.isOk()) << dp.status().toString();
  return dp.isOk() ? std::move(*dp) : nullptr;
}

TEST(StreamImport, RunsOnTheCallersStreamWaitOnlyWhenTheyMust) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest");
  ASSERT_TRUE(dev);
  auto ctx = ir::makeDefaultContext();
  auto dp = compileFor(*dev, *ctx, R"(graph @g(%x: f32[4]) {
  %y = aten.add.Tensor(%x, %x)
  return %y
})");
  ASSERT_TRUE(dp);
  EXPECT_TRUE(dp->importsStreams());
  std::vector<float> x = {1, 2, -3, 0.5f}, y(4, 0);
  TensorArg in{x.data(), ir::DType::kF32, {4}, {}}, out{y.data(), ir::DType::kF32, {4}, {}};
  int caller = 0;
  // Everything in place and no kernel that can fail: queued, not waited for.
  TransferStats st;
  Status s = dp->runInto({in}, {out}, &st, &caller);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_FALSE(st.waited);
  EXPECT_EQ(st.imported, 2);
  EXPECT_EQ(y, (std::vector<float>{2, 4, -6, 1}));  // the test plugin runs work when queued
  // Without a native stream: the device's own, waited for.
  st = {};
  ASSERT_TRUE(dp->runInto({in}, {out}, &st).isOk());
  EXPECT_TRUE(st.waited);
  // A strided output is copied back from the plugin's own buffer: that run waits.
  std::vector<float> wide(8, 0);
  TensorArg strided{wide.data(), ir::DType::kF32, {4}, {2}};
  st = {};
  ASSERT_TRUE(dp->runInto({in}, {strided}, &st, &caller).isOk());
  EXPECT_TRUE(st.waited);
  EXPECT_EQ(st.copied, 1);
  EXPECT_EQ(wide, (std::vector<float>{2, 0, 4, 0, -6, 0, 1, 0}));
}

// ABI 1.3: a device that raises failures on imported streams itself (CUDA's device-side
// asserts) spares those runs the wait; the field is read only from plugins whose struct has it.
TEST(StreamImport, AsyncStreamFailuresSpareTheWaitOfRunsThatCanFail) {
  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto async = Device::open(*p, 0, "async_failures=1");
  ASSERT_TRUE(async.isOk()) << async.status().toString();
  EXPECT_TRUE((*async)->caps().asyncStreamFailures);
  auto plain = Device::open(*p, 0, "");
  ASSERT_TRUE(plain.isOk());
  EXPECT_FALSE((*plain)->caps().asyncStreamFailures);
  auto old = open(PLUGSDK_TEST_PLUGIN_DIR, "frozen_v1_0");
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->caps().asyncStreamFailures);
  // The decision: (imported stream, a kernel can fail, async failures, a tensor copied).
  EXPECT_TRUE(runWaits(false, false, true, false));  // the device's own stream: always
  EXPECT_FALSE(runWaits(true, false, false, false));
  EXPECT_TRUE(runWaits(true, true, false, false));  // a CHECK the core must read
  EXPECT_FALSE(runWaits(true, true, true, false));  // raised on the caller's stream
  EXPECT_TRUE(runWaits(true, true, true, true));    // a copy still waits
}

TEST(StreamImport, KernelsThatCanFailAreTheOnesWithChecksOrIntegerDivision) {
  kernel::Kernel k;
  kernel::Stmt add;
  add.kind = kernel::StmtKind::kScalar;
  add.op = prims::ScalarOp::kAdd;
  add.dtype = ir::DType::kI32;
  k.body = {add};
  EXPECT_FALSE(k.mayFail());
  kernel::Stmt div = add;
  div.op = prims::ScalarOp::kDiv;
  div.dtype = ir::DType::kF32;
  k.body = {div};
  EXPECT_FALSE(k.mayFail());  // a float division gives inf or nan, never an error
  for (prims::ScalarOp op : {prims::ScalarOp::kDiv, prims::ScalarOp::kRemainder, prims::ScalarOp::kFmod}) {
    div.op = op;
    div.dtype = ir::DType::kI64;
    kernel::Stmt loop;
    loop.kind = kernel::StmtKind::kLoop;
    loop.body = {div};  // inside a loop too
    k.body = {add, loop};
    EXPECT_TRUE(k.mayFail());
  }
  kernel::Stmt check;
  check.kind = kernel::StmtKind::kCheck;
  k.body = {check};
  EXPECT_TRUE(k.mayFail());
}

}  // namespace
}  // namespace plugsdk::plugin
