#pragma once
#include <memory>
#include <vector>

#include "engine/runtime/backend.h"

namespace p64 {

// The reference backend: weights read in place from the mapped P64, threads over rows,
// SIMD dot products chosen at run time.
std::unique_ptr<Backend> make_cpu_backend();
// Its switches (readable without creating one).
const std::vector<SwitchInfo>& cpu_switch_table();

}  // namespace p64
