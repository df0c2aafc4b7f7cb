// The C++ layer's table for plugin classes the test plugin does not cover, built in this
// binary (no shared library): compile_subgraph exported only with kTakesSubgraphs, the
// device_info consistency check, library calls (arity with an epilogue, absent inputs) and
// subgraph arguments. The tables are made by Plugin<B>::init, exactly what
// PLUGSDK_DEFINE_PLUGIN's entry point calls.
#include <gtest/gtest.h>

#include <string>

#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;

/// Takes subgraphs, and records what compile_library / compile_subgraph receive.
class GraphBackend : public sdk::Backend<> {
 public:
  static constexpr bool kTakesSubgraphs = true;
  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{2, ""}; }
  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t device) override {
    sdk::DeviceInfo d;
    d.name = "graph" + std::to_string(device);
    d.takesSubgraphs = true;
    return d;
  }
  sdk::StatusOr<std::unique_ptr<sdk::Buffer>> allocate(uint32_t, uint32_t, uint64_t) override {
    return std::make_unique<sdk::Buffer>();
  }
  sdk::StatusOr<std::unique_ptr<sdk::Executable>> compileLibrary(const sdk::LibraryCall& c) override {
    seen = "op " + std::to_string(c.op) + ", " + std::to_string(c.inputs.size()) + " inputs, " +
           std::to_string(c.outputs.size()) + " outputs, epilogue " +
           (c.epilogue ? std::string(c.epilogue->name()) : "none") + ", attributes " + std::string(c.attributes);
    return std::make_unique<sdk::Executable>();
  }
  sdk::StatusOr<std::unique_ptr<sdk::Executable>> compileSubgraph(const sdk::SubgraphCall& c) override {
    seen = "device " + std::to_string(c.device) + ", " + std::to_string(c.symbols.size()) + " symbols, graph " +
           std::string(c.graphText.substr(0, 6));
    return std::make_unique<sdk::Executable>();
  }
  sdk::Status launch(const Launch& l) override {
    seen = std::to_string(l.buffers.size()) + " buffers, first " + (l.buffers[0] ? "set" : "absent");
    return sdk::Status::ok();
  }
  std::string seen;
};

/// Reports takes_subgraphs without setting kTakesSubgraphs: a plugin bug the layer reports.
class InconsistentBackend : public sdk::Backend<> {
 public:
  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{1, "ignored"}; }
  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    sdk::DeviceInfo d;
    d.takesSubgraphs = true;
    return d;
  }
};

template <typename B>
const plugsdk_api_t* table() {
  plugsdk_init_args_t a{};
  a.struct_size = sizeof(a);
  a.core_abi_major = PLUGSDK_ABI_VERSION_MAJOR;
  a.core_abi_minor = PLUGSDK_ABI_VERSION_MINOR;
  return sdk::detail::Plugin<B>::init(&a, "direct", "1");
}

/// code and message of an error (destroyed); {0, ""} for success.
std::pair<uint32_t, std::string> take(const plugsdk_api_t& api, plugsdk_error_t* e) {
  if (!e) return {0, ""};
  plugsdk_error_info_args_t i{};
  i.struct_size = sizeof(i);
  i.error = e;
  EXPECT_EQ(api.error_info(&i), nullptr);
  std::pair<uint32_t, std::string> out{i.out_code, i.out_message};
  plugsdk_error_destroy_args_t d{};
  d.struct_size = sizeof(d);
  d.error = e;
  EXPECT_EQ(api.error_destroy(&d), nullptr);
  return out;
}

template <typename A>
A make(plugsdk_client_t* c) {
  A a{};
  a.struct_size = sizeof(A);
  a.client = c;
  return a;
}

plugsdk_client_t* create(const plugsdk_api_t& api) {
  plugsdk_client_create_args_t a{};
  a.struct_size = sizeof(a);
  EXPECT_EQ(take(api, api.client_create(&a)).first, 0u);
  return a.out_client;
}

