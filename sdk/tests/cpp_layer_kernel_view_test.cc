// KernelView and evalIndex (plugsdk/kernel_view.hpp) over kernels from the core's encoder:
// loop bodies as nested ranges, element sizes, validation of malformed kernels and of every
// kernel the scheduler makes, floor semantics, indirect indices; and the worked example of
// docs/abi/reference.md, checked against the encoder.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/text/parser.h"
#include "plugsdk/kernel_view.hpp"
#include "sdk/tests/encoded_kernels.h"

namespace plugsdk::plugin {
namespace {

namespace sdk = plugsdk::sdk;

sdk::StmtRef nth(const sdk::StmtRange& r, size_t n) {
  auto it = r.begin();
  while (n--) ++it;
  return *it;
}

TEST(KernelView, WalksLoopBodiesAsNestedRanges) {
  auto enc = encode(kLoops);
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  ASSERT_TRUE(sdk::KernelView::validate(k).isOk()) << sdk::KernelView::validate(k).message();
  sdk::KernelView v(k);
  EXPECT_EQ(v.name(), "k0");
  EXPECT_EQ(v.text(), kernel::printKernel(*kernel::parseKernel(kLoops)));
  ASSERT_EQ(v.numArgs(), 4u);
  EXPECT_STREQ(v.arg(3).name, "y");
  EXPECT_EQ(v.arg(3).access, static_cast<uint32_t>(PLUGSDK_ACCESS_WRITE));
  ASSERT_EQ(v.numSymbols(), 1u);
  EXPECT_EQ(v.symbol(0), "s0");

  std::vector<uint32_t> top;
  std::vector<std::vector<uint32_t>> bodies;
  size_t seen = 0;
  for (const sdk::StmtRef s : v.body()) {
    top.push_back(s->kind);
    ++seen;
    if (!s.isLoop()) {
      EXPECT_TRUE(s.body().empty());
      continue;
    }
    bodies.emplace_back();
    for (const sdk::StmtRef t : s.body()) {
      bodies.back().push_back(t->kind);
      EXPECT_EQ(&t.stmt(), &v.stmt(t.position()));
      ++seen;
    }
  }
  EXPECT_EQ(top,
            (std::vector<uint32_t>{PLUGSDK_STMT_CONST, PLUGSDK_STMT_LOOP, PLUGSDK_STMT_SCALAR, PLUGSDK_STMT_LOOP}));
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0], (std::vector<uint32_t>{PLUGSDK_STMT_LOAD, PLUGSDK_STMT_REDUCE}));
  EXPECT_EQ(bodies[1], (std::vector<uint32_t>{PLUGSDK_STMT_LOAD, PLUGSDK_STMT_SCALAR, PLUGSDK_STMT_STORE}));
  EXPECT_EQ(seen, v.numStmts());

  // The store in the second loop: y[64*i0 + r0] at i0 = 3, r0 = 5.
  const sdk::StmtRef loop2 = nth(v.body(), 3);
  const sdk::StmtRef store = nth(loop2.body(), 2);
  ASSERT_EQ(store->kind, PLUGSDK_STMT_STORE);
  std::vector<int64_t> i = {3}, r = {5}, sym = {8};
  auto at = v.evalIndex(store->index, sdk::IndexEnv{i, r, sym});
  ASSERT_TRUE(at.isOk()) << at.status().message();
  EXPECT_EQ(*at, 197);
  auto grid = v.gridSizes(sdk::Span<const int64_t>(sym));
  ASSERT_TRUE(grid.isOk());
  EXPECT_EQ(*grid, std::vector<int64_t>{8});
  ASSERT_EQ(loop2->num_loop_sizes, 1u);
  EXPECT_EQ(*v.evalIndex(loop2->loop_sizes[0], sdk::IndexEnv{}), 64);
}

