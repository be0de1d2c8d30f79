#include "replay/PyLiteral.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cb::replay {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  nlohmann::json parseAll() {
    nlohmann::json v = value(0);
    skipSpace();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument(std::string(what) + " at offset " + std::to_string(i_));
  }
  void skipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool take(char c) {
    skipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) == w) {
      i_ += w.size();
      return true;
    }
    return false;
  }

  nlohmann::json value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    skipSpace();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '[' || c == '(') return sequence(c == '[' ? ']' : ')', depth);
    if (c == '{') return dict(depth);
    if (c == '\'' || c == '"') return string();
    if (word("True")) return true;
    if (word("False")) return false;
    if (word("None")) return nullptr;
    return number();
  }

  nlohmann::json sequence(char close, int depth) {
    ++i_;
    nlohmann::json a = nlohmann::json::array();
    if (take(close)) return a;
    for (;;) {
      a.push_back(value(depth + 1));
      if (take(close)) return a;
      if (!take(',')) fail("expected ','");
      if (take(close)) return a;  // Python allows a trailing comma: (1,)
    }
  }

  nlohmann::json dict(int depth) {
    ++i_;
    nlohmann::json o = nlohmann::json::object();
    if (take('}')) return o;
    for (;;) {
      nlohmann::json k = value(depth + 1);
      if (!take(':')) fail("expected ':'");
      o[k.is_string() ? k.get<std::string>() : k.dump()] = value(depth + 1);
      if (take('}')) return o;
      if (!take(',')) fail("expected ','");
    }
  }

  nlohmann::json string() {
    const char q = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) fail("unterminated escape");
        char e = s_[i_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case '0': c = '\0'; break;
          default: c = e;  // \\, \', \" and anything else: the character itself
        }
      }
      out.push_back(c);
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }

  nlohmann::json number() {
    const size_t start = i_;
    if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+')) ++i_;
    bool real = false;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '.' || c == 'e' || c == 'E' || ((c == '-' || c == '+') && real)) {
        real = true;
        ++i_;
      } else {
        break;
      }
    }
    const std::string text(s_.substr(start, i_ - start));
    if (text.empty() || text == "-" || text == "+") fail("unexpected character");
    char* end = nullptr;
    if (!real) {
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno == 0 && end && *end == '\0') return v;
    }
    double d = std::strtod(text.c_str(), &end);
    if (!end || *end != '\0') fail("bad number");
    return d;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

nlohmann::json parsePythonLiteral(std::string_view text) { return Parser(text).parseAll(); }

}  // namespace cb::replay
