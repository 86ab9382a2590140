// Planted back edges: the engine reaches the ui, and runtime reaches format (a sibling).
#include "ui/core/workbench.h"
#include "engine/format/gguf_reader.h"
