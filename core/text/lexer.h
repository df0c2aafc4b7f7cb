// Tokens of the .pgraph text form, with line:column positions for error messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::text {

enum class Tok {
  kEnd,
  kIdent,   ///< graph, aten.add.Tensor, f32, s0, true, ...
  kValue,   ///< %name (text holds the name without %)
  kGlobal,  ///< @name
  kInt,
  kFloat,
  kString,  ///< text holds the unescaped contents
  kPunct,   ///< ( ) [ ] { } , : = + - * // %
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  ir::SourceLoc loc;
};

/// Splits `src` into tokens; '#' starts a comment to the end of the line.
StatusOr<std::vector<Token>> tokenize(std::string_view src);

std::string describeToken(const Token& t);

}  // namespace plugsdk::text
