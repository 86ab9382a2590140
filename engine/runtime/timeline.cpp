#include "engine/runtime/timeline.h"

namespace p64 {

std::string_view op_group_name(OpGroup g) {
  switch (g) {
    case OpGroup::Rms: return "RMS";
    case OpGroup::Attn: return "ATTN";
    case OpGroup::Ffn: return "FFN";
    case OpGroup::Logits: return "LOGITS";
    case OpGroup::Sample: return "SAMPLE";
    case OpGroup::Other: return "OTHER";
  }
  return "OTHER";
}

}  // namespace p64