void destroy(const plugsdk_api_t& api, plugsdk_client_t* c) {
  auto a = make<plugsdk_client_destroy_args_t>(c);
  EXPECT_EQ(take(api, api.client_destroy(&a)), (std::pair<uint32_t, std::string>{0, ""}));
}

TEST(CppLayerTable, SubgraphsAreExportedOnlyWhenTheClassSaysSo) {
  EXPECT_EQ(table<InconsistentBackend>()->compile_subgraph, nullptr);
  const plugsdk_api_t& api = *table<GraphBackend>();
  ASSERT_NE(api.compile_subgraph, nullptr);
  EXPECT_STREQ(api.plugin_name, "direct");
  plugsdk_client_t* c = create(api);
  auto* backend = static_cast<GraphBackend*>(reinterpret_cast<sdk::Handle*>(c));  // the test peeks inside

  auto g = make<plugsdk_compile_subgraph_args_t>(c);
  EXPECT_EQ(take(api, api.compile_subgraph(&g)).second, "compile_subgraph: args->graph_text is NULL");
  g.graph_text = "graph @g(%x: f32[s0]) { return %x }";
  g.num_symbols = 1;
  EXPECT_EQ(take(api, api.compile_subgraph(&g)).second, "compile_subgraph: args->symbols is NULL with a nonzero count");
  const char* syms[] = {"s0"};
  g.symbols = syms;
  g.device = 1;
  ASSERT_EQ(take(api, api.compile_subgraph(&g)).first, 0u);
  EXPECT_EQ(backend->seen, "device 1, 1 symbols, graph graph ");
  auto x = make<plugsdk_executable_destroy_args_t>(c);
  x.executable = g.out_executable;
  EXPECT_EQ(take(api, api.executable_destroy(&x)).first, 0u);

  auto i = make<plugsdk_device_info_args_t>(c);
  plugsdk_device_info_t info{};
  info.struct_size = sizeof(info);
  i.info = &info;
  i.device = 1;
  ASSERT_EQ(take(api, api.device_info(&i)).first, 0u);
  EXPECT_STREQ(info.name, "graph1");
  EXPECT_TRUE(info.takes_subgraphs);
  destroy(api, c);
}

TEST(CppLayerTable, DeviceInfoMustAgreeWithTheTable) {
  const plugsdk_api_t& api = *table<InconsistentBackend>();
  plugsdk_client_t* c = create(api);
  auto i = make<plugsdk_device_info_args_t>(c);
  plugsdk_device_info_t info{};
  info.struct_size = sizeof(info);
  i.info = &info;
  auto r = take(api, api.device_info(&i));
  EXPECT_EQ(r.first, static_cast<uint32_t>(PLUGSDK_CODE_INTERNAL));
  EXPECT_NE(r.second.find("device_info: the device reports takes_subgraphs"), std::string::npos) << r.second;
  // The reason is kept while the client lives.
  auto n = make<plugsdk_device_count_args_t>(c);
  ASSERT_EQ(take(api, api.device_count(&n)).first, 0u);
  EXPECT_STREQ(n.out_reason, "ignored");
  destroy(api, c);
}

