// Allowed: the CLI sits on the engine and the backend wiring.
#include "app/common/register_backends.h"
#include "engine/lab/store.h"
