// Allowed: format/ builds on model/ and common/.
#include "engine/common/error.h"
#include "engine/model/vocab.h"
