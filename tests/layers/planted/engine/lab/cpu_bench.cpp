// Planted back edge: the lab reaches into the CPU backend's kernels instead of asking the
// engine what this CPU runs (engine/common/cpu_isa.h).
#include "backends/cpu/dot.h"
#include "engine/common/cpu_isa.h"