TEST(KernelView, StepsByTheKernelsElementSizesNotSizeof) {
  // A core of a later minor version: statements and arguments carry 24 more bytes each.
  auto enc = encode(kLoops);
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  const size_t stmtSize = sizeof(plugsdk_stmt_t) + 24, argSize = sizeof(plugsdk_kernel_arg_t) + 24;
  std::vector<unsigned char> stmts(k.num_stmts * stmtSize, 0xEE), args(k.num_args * argSize, 0xEE);
  for (size_t i = 0; i < k.num_stmts; ++i) std::memcpy(&stmts[i * stmtSize], &k.stmts[i], sizeof(plugsdk_stmt_t));
  for (size_t i = 0; i < k.num_args; ++i) std::memcpy(&args[i * argSize], &k.args[i], sizeof(plugsdk_kernel_arg_t));
  plugsdk_kernel_t wide = k;
  wide.stmt_size = stmtSize;
  wide.stmts = reinterpret_cast<const plugsdk_stmt_t*>(stmts.data());
  wide.arg_size = argSize;
  wide.args = reinterpret_cast<const plugsdk_kernel_arg_t*>(args.data());
  ASSERT_TRUE(sdk::KernelView::validate(wide).isOk()) << sdk::KernelView::validate(wide).message();
  sdk::KernelView v(wide);
  for (size_t i = 0; i < k.num_stmts; ++i) {
    EXPECT_EQ(v.stmt(i).kind, k.stmts[i].kind) << i;
    EXPECT_EQ(v.stmt(i).result, k.stmts[i].result) << i;
  }
  EXPECT_STREQ(v.arg(3).name, "y");
  std::vector<size_t> top;
  for (const sdk::StmtRef s : v.body()) top.push_back(s.position());
  EXPECT_EQ(top, (std::vector<size_t>{0, 1, 4, 5}));
}

TEST(KernelView, ValidateRefusesMalformedKernels) {
  auto enc = encode(kLoops);
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  auto refused = [](const plugsdk_kernel_t& bad, const std::string& part) {
    sdk::Status s = sdk::KernelView::validate(bad);
    EXPECT_EQ(s.code(), sdk::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  };
  plugsdk_kernel_t bad = k;
  bad.struct_size = offsetof(plugsdk_kernel_t, num_values);
  refused(bad, "kernel struct_size");
  bad = k;
  bad.num_stmts = 0;
  bad.stmts = nullptr;
  EXPECT_TRUE(sdk::KernelView::validate(bad).isOk());  // an empty body is fine...
  bad.num_stmts = 3;
  refused(bad, "NULL array");  // ...a missing one is not

  std::vector<plugsdk_stmt_t> stmts(k.stmts, k.stmts + k.num_stmts);
  bad = k;
  bad.stmts = stmts.data();
  stmts[1].body_count = 9;  // the first loop claims more than there is
  refused(bad, "statement 1: a LOOP body of 9 statements past the end of its block");
  stmts.assign(k.stmts, k.stmts + k.num_stmts);
  stmts[5].body_count = 0;  // the second loop loses its body: r0 is then used outside a loop
  refused(bad, "r0 is not in scope");
  stmts.assign(k.stmts, k.stmts + k.num_stmts);
  stmts[2].arg = 4;
  refused(bad, "statement 2: argument 4 of 4");
  stmts.assign(k.stmts, k.stmts + k.num_stmts);
  stmts[4].operands[1] = 99;
  refused(bad, "statement 4: operand %99");

  std::vector<plugsdk_index_insn_t> insns(k.index_insns, k.index_insns + k.num_index_insns);
  bad = k;
  bad.index_insns = insns.data();
  const plugsdk_index_expr_t load = k.stmts[2].index;
  insns[load.first].op = PLUGSDK_INDEX_MUL;  // pops an empty stack
  refused(bad, "the stack underflows");
  insns.assign(k.index_insns, k.index_insns + k.num_index_insns);
  insns[load.first + load.count - 1].op = 77;
  refused(bad, "unknown op 77");
  insns.assign(k.index_insns, k.index_insns + k.num_index_insns);
  bad.num_index_insns = load.first;  // programs reach past the pool
  refused(bad, "outside the pool");
}

/// Every kernel the scheduler makes, for a graph with every statement kind and for the
/// conformance models, passes validate and walks completely: the layer never refuses a
/// kernel of the core's.
TEST(KernelView, EveryScheduledKernelValidates) {
  const char* mix = R"(graph @mix(%x: f32[s0, 16], %i: i64[s0, 4], %y: f32[4, 16], %t: i64[2, 16]) {
  %sm = aten._softmax(%x) {dim = 1, half_to_float = false}
  %p = aten.constant_pad_nd(%sm) {pad = [1, 1], value = 0.5}
  %g = aten.gather(%x, %i) {dim = 1}
  %c = aten.cat(%x, %x) {dim = 1}
  %s = aten.scatter_add(%y, %t, %y) {dim = 0}
  %d, %m = aten.native_dropout(%x) {p = 0.25, train = true, seed = 3}
  %h = aten._to_copy(%g) {dtype = f16}
  return %p, %h, %c, %s, %d
})";
  std::vector<std::string> graphs = {mix};
  for (const char* model : {"mlp", "resnet18", "transformer_encoder", "gpt2_block"}) {
    std::ifstream in(std::string(PLUGSDK_SOURCE_DIR "/conformance/models/") + model + ".pgraph");
    ASSERT_TRUE(in) << model;
    std::stringstream ss;
    ss << in.rdbuf();
    graphs.push_back(ss.str());
  }
  auto ctx = ir::makeDefaultContext();
  size_t kernels = 0;
  std::set<uint32_t> kinds;
  for (const std::string& text : graphs) {
    auto g = text::parseGraph(*ctx, text);
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    auto c = compile::compileGraph(*ctx, *g, {});
    ASSERT_TRUE(c.isOk()) << c.status().toString();
    for (const kernel::Kernel& k : c->program.kernels) {
      auto enc = encodeKernel(k);
      ASSERT_TRUE(enc.isOk()) << enc.status().toString();
      const sdk::Status st = sdk::KernelView::validate((*enc)->get());
      ASSERT_TRUE(st.isOk()) << k.name << ": " << st.message() << "\n" << (*enc)->get().text;
      sdk::KernelView v((*enc)->get());
      size_t walked = 0;
      for (const sdk::StmtRef s : v.body()) {
        kinds.insert(s->kind);
        ++walked;
        for (const sdk::StmtRef t : s.body()) kinds.insert(t->kind), ++walked;
      }
      EXPECT_EQ(walked, v.numStmts()) << k.name;
      ++kernels;
    }
  }
  EXPECT_GT(kernels, 20u);
  EXPECT_EQ(kinds.size(), 11u) << "not every statement kind was exercised";
}

