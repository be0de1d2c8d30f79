# One library per folder, linked only along the allowed dependencies (docs/ARCHITECTURE.md).
# Each library sees only its own folder on its include path (through a per-library directory
# holding one symlink), and the folders of the libraries it links, transitively. So
# `#include "results/Store.h"` from collectives/ fails to compile: the layering is enforced.
function(cb_layer_includes target folder)
  set(dir "${CMAKE_BINARY_DIR}/layers/${target}")
  file(MAKE_DIRECTORY "${dir}")
  if(NOT EXISTS "${dir}/${folder}")
    file(CREATE_LINK "${CMAKE_SOURCE_DIR}/${folder}" "${dir}/${folder}" SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC "${dir}")
endfunction()
