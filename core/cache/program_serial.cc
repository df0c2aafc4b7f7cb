#include "core/cache/program_serial.h"

#include <charconv>
#include <cstdlib>

#include "core/kernel/kernel_text.h"
#include "core/text/parser.h"

namespace plugsdk::cache {
namespace {

// ---- writing: every field is "<length>:<bytes>" -------------------------------------------

class Writer {
 public:
  void str(const std::string& s) { out_ += std::to_string(s.size()) + ":" + s; }
  void num(int64_t v) { str(std::to_string(v)); }
  void sym(const ir::SymExpr& e) { str(e.toString()); }
  void syms(const std::vector<ir::SymExpr>& v) {
    num(static_cast<int64_t>(v.size()));
    for (const auto& e : v) sym(e);
  }
  void dtype(ir::DType t) { str(std::string(ir::dtypeName(t))); }
  void attr(const ir::Attribute& a) {
    using K = ir::Attribute::Kind;
    num(static_cast<int64_t>(a.kind()));
    switch (a.kind()) {
      case K::kNone: break;
      case K::kInt: num(*a.asInt()); break;
      case K::kFloat: str(ir::formatDouble(*a.asDouble())); break;
      case K::kBool: num(*a.asBool() ? 1 : 0); break;
      case K::kString: str(*a.asString()); break;
      case K::kDType: dtype(*a.asDType()); break;
      case K::kSym: sym(*a.asSym()); break;
      case K::kIntList: syms(*a.asSymList()); break;
      case K::kFloatList: {
        std::vector<double> v = *a.asFloatList();
        num(static_cast<int64_t>(v.size()));
        for (double d : v) str(ir::formatDouble(d));
        break;
      }
    }
  }
  void view(const sched::View& v) {
    num(v.buffer);
    syms(v.shape);
    syms(v.strides);
    sym(v.offset);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// ---- reading ------------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}

  StatusOr<std::string> str(const char* what) {
    size_t colon = in_.find(':', pos_);
    int64_t n = -1;
    if (colon != std::string::npos && colon > pos_ && colon - pos_ <= 12) {
      auto r = std::from_chars(in_.data() + pos_, in_.data() + colon, n);
      if (r.ec != std::errc() || r.ptr != in_.data() + colon) n = -1;
    }
    if (n < 0 || colon + 1 + static_cast<size_t>(n) > in_.size())
      return invalidArgument(std::string("program bytes: bad or truncated field '") + what + "' at byte " +
                             std::to_string(pos_));
    std::string s = in_.substr(colon + 1, static_cast<size_t>(n));
    pos_ = colon + 1 + static_cast<size_t>(n);
    return s;
  }
  StatusOr<int64_t> num(const char* what) {
    ASSIGN_OR_RETURN(std::string s, str(what));
    int64_t v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty())
      return invalidArgument(std::string("program bytes: field '") + what + "' is not an integer: '" + s + "'");
    return v;
  }
  StatusOr<size_t> count(const char* what) {
    ASSIGN_OR_RETURN(int64_t n, num(what));
    if (n < 0 || static_cast<size_t>(n) > in_.size())
      return invalidArgument(std::string("program bytes: count '") + what + "' out of range");
    return static_cast<size_t>(n);
  }
  StatusOr<ir::SymExpr> sym(const char* what) {
    ASSIGN_OR_RETURN(std::string s, str(what));
    auto e = text::parseSymExpr(s);
    if (!e.isOk()) return e.status().withContext(std::string("program bytes: field '") + what + "'");
    return *e;
  }
  StatusOr<std::vector<ir::SymExpr>> syms(const char* what) {
    ASSIGN_OR_RETURN(size_t n, count(what));
    std::vector<ir::SymExpr> v;
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(ir::SymExpr e, sym(what));
      v.push_back(std::move(e));
    }
    return v;
  }
  StatusOr<ir::DType> dtype(const char* what) {
    ASSIGN_OR_RETURN(std::string s, str(what));
    std::optional<ir::DType> t = ir::parseDType(s);
    if (!t) return invalidArgument(std::string("program bytes: field '") + what + "': unknown dtype '" + s + "'");
    return *t;
  }
  StatusOr<double> real(const char* what) {
    ASSIGN_OR_RETURN(std::string s, str(what));
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);  // "inf", "nan" and exponents parse
    if (!s.empty() && end == s.c_str() + s.size()) return d;
    return invalidArgument(std::string("program bytes: field '") + what + "' is not a number: '" + s + "'");
  }
  StatusOr<ir::Attribute> attr() {
    using K = ir::Attribute::Kind;
    ASSIGN_OR_RETURN(int64_t k, num("attribute kind"));
    switch (static_cast<K>(k)) {
      case K::kNone: return ir::Attribute::none();
      case K::kInt: {
        ASSIGN_OR_RETURN(int64_t v, num("int attribute"));
        return ir::Attribute::fromInt(v);
      }
      case K::kFloat: {
        ASSIGN_OR_RETURN(double v, real("float attribute"));
        return ir::Attribute::fromFloat(v);
      }
      case K::kBool: {
        ASSIGN_OR_RETURN(int64_t v, num("bool attribute"));
        return ir::Attribute::fromBool(v != 0);
      }
      case K::kString: {
        ASSIGN_OR_RETURN(std::string v, str("string attribute"));
        return ir::Attribute::fromString(std::move(v));
      }
      case K::kDType: {
        ASSIGN_OR_RETURN(ir::DType v, dtype("dtype attribute"));
        return ir::Attribute::fromDType(v);
      }
      case K::kSym: {
        ASSIGN_OR_RETURN(ir::SymExpr v, sym("size attribute"));
        return ir::Attribute::fromSym(v);
      }
      case K::kIntList: {
        ASSIGN_OR_RETURN(std::vector<ir::SymExpr> v, syms("int list attribute"));
        return ir::Attribute::fromInts(std::move(v));
      }
      case K::kFloatList: {
        ASSIGN_OR_RETURN(size_t n, count("float list attribute"));
        std::vector<double> v;
        for (size_t i = 0; i < n; ++i) {
          ASSIGN_OR_RETURN(double d, real("float list attribute"));
          v.push_back(d);
        }
        return ir::Attribute::fromFloats(std::move(v));
      }
    }
    return invalidArgument("program bytes: unknown attribute kind " + std::to_string(k));
  }
  StatusOr<sched::View> view() {
    sched::View v;
    ASSIGN_OR_RETURN(int64_t b, num("view buffer"));
    v.buffer = static_cast<int>(b);
    ASSIGN_OR_RETURN(v.shape, syms("view shape"));
    ASSIGN_OR_RETURN(v.strides, syms("view strides"));
    ASSIGN_OR_RETURN(v.offset, sym("view offset"));
    return v;
  }
  bool atEnd() const { return pos_ == in_.size(); }