TEST(KernelView, SymbolicLoopExtentsValidateAndEvaluate) {
  auto enc = encode(R"(kernel @rows(%x: f32 in, %y: f32 out) grid [s0] {
  loop [s1] {
    %0 = load %x[i0*s1+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
})");
  ASSERT_TRUE(enc);
  ASSERT_TRUE(sdk::KernelView::validate(enc->get()).isOk()) << sdk::KernelView::validate(enc->get()).message();
  sdk::KernelView v(enc->get());
  std::vector<int64_t> sym(v.numSymbols(), 0);
  for (size_t i = 0; i < v.numSymbols(); ++i) sym[i] = v.symbol(i) == "s1" ? 9 : 3;
  auto n = v.evalIndex(v.stmt(0).loop_sizes[0], sdk::IndexEnv{{}, {}, sym});
  ASSERT_TRUE(n.isOk()) << n.status().message();
  EXPECT_EQ(*n, 9);
}

/// Python's // and % computed another way (through long double floor), as the oracle.
int64_t pyFloorDiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<long double>(a) / static_cast<long double>(b)));
}
int64_t pyMod(int64_t a, int64_t b) { return a - b * pyFloorDiv(a, b); }

TEST(EvalIndex, FloorSemanticsMatchPython) {
  EXPECT_EQ(sdk::floorDiv(-7, 2), -4);
  EXPECT_EQ(sdk::floorDiv(7, -2), -4);
  EXPECT_EQ(sdk::floorDiv(-7, -2), 3);
  EXPECT_EQ(sdk::floorDiv(-8, 2), -4);
  EXPECT_EQ(sdk::floorMod(-7, 3), 2);
  EXPECT_EQ(sdk::floorMod(7, -3), -2);
  EXPECT_EQ(sdk::floorMod(-7, -3), -1);
  EXPECT_EQ(sdk::floorMod(-6, 3), 0);
  EXPECT_EQ(sdk::floorMod(std::numeric_limits<int64_t>::min(), -1), 0);
  for (int64_t a = -20; a <= 20; ++a)
    for (int64_t b : {-7, -3, -2, -1, 1, 2, 3, 5}) {
      ASSERT_EQ(sdk::floorDiv(a, b), pyFloorDiv(a, b)) << a << " // " << b;
      ASSERT_EQ(sdk::floorMod(a, b), pyMod(a, b)) << a << " % " << b;
    }
}

