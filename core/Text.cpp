#include "core/Text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace cb {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string toLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> splitFields(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> nonEmptyLines(std::string_view text) {
  std::vector<std::string> lines = splitFields(text, '\n');
  std::erase(lines, std::string());
  return lines;
}

std::vector<std::string> splitList(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (const std::string& field : splitFields(s, sep)) {
    std::string_view item = trim(field);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

std::string csvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

namespace {

// Length of the UTF-8 sequence at s[i], or 0 when it is not one.
size_t utf8Length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  uint32_t cp = len == 1 ? c : c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

bool validUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t len = utf8Length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = utf8Length(s, i);
    if (c == '\n' || c == '\t') {
      out += c == '\n' ? "\\n" : "\\t";
    } else if (len == 0 || c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      len = 1;
    } else {
      out.append(s.substr(i, len));
    }
    i += std::max<size_t>(len, 1);
  }
  return out;
}

std::vector<std::string> nearestNames(std::string_view word, const std::vector<std::string>& names,
                                      size_t most) {
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  const std::string w = toLower(word);
  std::vector<std::pair<size_t, size_t>> ranked;  // (score, index)
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string n = toLower(names[k]);
    const bool prefix = !w.empty() && (n.starts_with(w) || w.starts_with(n));
    ranked.emplace_back(prefix ? 0 : 1 + distance(w, n), k);
  }
  std::stable_sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (size_t k = 0; k < ranked.size() && out.size() < most; ++k) {
    out.push_back(names[ranked[k].second]);
  }
  return out;
}

}  // namespace cb
