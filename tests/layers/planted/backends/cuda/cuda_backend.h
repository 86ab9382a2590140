// Planted back edge: a backend reaches the lab above the runtime seam.
#include "engine/lab/store.h"
#include "engine/runtime/backend.h"