TEST(CppLayerTable, LibraryCallsCountEpilogueBuffersAndAllowAbsentInputs) {
  const plugsdk_api_t& api = *table<GraphBackend>();
  plugsdk_client_t* c = create(api);
  auto* backend = static_cast<GraphBackend*>(reinterpret_cast<sdk::Handle*>(c));

  // matmul(a, b, absent bias) -> out, with an epilogue kernel: acc + its own extra input.
  std::vector<plugsdk_index_insn_t> pool = {{PLUGSDK_INDEX_SYMBOL, 0, 0}, {PLUGSDK_INDEX_CONST, 0, 1}};
  plugsdk_index_expr_t size{0, 1}, one{1, 1};
  const plugsdk_tensor_desc_t d{PLUGSDK_DTYPE_F32, 1, &size, &one, one};
  const plugsdk_tensor_desc_t absent{UINT32_MAX, 0, nullptr, nullptr, {0, 0}};
  plugsdk_tensor_desc_t inputs[] = {d, d, absent}, outputs[] = {d};
  const plugsdk_kernel_arg_t eargs[] = {{"acc", PLUGSDK_DTYPE_F32, PLUGSDK_ACCESS_READ | PLUGSDK_ACCESS_ACCUMULATOR},
                                        {"z", PLUGSDK_DTYPE_F32, PLUGSDK_ACCESS_READ},
                                        {"y", PLUGSDK_DTYPE_F32, PLUGSDK_ACCESS_WRITE}};
  plugsdk_kernel_t epilogue{};
  epilogue.struct_size = sizeof(epilogue);
  epilogue.name = "epi";
  epilogue.arg_size = sizeof(plugsdk_kernel_arg_t);
  epilogue.num_args = 3;
  epilogue.args = eargs;
  epilogue.stmt_size = sizeof(plugsdk_stmt_t);
  const char* esyms[] = {"s7"};
  epilogue.num_symbols = 1;
  epilogue.symbols = esyms;
  const char* syms[] = {"s0"};
  auto a = make<plugsdk_compile_library_args_t>(c);
  a.op = PLUGSDK_LIBRARY_MATMUL;
  a.attributes = "{}";
  a.num_inputs = 3;
  a.inputs = inputs;
  a.num_outputs = 1;
  a.outputs = outputs;
  a.index_insns = pool.data();
  a.num_index_insns = pool.size();
  a.symbols = syms;
  a.num_symbols = 1;
  a.epilogue = &epilogue;
  ASSERT_EQ(take(api, api.compile_library(&a)), (std::pair<uint32_t, std::string>{0, ""}));
  EXPECT_EQ(backend->seen, "op 1, 3 inputs, 1 outputs, epilogue epi, attributes {}");

  // Buffers: 3 inputs + 1 output + 2 epilogue arguments that are not the accumulator.
  auto al = make<plugsdk_buffer_allocate_args_t>(c);
  al.memory_kind = PLUGSDK_MEMORY_DEVICE;
  ASSERT_EQ(take(api, api.buffer_allocate(&al)).first, 0u);
  plugsdk_buffer_t* b = al.out_buffer;
  plugsdk_buffer_t* bufs[] = {nullptr, b, nullptr, b, b, b};
  uint64_t offsets[6] = {};
  int64_t values[] = {4, 7};
  auto l = make<plugsdk_launch_args_t>(c);
  l.executable = a.out_executable;
  l.num_buffers = 5;
  l.buffers = bufs;
  l.offsets = offsets;
  l.num_symbols = 2;
  l.symbol_values = values;
  EXPECT_EQ(take(api, api.launch(&l)).second, "launch: 5 buffers for an executable that takes 6");
  l.num_buffers = 6;
  l.num_symbols = 1;  // the call's symbols, then the epilogue's own: 2 values, as the core binds them
  EXPECT_EQ(take(api, api.launch(&l)).second, "launch: 1 symbol values for an executable that takes 2");
  l.num_symbols = 2;
  EXPECT_EQ(take(api, api.launch(&l)).first, 0u);  // NULL buffers are absent library inputs
  EXPECT_EQ(backend->seen, "6 buffers, first absent");

  // A symbol the pool does not have, or an op that is two bits: refused before the plugin.
  pool[0].operand = 1;
  auto r = take(api, api.compile_library(&a));
  EXPECT_EQ(r.first, static_cast<uint32_t>(PLUGSDK_CODE_INVALID_ARGUMENT));
  EXPECT_NE(r.second.find("compile_library: input 0 size 0: index instruction 0 (SYMBOL): symbol 1 of 1"),
            std::string::npos)
      << r.second;

  auto x = make<plugsdk_executable_destroy_args_t>(c);
  x.executable = a.out_executable;
  EXPECT_EQ(take(api, api.executable_destroy(&x)).first, 0u);
  auto f = make<plugsdk_buffer_free_args_t>(c);
  f.buffer = b;
  EXPECT_EQ(take(api, api.buffer_free(&f)).first, 0u);
  destroy(api, c);
}

}  // namespace
