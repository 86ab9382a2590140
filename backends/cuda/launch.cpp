#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {
thread_local bool g_dependent_launch = false;
thread_local int g_smem_carveout = -1;
}

void set_dependent_launch(bool on) { g_dependent_launch = on; }
bool dependent_launch() { return g_dependent_launch; }
void set_smem_carveout(int percent) { g_smem_carveout = percent; }
int smem_carveout() { return g_smem_carveout; }

}  // namespace p64::cuda
