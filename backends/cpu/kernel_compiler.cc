// Compiling one kernel through the cache and the stages (see kernel_compiler.h).
#include "backends/cpu/kernel_compiler.h"

#include <chrono>
#include <fstream>

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace plugsdk::cpu {

namespace {

std::string printModule(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

std::string safeName(std::string_view n) {
  std::string s;
  for (char c : n) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return s.empty() ? "kernel" : s;
}

}  // namespace

void KernelCompiler::dump(const std::string& stem, const std::string& suffix, const std::string& text) const {
  if (options_.dumpDir.empty()) return;
  std::ofstream f(options_.dumpDir + "/" + stem + suffix);
  f << text;
}

sdk::StatusOr<std::string> KernelCompiler::build(const sdk::KernelView& k, const std::string& entry,
                                                 const std::string& stem, CompiledKernel& out) {
  const std::string what = "kernel @" + std::string(k.name());
  llvm::LLVMContext ctx;
  sdk::StatusOr<lowering::LoweredKernel> lowered = lowering::lowerKernel(ctx, k, jit_.isa().loweringTarget(), entry);
  if (!lowered.isOk()) return lowered.status().withContext(what);
  llvm::Module& m = *lowered->module;
  sdk::Status st = jit_.prepare(m);
  if (!st.isOk()) return st.withContext(what);
  if (options_.breakIr) {
    // A block without a terminator: the verifier rejects it.
    llvm::BasicBlock::Create(ctx, "broken_on_purpose", m.getFunction(entry));
  }
  dump(stem, ".ll", printModule(m));
  auto failed = [&](const sdk::Status& s, const char* stage) {
    dump(stem, ".failed.ll", printModule(m));
    std::string where = options_.dumpDir.empty()
                            ? " (set the client option dump=DIR to keep the failing IR)"
                            : " (the failing IR is in " + options_.dumpDir + "/" + stem + ".failed.ll)";
    return sdk::Status(s.code(), what + ": LLVM " + stage + " failed: " + s.message() + where);
  };
  st = jit_.optimize(m, options_.optLevel);
  if (!st.isOk()) return failed(st, "optimization");
  dump(stem, ".opt.ll", printModule(m));
  if (!options_.dumpDir.empty()) {
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(m);
    sdk::StatusOr<std::string> s = jit_.emitAssembly(*clone);
    if (s.isOk()) dump(stem, ".s", *s);
  }
  sdk::StatusOr<std::string> obj = jit_.emitObject(m);
  if (!obj.isOk()) return failed(obj.status(), "code generation");
  out.mode = lowered->mode;
  out.lanes = lowered->lanes;
  out.checkMessages = lowered->checkMessages;
  return obj;
}

sdk::StatusOr<std::shared_ptr<const CompiledKernel>> KernelCompiler::compile(const sdk::KernelView& k) {
  const auto start = std::chrono::steady_clock::now();
  auto out = std::make_shared<CompiledKernel>();
  out->name = std::string(k.name());
  out->numArgs = k.numArgs();
  out->numSymbols = k.numSymbols();
  out->pool.assign(k.indexPool().begin(), k.indexPool().end());
  for (size_t d = 0; d < k.numGrid(); ++d) out->grid.push_back(k.grid(d));
  for (const sdk::StmtRef s : k.body())
    if (s.isLoop()) out->loops.emplace_back(s->loop_sizes, s->loop_sizes + s->num_loop_sizes);
  const Isa& isa = jit_.isa();
  out->key = hashParts({kCodegenVersion, std::string(llvmVersion()), std::string(isa.name()), isa.llvmCpu,
                        isa.llvmFeatures, std::to_string(options_.optLevel), kernelFingerprint(k)});
  const std::string entry = "plugsdk_k_" + out->key.substr(0, 24);
  const std::string stem = safeName(k.name()) + "." + out->key.substr(0, 8);
  dump(stem, ".kir", std::string(k.text()));

  // The mode and check messages come from the kernel itself, so a cached object needs them
  // recomputed, not stored.
  auto fillMeta = [&] {
    out->mode = lowering::chooseMode(k, isa.loweringTarget());
    out->lanes = out->mode == lowering::VectorMode::kScalar ? 1 : isa.f32Lanes();
    for (size_t i = 0; i < k.numStmts(); ++i)
      if (k.stmt(i).kind == PLUGSDK_STMT_CHECK) out->checkMessages.emplace_back(k.stmt(i).message);
  };
  auto finish = [&](const char* origin) -> std::shared_ptr<const CompiledKernel> {
    sdk::StatusOr<void*> addr = out->code->lookup(entry);
    out->entry = reinterpret_cast<lowering::KernelEntry>(*addr);
    out->origin = origin;
    out->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    out->log += std::string(origin) + ", " + lowering::modeName(out->mode) + " mode, " + std::to_string(out->lanes) +
                " lanes, ISA " + std::string(isa.name()) + ", key " + out->key.substr(0, 16) + "\n";
    return out;
  };

  if (auto it = memory_.find(out->key); it != memory_.end()) {
    ++stats_.memoryHits;
    out->code = it->second;
    fillMeta();
    return finish("memory cache");
  }
  if (cache_.enabled()) {
    std::string object, why;
    const DiskCache::Lookup l = cache_.get(out->key, &object, &why);
    if (l == DiskCache::Lookup::kHit) {
      sdk::StatusOr<std::unique_ptr<LoadedObject>> lo = jit_.load(object, "kernel @" + out->name, {entry});
      if (lo.isOk()) {
        ++stats_.diskHits;
        out->code = std::move(*lo);
        memory_[out->key] = out->code;
        fillMeta();
        return finish("disk cache");
      }
      why = "its object does not link: " + lo.status().message();
    }
    if (l != DiskCache::Lookup::kMiss || !why.empty()) {
      ++stats_.diskRejected;
      out->log += "cache entry " + cache_.path(out->key) + " rejected (" + why + "); recompiled\n";
    }
  }
  sdk::StatusOr<std::string> object = build(k, entry, stem, *out);
  if (!object.isOk()) return object.status();
  ++stats_.compiled;
  if (cache_.enabled()) {
    sdk::Status st = cache_.put(out->key, *object);
    if (!st.isOk()) out->log += "not cached: " + st.message() + "\n";
  }
  sdk::StatusOr<std::unique_ptr<LoadedObject>> lo = jit_.load(*object, "kernel @" + out->name, {entry});
  if (!lo.isOk()) return lo.status();
  out->code = std::move(*lo);
  memory_[out->key] = out->code;
  return finish("compiled");
}

}  // namespace plugsdk::cpu
