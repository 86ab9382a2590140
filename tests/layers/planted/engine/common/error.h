// Planted back edge: the bottom layer reaches a backend.
#include "backends/cuda/cuda_backend.h"
