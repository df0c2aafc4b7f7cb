// libFuzzer target: the .pgraph parser (and, for what parses, the printer and re-parse)
// must never crash, assert, leak or hit undefined behaviour on any input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/ir/context.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto ctx = plugsdk::ir::makeDefaultContext();
  std::string_view src(reinterpret_cast<const char*>(data), size);
  auto g = plugsdk::text::parseGraph(*ctx, src);
  if (g.isOk()) {
    // Whatever parses must round-trip.
    std::string printed = plugsdk::text::printGraph(*g);
    auto g2 = plugsdk::text::parseGraph(*ctx, printed);
    if (!g2.isOk() || plugsdk::text::printGraph(*g2) != printed) std::abort();
  }
  return 0;
}
