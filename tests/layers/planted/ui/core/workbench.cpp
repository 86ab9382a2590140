// Planted back edge: the ui names the backends the app registers.
#include "app/common/register_backends.h"
