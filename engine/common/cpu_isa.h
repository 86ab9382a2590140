#pragma once
// The instruction sets the CPU backend's kernels are built for, and which of them this CPU
// runs. Here rather than beside the kernels because the lab picks a model's layout by them
// (a row-interleaved conversion only pays where the interleaved kernels run).
#include <cstdint>
#include <string_view>

namespace p64 {

enum class Isa : uint32_t { Scalar = 0, Avx2 = 1, Avx512 = 2 };
std::string_view isa_name(Isa isa);  // "scalar", "avx2", "avx512"
Isa best_isa();                      // the widest set this CPU runs (cpuid + xgetbv)
bool isa_supported(Isa isa);
// True when this CPU runs the row-interleaved kernels (AVX-512 VNNI). Elsewhere the
// row-interleaved forms are read through a per-row gather, slower than their plain blocks.
bool has_interleaved_kernels();

}  // namespace p64
