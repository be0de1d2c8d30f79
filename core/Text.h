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
bool startsWith(std::string_view s, std::string_view prefix);

}  // namespace cb
