# Files named *_avx512.cpp or *_avx2.cpp hold kernels for that instruction set only; they get
# its compiler flags, and the code that calls them checks at run time that the CPU runs them
# (engine/common/cpu_isa.h).
function(p64_simd_flags)
  foreach(src ${ARGN})
    if(src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
        "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mfma;-mavx2;-mf16c")
    elseif(src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    endif()
  endforeach()
endfunction()
