// registerAtenOps and the default context.
#include "core/ir/context.h"
#include "core/ops/aten_ops.h"
#include "core/prims/prims.h"

#include <cstdio>
#include <cstdlib>

namespace plugsdk::ops {

Status registerAtenOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(registerPointwiseOps(reg));
  RETURN_IF_ERROR(registerReductionOps(reg));
  RETURN_IF_ERROR(registerShapeOps(reg));
  RETURN_IF_ERROR(registerIndexingOps(reg));
  RETURN_IF_ERROR(registerCreationOps(reg));
  RETURN_IF_ERROR(registerNNOps(reg));
  RETURN_IF_ERROR(registerBackwardOps(reg));
  return Status::ok();
}

}  // namespace plugsdk::ops

namespace plugsdk::ir {

std::shared_ptr<const Context> makeDefaultContext() {
  auto ctx = std::make_shared<Context>();
  Status s = ops::registerAtenOps(ctx->ops);
  if (s.isOk()) s = prims::registerPrims(ctx->ops);
  if (!s.isOk()) {
    // A malformed built-in schema is a bug in plugsdk itself, caught by every test.
    std::fprintf(stderr, "plugsdk: internal error registering ops: %s\n", s.toString().c_str());
    std::abort();
  }
  return ctx;
}

}  // namespace plugsdk::ir
