// Planted back edge: model reads a file format, while format/ builds on model/.
#include "engine/format/gguf_reader.h"
#include "engine/model/vocab.h"
