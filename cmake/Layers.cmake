# The layers of the tree and what each may include: the one table, read by the configure step
# (a back edge stops `cmake`) and by the ctest `layers.*` tests (an edge added after configuring
# fails the suite). docs/architecture.md explains it.
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # policies for `cmake -P`, which reads no project
endif()
#
# Each entry is "folder: folders it may include". A folder may always include itself; the
# folder of a file or of an #include is the longest entry that prefixes its path. Only quoted
# includes that start with engine/, backends/, app/ or ui/ are held against the table; a file
# under those roots in no folder of the table is refused too, so a new folder gets declared.
set(P64_LAYERS
  "engine/common:"
  "engine/quant: engine/common"
  "engine/model: engine/common engine/quant"
  "engine/format: engine/common engine/quant engine/model"
  "engine/runtime: engine/common engine/quant engine/model"
  "engine/lab: engine/common engine/quant engine/model engine/format engine/runtime"
  "backends/cpu: engine/common engine/quant engine/model engine/runtime"
  "backends/cuda: engine/common engine/quant engine/model engine/runtime"
  "backends/vulkan: engine/common engine/quant engine/model engine/runtime"
  "app/common: engine/common engine/quant engine/model engine/format engine/runtime engine/lab backends/cpu backends/cuda backends/vulkan"
  "app/cli: engine/common engine/quant engine/model engine/format engine/runtime engine/lab app/common"
  "ui/core: engine/common engine/quant engine/model engine/format engine/runtime engine/lab"
  "ui/models: engine/common engine/quant engine/model engine/format engine/runtime engine/lab ui/core"
  "ui/charts: engine/common engine/quant engine/model engine/format engine/runtime engine/lab ui/core ui/models"
  "ui/panels: engine/common engine/model engine/runtime engine/lab ui/core ui/models ui/charts"
  "ui/shell: engine/common engine/quant engine/model engine/format engine/runtime engine/lab ui/core ui/models ui/charts ui/panels"
  "app/gui: engine/common engine/quant engine/model engine/format engine/runtime engine/lab ui/core ui/panels ui/shell app/common")
set(P64_LAYER_ROOTS engine backends app ui)

# The folder of the table that holds `path` (longest prefix), or "" when none does.
function(_p64_layer_of path out)
  set(best "")
  foreach(entry ${P64_LAYERS})
    string(REGEX REPLACE ":.*" "" folder "${entry}")
    string(LENGTH "${folder}" n)
    string(LENGTH "${best}" best_n)
    if(path MATCHES "^${folder}/" AND n GREATER best_n)
      set(best "${folder}")
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

# Every include under `root` that goes against the table, one "file:line: ..." each, in `out`.
function(p64_layer_violations root out)
  set(problems "")
  set(globs "")
  foreach(r ${P64_LAYER_ROOTS})
    foreach(ext cpp h hpp cu cuh)
      list(APPEND globs "${root}/${r}/*.${ext}")
    endforeach()
  endforeach()
  file(GLOB_RECURSE files RELATIVE "${root}" ${globs})
  list(SORT files)
  set(roots_regex "^(engine|backends|app|ui)/")
  foreach(file ${files})
    _p64_layer_of("${file}" from)
    if(from STREQUAL "")
      list(APPEND problems "${file}: its folder is not in the layer table (cmake/Layers.cmake)")
      continue()
    endif()
    set(allowed "${from}")
    foreach(entry ${P64_LAYERS})
      if(entry MATCHES "^${from}:(.*)$")
        string(REGEX MATCHALL "[^ ]+" deps "${CMAKE_MATCH_1}")
        list(APPEND allowed ${deps})
      endif()
    endforeach()
    file(STRINGS "${root}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line ${lines})
      if(NOT line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        continue()
      endif()
      set(included "${CMAKE_MATCH_1}")
      if(NOT included MATCHES "${roots_regex}")
        continue()
      endif()
      _p64_layer_of("${included}" to)
      if(to STREQUAL "")
        list(APPEND problems "${file}: includes ${included}, which is in no folder of the layer table")
      elseif(NOT to IN_LIST allowed)
        list(APPEND problems "${file}: includes ${included} (${from} may not include ${to})")
      endif()
    endforeach()
  endforeach()
  set(${out} "${problems}" PARENT_SCOPE)
endfunction()

# Stops with every back edge listed when `root` has any.
function(p64_check_layers root)
  p64_layer_violations("${root}" problems)
  if(problems)
    list(LENGTH problems n)
    list(JOIN problems "\n  " text)
    message(FATAL_ERROR "P64: ${n} include(s) against the layers in cmake/Layers.cmake:\n  ${text}")
  endif()
endfunction()

# cmake -DP64_LAYERS_ROOT=<tree> -P cmake/Layers.cmake: the check alone (ctest runs it).
if(CMAKE_SCRIPT_MODE_FILE AND CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT P64_LAYERS_ROOT)
    message(FATAL_ERROR "P64: pass -DP64_LAYERS_ROOT=<source tree>")
  endif()
  p64_check_layers("${P64_LAYERS_ROOT}")
  message(STATUS "P64: includes under ${P64_LAYERS_ROOT} keep to the layers")
endif()