 private:
  const std::string& in_;
  size_t pos_ = 0;
};

constexpr const char* kMagic = "plugsdk-program 1";

}  // namespace

std::string serializeProgram(const sched::Program& p) {
  Writer w;
  w.str(kMagic);
  w.str(p.name);
  w.num(static_cast<int64_t>(p.buffers.size()));
  for (const sched::Buffer& b : p.buffers) {
    w.str(b.name);
    w.dtype(b.dtype);
    w.sym(b.numel);
    w.num(static_cast<int64_t>(b.role));
    w.sym(b.offset);
    w.num(b.slot);
  }
  w.num(static_cast<int64_t>(p.inputs.size()));
  for (const sched::ProgramInput& in : p.inputs) {
    w.str(in.name);
    w.num(in.buffer);
    w.dtype(in.type.dtype);
    w.syms(in.type.shape);
    w.num(in.type.strides ? 1 : 0);
    if (in.type.strides) w.syms(*in.type.strides);
  }
  w.num(static_cast<int64_t>(p.outputs.size()));
  for (const sched::ProgramOutput& o : p.outputs) {
    w.str(o.name);
    w.num(o.buffer);
    w.syms(o.shape);
  }
  w.num(static_cast<int64_t>(p.kernels.size()));
  for (const kernel::Kernel& k : p.kernels) w.str(kernel::printKernel(k));
  w.num(static_cast<int64_t>(p.steps.size()));
  for (const sched::Step& s : p.steps) {
    w.num(static_cast<int64_t>(s.kind));
    w.num(s.launch.kernel);
    w.num(static_cast<int64_t>(s.launch.args.size()));
    for (int a : s.launch.args) w.num(a);
    const sched::LibraryCall& c = s.call;
    w.str(c.op);
    w.num(static_cast<int64_t>(c.attrs.size()));
    for (const auto& [k, a] : c.attrs) {
      w.str(k);
      w.attr(a);
    }
    w.num(static_cast<int64_t>(c.inputs.size()));
    for (const auto& v : c.inputs) {
      w.num(v ? 1 : 0);
      if (v) w.view(*v);
    }
    w.num(static_cast<int64_t>(c.outputs.size()));
    for (const auto& v : c.outputs) w.view(v);
    w.num(c.epilogue);
    w.num(static_cast<int64_t>(c.epilogueArgs.size()));
    for (int a : c.epilogueArgs) w.num(a);
    w.str(s.origin);
    w.num(static_cast<int64_t>(s.values.size()));
    for (const auto& v : s.values) w.str(v);
  }
  w.sym(p.arenaBytes);
  w.num(static_cast<int64_t>(p.symbols.size()));
  for (const auto& s : p.symbols) w.str(s);
  return w.take();
}

