// The text form of the kernel IR: printKernel writes it, parseKernel reads it back to an
// equal kernel (golden tests, dumps, and the stable encoding plugins may also read).
//
//   kernel @softmax_0(%x: f32 in, %y: f32 out) grid [s0] {
//     loop [128] {
//       %0 = load %x[i0*128+r0] : f32
//       %1 = reduce max %0 : f32
//     }
//     ...
//     store %y[i0*128+r0], %7
//   }
#pragma once

#include <string>
#include <string_view>

#include "core/kernel/kernel_ir.h"

namespace plugsdk::kernel {

std::string printKernel(const Kernel& k);
/// Parses one kernel; errors name the line and column. The result is verified.
StatusOr<Kernel> parseKernel(std::string_view text);

/// An index expression as the text form writes it ("i0*128+r0", "%3*4+i1", "s0 % 2").
std::string printIndex(const SymExpr& e);

}  // namespace plugsdk::kernel
