// ABI 1.9's recordings through the C++ layer and the core (core/plugin/run_recordings.h):
// runs on an imported stream are recorded when their key came within the last few runs and
// replayed after that, reading the memory as it is at the replay; a new address is a new key;
// a plugin that records nothing, refuses a recording or calls one stale still gets every run
// right; the trampolines check their arguments; a plugin without the entries records nothing.
#include <gtest/gtest.h>

#include <vector>

#include "core/compile/pipeline.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

std::unique_ptr<Device> open(const char* dir, const char* name, const char* options) {
  auto p = Loader({dir}).load(name);
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  if (!p.isOk()) return nullptr;
  auto d = Device::open(*p, 0, options);
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? std::move(*d) : nullptr;
}

/// y = x + x, z = x * x: two kernels, or one when fused; either way launch calls.
std::unique_ptr<DeviceProgram> program(const Device& dev, const ir::Context& ctx) {
  auto g = text::parseGraph(ctx, R"(graph @g(%x: f32[4]) {
  %y = aten.add.Tensor(%x, %x)
  %z = aten.mul.Tensor(%x, %x)
  return %y, %z
})");
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return nullptr;
  auto c = compile::compileGraph(ctx, *g, optionsFor(dev.caps()));
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  if (!c.isOk()) return nullptr;
  auto dp = DeviceProgram::compile(dev, c->program);
  EXPECT_TRUE(dp.isOk()) << dp.status().toString();
  return dp.isOk() ? std::move(*dp) : nullptr;
}

struct Outcome {
  TransferStats st;
  std::vector<float> y, z;
};

/// One run on the caller's stream over x and the output vectors (their addresses are the key).
Outcome run(const DeviceProgram& dp, std::vector<float>& x, std::vector<float>& y, std::vector<float>& z, int* stream) {
  Outcome r;
  TensorArg in{x.data(), ir::DType::kF32, {4}, {}}, oy{y.data(), ir::DType::kF32, {4}, {}},
      oz{z.data(), ir::DType::kF32, {4}, {}};
  Status s = dp.runInto({in}, {oy, oz}, &r.st, stream);
  EXPECT_TRUE(s.isOk()) << s.toString();
  r.y = y;
  r.z = z;
  return r;
}

std::vector<float> twice(const std::vector<float>& x) {
  std::vector<float> v;
  for (float e : x) v.push_back(e + e);
  return v;
}
std::vector<float> squared(const std::vector<float>& x) {
  std::vector<float> v;
  for (float e : x) v.push_back(e * e);
  return v;
}

TEST(Recording, TheSecondRunIsRecordedAndLaterOnesReplayOverTheMemoryAsItIsThen) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "record=on");
  ASSERT_TRUE(dev);
  EXPECT_TRUE(dev->records());
  auto ctx = ir::makeDefaultContext();
  auto dp = program(*dev, *ctx);
  ASSERT_TRUE(dp);
  std::vector<float> x = {1, 2, -3, 0.5f}, y(4, 0), z(4, 0);
  int stream = 0;
  Outcome first = run(*dp, x, y, z, &stream);
  EXPECT_FALSE(first.st.recorded);
  EXPECT_FALSE(first.st.replayed);
  EXPECT_GT(first.st.kernels, 0);
  EXPECT_EQ(first.y, twice(x));
  x = {4, -1, 2, 8};
  Outcome second = run(*dp, x, y, z, &stream);
  EXPECT_TRUE(second.st.recorded);  // recorded, then the recording ran
  EXPECT_FALSE(second.st.waited);
  EXPECT_EQ(second.y, twice(x));
  EXPECT_EQ(second.z, squared(x));
  for (int i = 0; i < 3; ++i) {
    x = {static_cast<float>(i), 3, -7, 0.25f};
    std::fill(y.begin(), y.end(), 0.0f);
    Outcome again = run(*dp, x, y, z, &stream);
    EXPECT_TRUE(again.st.replayed);
    EXPECT_EQ(again.st.kernels + again.st.libraryCalls, 0);  // no launch call
    EXPECT_EQ(again.st.imported, first.st.imported);
    EXPECT_EQ(again.y, twice(x)) << "replay " << i;
    EXPECT_EQ(again.z, squared(x)) << "replay " << i;
  }
  EXPECT_EQ(dp->recordingOff(), "");
  const RecordingCounts c = dp->recordingCounts();
  EXPECT_EQ(c.recorded, 1u);
  EXPECT_EQ(c.replayed, 3u);
  EXPECT_EQ(c.kept, 1u);
}

