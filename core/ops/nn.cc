// ATen-level nn ops: schemas and shape/dtype inference.
#include "core/ops/aten_ops.h"

namespace plugsdk::ops {

Status registerNNOps(ir::OpRegistry& reg) {
  (void)reg;
  return Status::ok();
}

}  // namespace plugsdk::ops
