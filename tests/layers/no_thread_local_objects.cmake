# Refuses thread_local objects with destructors (std:: types, classes) in the tree: under MinGW their
# destructors run at a worker thread's exit beside winpthreads' own key destructors, and a CPU worker
# crashed there (docs/windows.md). Scratch memory belongs to the call or to the pool that owns the
# thread; plain thread_local scalars are fine.
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE sources RELATIVE ${P64_SOURCE_DIR}
     ${P64_SOURCE_DIR}/engine/*.cpp ${P64_SOURCE_DIR}/engine/*.h ${P64_SOURCE_DIR}/backends/*.cpp
     ${P64_SOURCE_DIR}/backends/*.h ${P64_SOURCE_DIR}/backends/*.cu ${P64_SOURCE_DIR}/backends/*.cuh
     ${P64_SOURCE_DIR}/app/*.cpp ${P64_SOURCE_DIR}/app/*.h ${P64_SOURCE_DIR}/ui/*.cpp ${P64_SOURCE_DIR}/ui/*.h)
set(found "")
foreach(path ${sources})
  file(STRINGS ${P64_SOURCE_DIR}/${path} lines REGEX "thread_local[ \t]+(static[ \t]+)?(std::|[A-Z])")
  foreach(line ${lines})
    string(STRIP "${line}" line)
    if(line)  # a line's ';' splits it into list items
      list(APPEND found "${path}: ${line}")
    endif()
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "thread_local objects with destructors (see this file's comment):\n  ${text}")
endif()
message(STATUS "no thread_local object with a destructor in ${P64_SOURCE_DIR}")