TEST(EvalIndex, EncodedFloorDivAndModWithNegativeOperands) {
  // Grid points i0 - 7 go negative: (i0-7)//3 and (i0-7)%3 must floor, not truncate.
  auto enc = encode(R"(kernel @fm(%y: i64 out) grid [s0] {
  %0 = index (i0-7)//3 : i64
  %1 = index (i0-7) % 3 : i64
  %2 = index (s1-i0)//4*s1+(i0-7) % s1 : i64
  store %y[3*i0], %0
  store %y[3*i0+1], %1
  store %y[3*i0+2], %2
})");
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  ASSERT_TRUE(sdk::KernelView::validate(k).isOk()) << sdk::KernelView::validate(k).message();
  sdk::KernelView v(k);
  ASSERT_EQ(v.numSymbols(), 2u);
  const size_t s1 = v.symbol(0) == "s1" ? 0 : 1;
  int floors = 0;
  for (size_t i = 0; i < k.num_index_insns; ++i)
    floors += k.index_insns[i].op == PLUGSDK_INDEX_FLOORDIV || k.index_insns[i].op == PLUGSDK_INDEX_MOD;
  EXPECT_GE(floors, 4);
  for (int64_t s1v : {5, 6}) {
    std::vector<int64_t> sym(2, 16);
    sym[s1] = s1v;
    for (int64_t i0 = 0; i0 < 16; ++i0) {
      std::vector<int64_t> grid = {i0};
      const sdk::IndexEnv env{grid, {}, sym};
      const int64_t want[3] = {pyFloorDiv(i0 - 7, 3), pyMod(i0 - 7, 3),
                               pyFloorDiv(s1v - i0, 4) * s1v + pyMod(i0 - 7, s1v)};
      for (size_t j = 0; j < 3; ++j) {
        auto got = v.evalIndex(v.stmt(j).index, env);
        ASSERT_TRUE(got.isOk()) << got.status().message();
        EXPECT_EQ(*got, want[j]) << "statement " << j << " at i0 = " << i0 << ", s1 = " << s1v;
      }
    }
  }
}

TEST(EvalIndex, IndirectIndicesReadValues) {
  auto enc = encode(R"(kernel @g(%x: f32 in, %t: i64 in, %y: f32 out) grid [4, 8] {
  %0 = load %t[i0] : i64
  %1 = load %x[8*%0+i1] : f32
  store %y[8*i0+i1], %1
})");
  ASSERT_TRUE(enc);
  sdk::KernelView v(enc->get());
  ASSERT_TRUE(sdk::KernelView::validate(enc->get()).isOk());
  std::vector<int64_t> grid = {2, 5};
  auto got = v.evalIndex(v.stmt(1).index, sdk::IndexEnv{grid, {}, {}}, [](int32_t id) { return id == 0 ? 3 : -1000; });
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_EQ(*got, 29);
  // Without a value lookup, a VALUE operand is an error, not a guess.
  EXPECT_EQ(v.evalIndex(v.stmt(1).index, sdk::IndexEnv{grid, {}, {}}).status().code(), sdk::Code::kOutOfRange);
}

