#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {
thread_local bool g_dependent_launch = false;
}

void set_dependent_launch(bool on) { g_dependent_launch = on; }
bool dependent_launch() { return g_dependent_launch; }

}  // namespace p64::cuda
