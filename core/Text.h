// Small string helpers shared by the parsers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cb {

std::string_view trim(std::string_view s);
std::string toLower(std::string_view s);
// Splits on commas, trims items, drops empty items.
std::vector<std::string> splitList(std::string_view s, char sep = ',');
// Splits on every `sep`, keeping every field as it is: "a,,b" is 3 fields, "" is one empty field.
std::vector<std::string> splitFields(std::string_view s, char sep);
// The lines of a text that are not empty, without their newline.
std::vector<std::string> nonEmptyLines(std::string_view text);
bool startsWith(std::string_view s, std::string_view prefix);
// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled.
std::string csvField(std::string_view s);
// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool validUtf8(std::string_view s);
// One line fit for a terminal table: control characters as \n, \t or \xNN, bytes that are not
// UTF-8 as \xNN; anything else unchanged.
std::string printable(std::string_view s);
// The `most` names nearest to a mistyped `word`: names it begins or that begin with it first, then
// by edit distance (Levenshtein), ties in the given order. For "unknown command 'bogus'" lines.
std::vector<std::string> nearestNames(std::string_view word, const std::vector<std::string>& names,
                                      size_t most = 3);

}  // namespace cb
