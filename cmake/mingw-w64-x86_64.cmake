# Toolchain: engine + CLI for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64).
#   cmake -S . -B build-win -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
#         -DP64_GUI=OFF -DP64_CUDA=OFF -DP64_MINGW_PREFIX=/path/to/windows/deps
# P64_MINGW_PREFIX holds the Windows builds of the libraries the engine links (SQLite 3,
# PCRE2 8-bit): include/, lib/, lib/pkgconfig/, made from Debian's source packages by
# scripts/windows-deps.sh, which also links the host's header-only libraries (nlohmann-json,
# CLI11, Vulkan headers) into it. GoogleTest is built from Debian's googletest sources.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(_triple x86_64-w64-mingw32)
# The -posix variants: std::thread, std::mutex and std::condition_variable need them in GCC 12.
set(CMAKE_C_COMPILER ${_triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${_triple}-g++-posix)
set(CMAKE_RC_COMPILER ${_triple}-windres)
# M_PI and friends from <cmath>, which MinGW's headers hide without it.
set(CMAKE_CXX_FLAGS_INIT "-D_USE_MATH_DEFINES")
# One .exe without MinGW's runtime DLLs beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
# DLLs too (the fake NVML the GPU-monitor tests load): LoadLibrary would otherwise fail with
# error 126 for want of libstdc++-6.dll and libgcc_s_seh-1.dll beside them.
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")

set(P64_MINGW_PREFIX "" CACHE PATH "Windows builds of SQLite, PCRE2 and GoogleTest (include/, lib/)")
set(CMAKE_FIND_ROOT_PATH /usr/${_triple} ${P64_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The header-only packages' CMake files, which scripts/windows-deps.sh copies into the prefix:
# the host's own would put all of /usr/include (glibc's headers) on the cross compiler's path.
foreach(_pkg nlohmann_json CLI11)
  if(P64_MINGW_PREFIX AND EXISTS ${P64_MINGW_PREFIX}/share/cmake/${_pkg})
    set(${_pkg}_DIR ${P64_MINGW_PREFIX}/share/cmake/${_pkg} CACHE PATH "")
  endif()
endforeach()
# Only with a prefix: try_compile reads this file again in the same process, without the
# cache, and its empty prefix must not undo the environment the configure set.
if(P64_MINGW_PREFIX)
  set(ENV{PKG_CONFIG_LIBDIR} "${P64_MINGW_PREFIX}/lib/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
endif()
# Tests run under wine (Debian: wine64); CTest and gtest_discover_tests use this.
find_program(P64_WINE NAMES wine64 wine PATHS /usr/lib/wine)  # Debian puts wine64 there
if(P64_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${P64_WINE})
endif()