TEST(Recording, ANewAddressIsANewKey) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "record=on");
  ASSERT_TRUE(dev);
  auto ctx = ir::makeDefaultContext();
  auto dp = program(*dev, *ctx);
  ASSERT_TRUE(dp);
  std::vector<float> x = {1, 2, 3, 4}, y(4), z(4), y2(4, 0), z2(4, 0);
  int stream = 0;
  run(*dp, x, y, z, &stream);
  ASSERT_TRUE(run(*dp, x, y, z, &stream).st.recorded);
  // Other outputs: not the recording's addresses, so launched (and the recording's outputs untouched).
  x = {5, 6, 7, 8};
  const std::vector<float> before = y;
  Outcome other = run(*dp, x, y2, z2, &stream);
  EXPECT_FALSE(other.st.replayed);
  EXPECT_FALSE(other.st.recorded);
  EXPECT_GT(other.st.kernels, 0);
  EXPECT_EQ(other.y, twice(x));
  EXPECT_EQ(y, before);
  // The first addresses again: still kept, replayed.
  Outcome back = run(*dp, x, y, z, &stream);
  EXPECT_TRUE(back.st.replayed);
  EXPECT_EQ(back.y, twice(x));
  // Without a native stream nothing is recorded or replayed.
  TransferStats st;
  TensorArg in{x.data(), ir::DType::kF32, {4}, {}}, oy{y.data(), ir::DType::kF32, {4}, {}},
      oz{z.data(), ir::DType::kF32, {4}, {}};
  ASSERT_TRUE(dp->runInto({in}, {oy, oz}, &st).isOk());
  EXPECT_FALSE(st.replayed);
  EXPECT_GT(st.kernels, 0);
}

// `y = f(x)` in a loop holds the last output while the next call allocates: the keys alternate
// between two output addresses, and both get a recording.
TEST(Recording, AlternatingKeysAreEachRecorded) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "record=on");
  ASSERT_TRUE(dev);
  auto ctx = ir::makeDefaultContext();
  auto dp = program(*dev, *ctx);
  ASSERT_TRUE(dp);
  std::vector<float> x = {1, 2, 3, 4}, ya(4), za(4), yb(4), zb(4);
  int stream = 0;
  for (int i = 0; i < 6; ++i) {
    x[3] = static_cast<float>(i);
    Outcome r = i % 2 ? run(*dp, x, yb, zb, &stream) : run(*dp, x, ya, za, &stream);
    EXPECT_EQ(r.y, twice(x)) << "run " << i;
    EXPECT_EQ(r.st.recorded, i == 2 || i == 3) << "run " << i;
    EXPECT_EQ(r.st.replayed, i >= 4) << "run " << i;
  }
  EXPECT_EQ(dp->recordingCounts().kept, 2u);
}

TEST(Recording, APluginThatRecordsNothingHereRunsEveryCall) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "");  // recording_begin: UNIMPLEMENTED
  ASSERT_TRUE(dev);
  EXPECT_TRUE(dev->records());
  auto ctx = ir::makeDefaultContext();
  auto dp = program(*dev, *ctx);
  ASSERT_TRUE(dp);
  std::vector<float> x = {1, 2, 3, 4}, y(4), z(4);
  int stream = 0;
  for (int i = 0; i < 3; ++i) {
    x[0] = static_cast<float>(i);
    Outcome r = run(*dp, x, y, z, &stream);
    EXPECT_FALSE(r.st.recorded || r.st.replayed);
    EXPECT_GT(r.st.kernels, 0);
    EXPECT_EQ(r.y, twice(x));
  }
  EXPECT_EQ(dp->recordingOff(), "");  // not refused: the plugin just did not record this stream
}