StatusOr<sched::Program> deserializeProgram(const std::string& bytes) {
  Reader r(bytes);
  sched::Program p;
  ASSIGN_OR_RETURN(std::string magic, r.str("magic"));
  if (magic != kMagic)
    return invalidArgument("program bytes: not a serialized program ('" + magic.substr(0, 32) + "')");
  ASSIGN_OR_RETURN(p.name, r.str("name"));
  ASSIGN_OR_RETURN(size_t nb, r.count("buffers"));
  for (size_t i = 0; i < nb; ++i) {
    sched::Buffer b;
    ASSIGN_OR_RETURN(b.name, r.str("buffer name"));
    ASSIGN_OR_RETURN(b.dtype, r.dtype("buffer dtype"));
    ASSIGN_OR_RETURN(b.numel, r.sym("buffer numel"));
    ASSIGN_OR_RETURN(int64_t role, r.num("buffer role"));
    if (role < 0 || role > static_cast<int64_t>(sched::BufferRole::kTemp))
      return invalidArgument("program bytes: buffer role " + std::to_string(role));
    b.role = static_cast<sched::BufferRole>(role);
    ASSIGN_OR_RETURN(b.offset, r.sym("buffer offset"));
    ASSIGN_OR_RETURN(int64_t slot, r.num("buffer slot"));
    b.slot = static_cast<int>(slot);
    p.buffers.push_back(std::move(b));
  }
  // -1 is valid only where the program means "none": an epilogue's accumulator argument, and
  // the unstored result of a library call with an epilogue.
  auto bufferIndex = [&](int64_t b, const char* what, bool noneAllowed = false) -> StatusOr<int> {
    if (b < (noneAllowed ? -1 : 0) || b >= static_cast<int64_t>(p.buffers.size()))
      return invalidArgument(std::string("program bytes: ") + what + " names buffer " + std::to_string(b) + " of " +
                             std::to_string(p.buffers.size()));
    return static_cast<int>(b);
  };
  ASSIGN_OR_RETURN(size_t ni, r.count("inputs"));
  for (size_t i = 0; i < ni; ++i) {
    sched::ProgramInput in;
    ASSIGN_OR_RETURN(in.name, r.str("input name"));
    ASSIGN_OR_RETURN(int64_t b, r.num("input buffer"));
    ASSIGN_OR_RETURN(in.buffer, bufferIndex(b, "an input"));
    ASSIGN_OR_RETURN(in.type.dtype, r.dtype("input dtype"));
    ASSIGN_OR_RETURN(in.type.shape, r.syms("input shape"));
    ASSIGN_OR_RETURN(int64_t strided, r.num("input strides flag"));
    if (strided) {
      ASSIGN_OR_RETURN(std::vector<ir::SymExpr> st, r.syms("input strides"));
      in.type.strides = std::move(st);
    }
    p.inputs.push_back(std::move(in));
  }
  ASSIGN_OR_RETURN(size_t no, r.count("outputs"));
  for (size_t i = 0; i < no; ++i) {
    sched::ProgramOutput o;
    ASSIGN_OR_RETURN(o.name, r.str("output name"));
    ASSIGN_OR_RETURN(int64_t b, r.num("output buffer"));
    ASSIGN_OR_RETURN(o.buffer, bufferIndex(b, "an output"));
    ASSIGN_OR_RETURN(o.shape, r.syms("output shape"));
    p.outputs.push_back(std::move(o));
  }
  ASSIGN_OR_RETURN(size_t nk, r.count("kernels"));
  for (size_t i = 0; i < nk; ++i) {
    ASSIGN_OR_RETURN(std::string text, r.str("kernel"));
    auto k = kernel::parseKernel(text);
    if (!k.isOk()) return k.status().withContext("program bytes: kernel " + std::to_string(i));
    p.kernels.push_back(std::move(*k));
  }
  ASSIGN_OR_RETURN(size_t ns, r.count("steps"));
  for (size_t i = 0; i < ns; ++i) {
    sched::Step s;
    ASSIGN_OR_RETURN(int64_t kind, r.num("step kind"));
    if (kind != 0 && kind != 1) return invalidArgument("program bytes: step kind " + std::to_string(kind));
    s.kind = static_cast<sched::Step::Kind>(kind);
    ASSIGN_OR_RETURN(int64_t kernel, r.num("launch kernel"));
    if (kernel < (s.kind == sched::Step::Kind::kLaunch ? 0 : -1) || kernel >= static_cast<int64_t>(p.kernels.size()))
      return invalidArgument("program bytes: step " + std::to_string(i) + " launches kernel " + std::to_string(kernel));
    s.launch.kernel = static_cast<int>(kernel);
    ASSIGN_OR_RETURN(size_t na, r.count("launch args"));
    for (size_t a = 0; a < na; ++a) {
      ASSIGN_OR_RETURN(int64_t b, r.num("launch arg"));
      ASSIGN_OR_RETURN(int idx, bufferIndex(b, "a launch argument"));
      s.launch.args.push_back(idx);
    }
    sched::LibraryCall& c = s.call;
    ASSIGN_OR_RETURN(c.op, r.str("call op"));
    ASSIGN_OR_RETURN(size_t nattr, r.count("call attributes"));
    for (size_t a = 0; a < nattr; ++a) {
      ASSIGN_OR_RETURN(std::string key, r.str("attribute name"));
      ASSIGN_OR_RETURN(ir::Attribute v, r.attr());
      c.attrs[key] = std::move(v);
    }
    ASSIGN_OR_RETURN(size_t nin, r.count("call inputs"));
    for (size_t a = 0; a < nin; ++a) {
      ASSIGN_OR_RETURN(int64_t present, r.num("call input flag"));
      if (!present) {
        c.inputs.emplace_back(std::nullopt);
        continue;
      }
      ASSIGN_OR_RETURN(sched::View v, r.view());
      ASSIGN_OR_RETURN(v.buffer, bufferIndex(v.buffer, "a call input"));
      c.inputs.emplace_back(std::move(v));
    }
    ASSIGN_OR_RETURN(size_t nout, r.count("call outputs"));
    for (size_t a = 0; a < nout; ++a) {
      ASSIGN_OR_RETURN(sched::View v, r.view());
      ASSIGN_OR_RETURN(v.buffer, bufferIndex(v.buffer, "a call output", true));  // -1: kept for the epilogue
      c.outputs.push_back(std::move(v));
    }
    ASSIGN_OR_RETURN(int64_t ep, r.num("call epilogue"));
    if (ep < -1 || ep >= static_cast<int64_t>(p.kernels.size()))
      return invalidArgument("program bytes: step " + std::to_string(i) + " has epilogue kernel " + std::to_string(ep));
    c.epilogue = static_cast<int>(ep);
    ASSIGN_OR_RETURN(size_t nep, r.count("epilogue args"));
    for (size_t a = 0; a < nep; ++a) {
      ASSIGN_OR_RETURN(int64_t b, r.num("epilogue arg"));
      ASSIGN_OR_RETURN(int idx, bufferIndex(b, "an epilogue argument", true));
      c.epilogueArgs.push_back(idx);
    }
    ASSIGN_OR_RETURN(s.origin, r.str("step origin"));
    ASSIGN_OR_RETURN(size_t nv, r.count("step values"));
    for (size_t a = 0; a < nv; ++a) {
      ASSIGN_OR_RETURN(std::string v, r.str("step value"));
      s.values.push_back(std::move(v));
    }
    p.steps.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(p.arenaBytes, r.sym("arena bytes"));
  ASSIGN_OR_RETURN(size_t nsym, r.count("symbols"));
  for (size_t i = 0; i < nsym; ++i) {
    ASSIGN_OR_RETURN(std::string s, r.str("symbol"));
    p.symbols.push_back(std::move(s));
  }
  if (!r.atEnd()) return invalidArgument("program bytes: trailing bytes after the program");
  return p;
}

}  // namespace plugsdk::cache