TEST(EvalIndex, ErrorsAreReportedNotUndefined) {
  using Insn = plugsdk_index_insn_t;
  auto run = [](std::vector<Insn> p, const sdk::IndexEnv& env = {}) {
    return sdk::evalIndex(sdk::Span<const Insn>(p), plugsdk_index_expr_t{0, static_cast<uint32_t>(p.size())}, env);
  };
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  auto c = [](int64_t v) { return Insn{PLUGSDK_INDEX_CONST, 0, v}; };
  auto op = [](plugsdk_index_op_t o) { return Insn{o, 0, 0}; };
  EXPECT_EQ(*run({c(7), c(-2), op(PLUGSDK_INDEX_FLOORDIV)}), -4);
  EXPECT_EQ(*run({c(7), c(-3), op(PLUGSDK_INDEX_MOD)}), -2);
  EXPECT_EQ(*run({c(2), c(3), c(4), op(PLUGSDK_INDEX_MUL), op(PLUGSDK_INDEX_SUB)}), -10);
  EXPECT_NE(run({c(1), c(0), op(PLUGSDK_INDEX_FLOORDIV)}).status().message().find("division by zero"),
            std::string::npos);
  EXPECT_NE(run({c(1), c(0), op(PLUGSDK_INDEX_MOD)}).status().message().find("division by zero"), std::string::npos);
  EXPECT_NE(run({c(kMin), c(-1), op(PLUGSDK_INDEX_FLOORDIV)}).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(run({c(kMax), c(1), op(PLUGSDK_INDEX_ADD)}).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(run({c(kMax), c(2), op(PLUGSDK_INDEX_MUL)}).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(run({c(1), op(PLUGSDK_INDEX_ADD)}).status().message().find("underflows"), std::string::npos);
  EXPECT_NE(run({c(1), c(2)}).status().message().find("leaves 2 values"), std::string::npos);
  EXPECT_NE(run({Insn{PLUGSDK_INDEX_LOOP_VAR, 0, 0}}).status().message().find("r0 with a loop of rank 0"),
            std::string::npos);
  std::vector<int64_t> grid = {4};
  EXPECT_NE(run({Insn{PLUGSDK_INDEX_GRID_VAR, 0, 1}}, sdk::IndexEnv{grid, {}, {}}).status().message().find("i1"),
            std::string::npos);
  EXPECT_NE(run({Insn{PLUGSDK_INDEX_SYMBOL, 0, 0}}).status().message().find("symbol 0 with 0 values"),
            std::string::npos);
  // A program longer than the evaluator's inline stack.
  std::vector<Insn> longProgram;
  for (int i = 0; i < 40; ++i) longProgram.push_back(c(1));
  for (int i = 0; i < 39; ++i) longProgram.push_back(op(PLUGSDK_INDEX_ADD));
  EXPECT_EQ(*run(longProgram), 40);
}

// ---- the worked example of docs/abi/reference.md -----------------------------------------------

const char* kExample = R"(kernel @rowmax(%x: f32 in, %y: f32 out) grid [s0, 6] {
  loop [4] {
    %0 = load %x[4*(i1//2)+24*i0+12*(i1 % 2)+r0] : f32
    %1 = reduce max %0 : f32
  }
  %2 = const 0.5 : f32
  %3 = mul %1, %2 : f32
  store %y[6*i0+i1], %3
})";

const char* dtypeName(uint32_t d) {
  static const char* const kNames[] = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "BF16", "F32", "F64"};
  return d < 10 ? kNames[d] : "?";
}
const char* kindName(uint32_t k) {
  static const char* const kNames[] = {"LOAD", "CONST",  "INDEX", "SCALAR", "WHERE", "CAST",
                                       "RAND", "REDUCE", "STORE", "LOOP",   "CHECK"};
  return k < 11 ? kNames[k] : "?";
}
std::string range(plugsdk_index_expr_t e) {
  return "{" + std::to_string(e.first) + ", " + std::to_string(e.count) + "}";
}

/// The encoded arrays of a kernel, as the reference shows them.
std::string describeEncoding(const plugsdk_kernel_t& k) {
  std::ostringstream o;
  o << "name        \"" << k.name << "\"\n";
  o << "args        arg_size " << k.arg_size << ", num_args " << k.num_args << "\n";
  for (size_t i = 0; i < k.num_args; ++i)
    o << "  [" << i << "] name \"" << k.args[i].name << "\", dtype " << k.args[i].dtype << " ("
      << dtypeName(k.args[i].dtype) << "), access " << k.args[i].access << "\n";
  o << "symbols     num_symbols " << k.num_symbols << ":";
  for (size_t i = 0; i < k.num_symbols; ++i) o << " [" << i << "] \"" << k.symbols[i] << "\"";
  o << "\ngrid        num_grid " << k.num_grid << ":";
  for (size_t i = 0; i < k.num_grid; ++i) o << " [" << i << "] " << range(k.grid[i]);
  o << "\nindex_insns num_index_insns " << k.num_index_insns << " ({op, operand})\n";
  for (size_t i = 0; i < k.num_index_insns; ++i)
    o << "  [" << (i < 10 ? " " : "") << i << "] " << sdk::detail::indexOpName(k.index_insns[i].op) << " "
      << k.index_insns[i].operand << "\n";
  o << "stmts       stmt_size " << k.stmt_size << ", num_stmts " << k.num_stmts << " (fields that matter)\n";
  for (size_t i = 0; i < k.num_stmts; ++i) {
    const plugsdk_stmt_t& st = k.stmts[i];
    o << "  [" << i << "] " << kindName(st.kind) << ": result " << st.result;
    if (st.kind != PLUGSDK_STMT_LOOP && st.kind != PLUGSDK_STMT_STORE) o << ", dtype " << dtypeName(st.dtype);
    if (st.kind == PLUGSDK_STMT_LOAD || st.kind == PLUGSDK_STMT_STORE) o << ", arg " << st.arg;
    static const char* const kReduce[] = {"SUM", "PROD", "MAX", "MIN", "ARGMAX", "ARGMIN"};
    static const char* const kCombine[] = {"NONE", "SUM", "PROD", "MAX", "MIN"};
    if (st.kind == PLUGSDK_STMT_SCALAR) o << ", op " << st.op << (st.op == PLUGSDK_OP_MUL ? " (MUL)" : "");
    if (st.kind == PLUGSDK_STMT_REDUCE) o << ", op " << st.op << " (" << (st.op < 6 ? kReduce[st.op] : "?") << ")";
    if (st.kind == PLUGSDK_STMT_STORE) o << ", op " << st.op << " (" << (st.op < 5 ? kCombine[st.op] : "?") << ")";
    if (st.num_operands) {
      o << ", operands [";
      for (uint32_t j = 0; j < st.num_operands; ++j) o << (j ? ", " : "") << st.operands[j];
      o << "]";
    }
    if (sdk::detail::usesIndex(st.kind)) o << ", index " << range(st.index);
    if (st.kind == PLUGSDK_STMT_CONST) o << ", fvalue " << st.fvalue;
    if (st.kind == PLUGSDK_STMT_LOOP) {
      o << ", body_count " << st.body_count << ", loop_sizes [";
      for (uint32_t j = 0; j < st.num_loop_sizes; ++j) o << (j ? ", " : "") << range(st.loop_sizes[j]);
      o << "]";
    }
    o << "\n";
  }
  o << "num_values  " << k.num_values << "\n";
  return o.str();
}

/// The block the reference carries between its markers: text form, then the encoding.
std::string workedExample() {
  auto enc = encode(kExample);
  if (!enc) return "(encoding failed)";
  return std::string("```\n") + enc->get().text + "```\n\n```\n" + describeEncoding(enc->get()) + "```\n";
}

TEST(ReferenceDoc, WorkedExampleMatchesTheEncoder) {
  std::ifstream in(PLUGSDK_SOURCE_DIR "/docs/abi/reference.md");
  ASSERT_TRUE(in) << "cannot read docs/abi/reference.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- worked-example:begin (generated: sdk/tests/cpp_layer_kernel_view_test.cc) -->\n";
  const std::string end = "<!-- worked-example:end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string want = workedExample();
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), want)
      << "docs/abi/reference.md's worked example is stale; the encoder gives:\n"
      << want;
  // The example evaluates as the reference says: at i0 = 1, i1 = 3, r0 = 2 the load reads
  // element 4*(3//2) + 24*1 + 12*(3%2) + 2 = 42.
  auto enc = encode(kExample);
  ASSERT_TRUE(enc);
  sdk::KernelView v(enc->get());
  std::vector<int64_t> grid = {1, 3}, loop = {2}, sym = {5};
  EXPECT_EQ(*v.evalIndex(v.stmt(1).index, sdk::IndexEnv{grid, loop, sym}), 42);
}

}  // namespace
}  // namespace plugsdk::plugin
