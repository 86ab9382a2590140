# Runs the layer check on the planted tree and passes only when it refuses exactly the edges
# planted there (listed below), so a check that refuses nothing, or everything, fails.
cmake_minimum_required(VERSION 3.25)
set(expected
  "backends/cuda/cuda_backend.h: includes engine/lab/store.h (backends/cuda may not include engine/lab)"
  "engine/common/error.h: includes backends/cuda/cuda_backend.h (engine/common may not include backends/cuda)"
  "engine/lab/cpu_bench.cpp: includes backends/cpu/dot.h (engine/lab may not include backends/cpu)"
  "engine/model/vocab_loader.cpp: includes engine/format/gguf_reader.h (engine/model may not include engine/format)"
  "engine/runtime/session.cpp: includes ui/core/workbench.h (engine/runtime may not include ui/core)"
  "engine/runtime/session.cpp: includes engine/format/gguf_reader.h (engine/runtime may not include engine/format)"
  "engine/toys/toy.cpp: its folder is not in the layer table (cmake/Layers.cmake)"
  "ui/core/workbench.cpp: includes app/common/register_backends.h (ui/core may not include app/common)"
  "ui/panels/runs_panel.cpp: includes ui/shell/main_window.h (ui/panels may not include ui/shell)")
include(${P64_SOURCE_DIR}/cmake/Layers.cmake)
p64_layer_violations("${CMAKE_CURRENT_LIST_DIR}/planted" found)
if(NOT found STREQUAL expected)
  list(JOIN found "\n  " found_text)
  list(JOIN expected "\n  " expected_text)
  message(FATAL_ERROR "layer check on the planted tree found:\n  ${found_text}\nexpected:\n  ${expected_text}")
endif()
# And the configure-time entry point stops on them (the same function cmake runs at configure).
execute_process(COMMAND ${CMAKE_COMMAND} -DP64_LAYERS_ROOT=${CMAKE_CURRENT_LIST_DIR}/planted
                        -P ${P64_SOURCE_DIR}/cmake/Layers.cmake
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "P64: 9 include\\(s\\) against the layers")
  message(FATAL_ERROR "cmake -P cmake/Layers.cmake accepted the planted tree (rc ${rc}):\n${err}")
endif()
message(STATUS "the layer check refuses each planted edge")
