// Planted: a folder no one declared in the layer table.
#include "engine/common/error.h"
