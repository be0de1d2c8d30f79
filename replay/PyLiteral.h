// Python literals (lists, tuples, dicts, strings in ' or ", ints, floats, True/False/None) as
// JSON: Chakra keeps a PyTorch ET node's inputs as Python-printed strings, e.g.
// "[[430, 431, 0, 53120, 4, 'cuda:0']]", which a JSON parser refuses.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace cb::replay {

// Throws std::invalid_argument (with the offset) on anything else; tuples become arrays and
// None null. Nesting is bounded (a hostile input cannot exhaust the stack).
nlohmann::json parsePythonLiteral(std::string_view text);

}  // namespace cb::replay
