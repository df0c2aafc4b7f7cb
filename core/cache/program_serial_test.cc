// Scheduled programs survive serialization exactly (the printed program, every library
// call's attributes and views, kernels, memory plan), including the conformance suite's
// resnet18 and GPT-2 block; every truncation and corruption of the bytes is an error, never
// a crash or a different program.
#include "core/cache/program_serial.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/compile/pipeline.h"
#include "core/text/parser.h"

namespace plugsdk::cache {
namespace {

sched::Program compileText(const std::string& src) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, src);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, {});
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return c.isOk() ? std::move(c->program) : sched::Program{};
}

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void expectRoundTrip(const sched::Program& p) {
  std::string bytes = serializeProgram(p);
  auto back = deserializeProgram(bytes);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(sched::printProgram(*back), sched::printProgram(p));
  EXPECT_EQ(serializeProgram(*back), bytes) << "a second round trip changes nothing";
}

const char* kConvGraph = R"(graph @c(%x: f32[s0, 3, 8, 8], %w: f32[4, 3, 3, 3], %m: f32[4], %v: f32[4]) {
  %y = aten.convolution(%x, %w, none) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false}
  %b, %b1, %b2 = aten._native_batch_norm_legit_no_training(%y, %m, %v, %m, %v) {eps = 1e-05, momentum = 0.1}
  %r = aten.relu(%b)
  %s = aten._softmax(%r) {dim = 1, half_to_float = false}
  return %s
})";

TEST(ProgramSerial, RoundTripsLibraryCallsEpiloguesAndSymbols) {
  sched::Program p = compileText(kConvGraph);
  ASSERT_GT(p.numCalls(), 0);
  ASSERT_FALSE(p.symbols.empty());
  expectRoundTrip(p);
}

TEST(ProgramSerial, RoundTripsTheConformanceModels) {
  for (const char* name : {"resnet18", "gpt2_block", "transformer_encoder"}) {
    std::string src = readFile(std::string(PLUGSDK_SOURCE_DIR) + "/conformance/models/" + name + ".pgraph");
    ASSERT_FALSE(src.empty()) << name;
    SCOPED_TRACE(name);
    expectRoundTrip(compileText(src));
  }
}

TEST(ProgramSerial, EveryTruncationAndCorruptionIsAnError) {
  sched::Program p = compileText(kConvGraph);
  std::string bytes = serializeProgram(p);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = deserializeProgram(bytes.substr(0, n));
    ASSERT_FALSE(r.isOk()) << "truncated to " << n << " bytes";
    EXPECT_NE(r.status().message().find("program bytes"), std::string::npos) << r.status().toString();
  }
  // Corrupt one byte at a time (every 7th, to keep it quick): an error, or (when the byte was
  // inside a name) a program that still round-trips -- never a crash.
  int errors = 0;
  for (size_t i = 0; i < bytes.size(); i += 7) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    auto r = deserializeProgram(bad);
    if (!r.isOk()) ++errors;
  }
  EXPECT_GT(errors, 0);
  auto junk = deserializeProgram("17:plugsdk-program 2");
  ASSERT_FALSE(junk.isOk());
  EXPECT_NE(junk.status().message().find("not a serialized program"), std::string::npos);
}

}  // namespace
}  // namespace plugsdk::cache
