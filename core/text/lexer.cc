// The .pgraph tokenizer.
#include "core/text/lexer.h"

#include <cctype>

namespace plugsdk::text {

namespace {
bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
}  // namespace

std::string describeToken(const Token& t) {
  switch (t.kind) {
    case Tok::kEnd: return "end of file";
    case Tok::kValue: return "'%" + t.text + "'";
    case Tok::kGlobal: return "'@" + t.text + "'";
    case Tok::kString: return "a string";
    default: return "'" + t.text + "'";
  }
}

StatusOr<std::vector<Token>> tokenize(std::string_view src) {
  std::vector<Token> out;
  int line = 1, col = 1;
  size_t i = 0;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < src.size(); ++k, ++i) {
      if (src[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto err = [&](int l, int c, const std::string& msg) {
    return invalidArgument(std::to_string(l) + ":" + std::to_string(c) + ": " + msg);
  };
  while (i < src.size()) {
    char c = src[i];
    if (c == '#') {
      while (i < src.size() && src[i] != '\n') advance(1);
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
      continue;
    }
    Token t;
    t.loc = {line, col};
    if (isIdentStart(c)) {
      size_t j = i;
      while (j < src.size() && isIdentChar(src[j])) ++j;
      t.kind = Tok::kIdent;
      t.text = std::string(src.substr(i, j - i));
      advance(j - i);
    } else if ((c == '%' || c == '@') && i + 1 < src.size() && isNameChar(src[i + 1])) {
      size_t j = i + 1;
      while (j < src.size() && isNameChar(src[j])) ++j;
      t.kind = c == '%' ? Tok::kValue : Tok::kGlobal;
      t.text = std::string(src.substr(i + 1, j - i - 1));
      advance(j - i);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      bool isFloat = false;
      if (j < src.size() && src[j] == '.') {
        isFloat = true;
        ++j;
        while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      }
      if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
        size_t k = j + 1;
        if (k < src.size() && (src[k] == '+' || src[k] == '-')) ++k;
        if (k < src.size() && std::isdigit(static_cast<unsigned char>(src[k]))) {
          isFloat = true;
          j = k;
          while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        }
      }
      t.kind = isFloat ? Tok::kFloat : Tok::kInt;
      t.text = std::string(src.substr(i, j - i));
      advance(j - i);
    } else if (c == '"') {
      size_t j = i + 1;
      std::string s;
      bool closed = false;
      while (j < src.size()) {
        char d = src[j];
        if (d == '"') {
          closed = true;
          ++j;
          break;
        }
        if (d == '\n') break;
        if (d == '\\' && j + 1 < src.size()) {
          char e = src[j + 1];
          s += e == 'n' ? '\n' : e;
          j += 2;
          continue;
        }
        s += d;
        ++j;
      }
      if (!closed) return err(line, col, "unterminated string");
      t.kind = Tok::kString;
      t.text = std::move(s);
      advance(j - i);
    } else if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      t.kind = Tok::kPunct;
      t.text = "//";
      advance(2);
    } else if (std::string_view("()[]{},:=+-*%").find(c) != std::string_view::npos) {
      t.kind = Tok::kPunct;
      t.text = std::string(1, c);
      advance(1);
    } else {
      std::string shown = std::isprint(static_cast<unsigned char>(c))
                              ? std::string(1, c)
                              : "\\x" + std::to_string(static_cast<unsigned char>(c));
      return err(line, col, "unexpected character '" + shown + "'");
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::kEnd;
  end.loc = {line, col};
  out.push_back(end);
  return out;
}

}  // namespace plugsdk::text
