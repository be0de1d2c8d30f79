#include "cli/Command.h"
int main(int argc, char** argv) {
  CLI::App app{"collbench"};
  CLI11_PARSE(app, argc, argv);
  return 0;
}
