#include "engine/runtime/cpu_backend.h"

#include "engine/common/error.h"

namespace p64 {

// Placeholder until the CPU backend lands (issue 2); creating it fails loudly.
std::unique_ptr<Backend> make_cpu_backend() { throw Error("the CPU backend is not built yet"); }

}  // namespace p64
