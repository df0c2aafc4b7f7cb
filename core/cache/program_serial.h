// A scheduled Program as bytes and back, for the persistent program cache: every field the
// device layer reads (buffers and the memory plan, inputs, outputs, kernels in their text
// form, steps with library calls and epilogues, size symbols). Fields are length-prefixed,
// so names and attribute strings need no escaping; a malformed or truncated input is an
// error naming the field, never a crash.
#pragma once

#include <string>

#include "core/sched/program.h"
#include "core/support/status.h"

namespace plugsdk::cache {

std::string serializeProgram(const sched::Program& p);
StatusOr<sched::Program> deserializeProgram(const std::string& bytes);

}  // namespace plugsdk::cache
