// Text split into lines, the way the tests read what collbench writes: every line, empty ones
// kept, without their newline.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cb::test {

inline std::vector<std::string> linesOf(std::istream& in) {
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline std::vector<std::string> splitLines(const std::string& text) {
  std::istringstream in(text);
  return linesOf(in);
}

// The lines of a file; none when it can't be read (the caller's expectations then fail).
inline std::vector<std::string> readLines(const std::string& path) {
  std::ifstream in(path);
  return linesOf(in);
}

// A file's bytes; "" when it can't be read (the caller's expectations then fail).
inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cb::test