/// Three runs on a device whose recordings fail (`options`): each run's results are right,
/// none recorded or replayed, and the program's recordingOff() names the reason.
void expectEveryRunRight(const char* options, const char* reason) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", options);
  ASSERT_TRUE(dev);
  auto ctx = ir::makeDefaultContext();
  auto dp = program(*dev, *ctx);
  ASSERT_TRUE(dp);
  std::vector<float> x = {1, 2, 3, 4}, y(4), z(4);
  int stream = 0;
  for (int i = 0; i < 3; ++i) {
    x[1] = static_cast<float>(-i);
    std::fill(y.begin(), y.end(), 0.0f);
    Outcome r = run(*dp, x, y, z, &stream);
    EXPECT_FALSE(r.st.recorded || r.st.replayed);
    EXPECT_EQ(r.y, twice(x)) << "run " << i;  // the failed recording's work was queued again
    EXPECT_EQ(r.z, squared(x)) << "run " << i;
  }
  EXPECT_NE(dp->recordingOff().find(reason), std::string::npos) << dp->recordingOff();
}

TEST(Recording, ARefusedRecordingStopsRecordingTheProgramAndTheWorkRunsAnyway) {
  expectEveryRunRight("record=refuse", "record=refuse");
}

TEST(Recording, AFreshRecordingThatCannotLaunchStopsRecordingAndTheWorkRunsAnyway) {
  expectEveryRunRight("record=stale", "record=stale");
}

// A kept recording that later cannot run is dropped: that run queues the work, the program
// keeps recording, and the key gets a fresh recording.
TEST(Recording, AKeptRecordingThatExpiresIsDroppedAndRecordedAgain) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "record=expire");
  ASSERT_TRUE(dev);
  auto ctx = ir::makeDefaultContext();
  auto dp = program(*dev, *ctx);
  ASSERT_TRUE(dp);
  std::vector<float> x = {1, 2, 3, 4}, y(4), z(4);
  int stream = 0;
  // run 2 records; from run 3 on the kept one expires, is dropped, and the run records anew
  const bool recorded[] = {false, true, true, true};
  for (int i = 0; i < 4; ++i) {
    x[0] = static_cast<float>(7 * i);
    std::fill(y.begin(), y.end(), 0.0f);
    Outcome r = run(*dp, x, y, z, &stream);
    EXPECT_EQ(r.y, twice(x)) << "run " << i;
    EXPECT_EQ(r.st.recorded, recorded[i]) << "run " << i;
    EXPECT_FALSE(r.st.replayed) << "run " << i;
  }
  EXPECT_EQ(dp->recordingOff(), "");
  EXPECT_EQ(dp->recordingCounts().recorded, 3u);
  EXPECT_EQ(dp->recordingCounts().kept, 1u);
}

TEST(Recording, TheTrampolinesCheckTheirArgs) {
  auto dev = open(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "record=on");
  ASSERT_TRUE(dev);
  const plugsdk_api_t& api = dev->api();
  plugsdk_recording_args_t a{};
  a.struct_size = sizeof(a);
  a.client = dev->client();
  Status s = dev->check(api.recording_begin(&a), "recording_begin");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("stream is NULL"), std::string::npos) << s.toString();
  a.stream = dev->stream();
  a.recording = reinterpret_cast<plugsdk_recording_t*>(dev->stream());  // a stream, not a recording
  s = dev->check(api.recording_launch(&a), "recording_launch");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a recording handle"), std::string::npos) << s.toString();
  a.struct_size = sizeof(a) - sizeof(void*);
  EXPECT_EQ(dev->check(api.recording_end(&a), "recording_end").code(), StatusCode::kInvalidArgument);
  // A whole recording through the Device wrappers, empty: it replays as nothing.
  ASSERT_TRUE(dev->beginRecording(dev->stream()).isOk());
  auto r = dev->endRecording(dev->stream());
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(dev->launchRecording(*r, dev->stream()).isOk());
}

TEST(Recording, APluginWithoutTheEntriesRecordsNothing) {
  auto dev = open(PLUGSDK_TEST_PLUGIN_DIR, "frozen_v1_0", "");  // the minimal sample built as ABI 1.0
  ASSERT_TRUE(dev);
  EXPECT_FALSE(dev->records());
  EXPECT_EQ(dev->beginRecording(dev->stream()).code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace plugsdk::plugin
