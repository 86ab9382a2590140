#include "engine/common/cpu_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace p64 {

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

#if defined(__x86_64__) || defined(__i386__)
namespace {
// CPUID.1:ECX bit 29. clang's __builtin_cpu_supports has no "f16c"; F16C works on YMM
// registers, whose OS support the avx2 check (XCR0) already covers.
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
}  // namespace
#endif

bool isa_supported(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  switch (isa) {
    case Isa::Scalar: return true;
    // libgcc's cpu model also checks XCR0, so a feature the OS does not save counts as absent.
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case Isa::Avx512:
      return isa_supported(Isa::Avx2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vnni");
  }
  return false;
#else
  return isa == Isa::Scalar;
#endif
}

Isa best_isa() {
  static const Isa best = [] {
    if (isa_supported(Isa::Avx512)) return Isa::Avx512;
    if (isa_supported(Isa::Avx2)) return Isa::Avx2;
    return Isa::Scalar;
  }();
  return best;
}

bool has_interleaved_kernels() { return best_isa() == Isa::Avx512; }

}  // namespace p64
