# Installers: `cpack` in a build folder makes a .deb and a .tar.gz of p64 (and of p64lab when
# the GUI is built) with what a Linux desktop expects around them: the desktop entry, the icon
# in the hicolor sizes, AppStream metainfo, a man page for p64 and the docs. On Windows
# (mingw-w64 cross build) it makes an NSIS installer and a .zip of the CLI instead.
# Included from the top-level CMakeLists.txt, so CMAKE_CURRENT_BINARY_DIR is the build root.
include(GNUInstallDirs)
set(P64_INSTALLERS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(P64_INSTALLERS_OUT ${CMAKE_BINARY_DIR}/installers)
file(MAKE_DIRECTORY ${P64_INSTALLERS_OUT})

# --- man page: p64(1), written from the binary's own --help texts (make_manpage.cmake) -------
if(NOT CMAKE_CROSSCOMPILING)
  set(_man ${P64_INSTALLERS_OUT}/p64.1)
  add_custom_command(OUTPUT ${_man} ${_man}.gz
    COMMAND ${CMAKE_COMMAND} -DP64=$<TARGET_FILE:p64> -DOUT=${_man} -DVERSION=${PROJECT_VERSION}
            -P ${P64_INSTALLERS_DIR}/make_manpage.cmake
    DEPENDS p64 ${P64_INSTALLERS_DIR}/make_manpage.cmake
    COMMENT "Writing the p64(1) man page from p64 --help" VERBATIM)
  add_custom_target(p64_manpage ALL DEPENDS ${_man}.gz)
  install(FILES ${_man}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# --- desktop integration of the workbench ----------------------------------------------------
# app/gui installs p64lab, its desktop entry and the scalable icon; here: PNG sizes and metainfo.
if(P64_GUI AND NOT CMAKE_CROSSCOMPILING)
  find_package(Qt6 REQUIRED COMPONENTS Gui Svg)
  add_executable(p64-render-icon ${P64_INSTALLERS_DIR}/render_icon.cpp)
  target_link_libraries(p64-render-icon PRIVATE Qt6::Gui Qt6::Svg)

  set(_sizes 16 22 24 32 48 64 128 256)
  set(_hicolor ${P64_INSTALLERS_OUT}/hicolor)
  set(_pngs "")
  foreach(_s IN LISTS _sizes)
    list(APPEND _pngs ${_hicolor}/${_s}x${_s}/apps/p64lab.png)
  endforeach()
  add_custom_command(OUTPUT ${_pngs}
    COMMAND p64-render-icon ${CMAKE_SOURCE_DIR}/resources/icons/p64lab.svg ${_hicolor} p64lab ${_sizes}
    DEPENDS p64-render-icon ${CMAKE_SOURCE_DIR}/resources/icons/p64lab.svg
    COMMENT "Rendering the p64lab icon into the hicolor PNG sizes" VERBATIM)
  add_custom_target(p64_icons ALL DEPENDS ${_pngs})
  install(DIRECTORY ${_hicolor}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor)

  string(TIMESTAMP P64_RELEASE_DATE "%Y-%m-%d" UTC)  # honours SOURCE_DATE_EPOCH
  configure_file(${P64_INSTALLERS_DIR}/org.p64lab.p64lab.metainfo.xml
                 ${P64_INSTALLERS_OUT}/org.p64lab.p64lab.metainfo.xml @ONLY)
  install(FILES ${P64_INSTALLERS_OUT}/org.p64lab.p64lab.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  # .p64 and .gguf as MIME types: the desktop entry claims these, not every binary file.
  install(FILES ${P64_INSTALLERS_DIR}/p64lab-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME p64lab.xml)
endif()

install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# docs/ keeps its name so the README's links work in the installed copy too.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

# --- CPack ------------------------------------------------------------------------------------
set(P64_PACKAGE_MAINTAINER "P64 Lab maintainers <maintainers@p64lab.org>"
    CACHE STRING "Maintainer field of the packages")
set(CPACK_PACKAGE_NAME p64lab)
set(CPACK_PACKAGE_VENDOR "P64 Lab")
set(CPACK_PACKAGE_CONTACT "${P64_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Workbench for measuring and improving local LLM decode")
set(CPACK_PACKAGE_DESCRIPTION
    "P64 Lab decodes Llama-family models from P64 weight containers on a CPU reference backend, \
CUDA and Vulkan (each only where its driver and a device are present), and records every \
measurement in one SQLite store next to the hardware passport that produced it. p64 is the \
command line; p64lab is the Qt workbench.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "P64 Lab")
set(CPACK_RESOURCE_FILE_README ${CMAKE_SOURCE_DIR}/README.md)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)

if(WIN32)
  set(CPACK_GENERATOR NSIS ZIP)
  set(CPACK_NSIS_DISPLAY_NAME "P64 Lab ${PROJECT_VERSION}")
  set(CPACK_NSIS_MODIFY_PATH ON)  # the options page about PATH
  # Its page, with the current user's PATH chosen (nsis/NSIS.InstallOptions.ini.in).
  set(CPACK_MODULE_PATH ${CMAKE_CURRENT_LIST_DIR}/nsis)
  # NSIS makes a 32-bit installer unless told otherwise; a 64-bit one also runs where only
  # 64-bit programs can (wine64 without wine32) and installs into the 64-bit Program Files.
  set(CPACK_NSIS_DEFINES "Target amd64-unicode")
else()
  set(CPACK_GENERATOR DEB TGZ)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION science)
  # Depends: from the shared libraries the binaries actually link (Qt, SQLite, PCRE2, libstdc++ ...).
  # The CUDA runtime is linked statically and the Vulkan loader and libcuda are opened at run
  # time, so none of them is a dependency: the package installs and runs on a machine without a GPU.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  if(P64_VULKAN)
    set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libvulkan1, mesa-vulkan-drivers")
  endif()
  set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
endif()

include(CPack)
