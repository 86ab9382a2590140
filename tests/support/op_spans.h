#pragma once
// An op span in one call: the timeline tests' hand-written fixtures (the lab's spread and bytes,
// the GUI's tracks and spread table) read as one line a span, and the toy backend reports its
// own spans with it.
#include <cstdint>

#include "engine/runtime/timeline.h"

namespace p64::test {

inline OpSpan op_span(const char* name, OpGroup group, int32_t layer, int32_t step, double start_us, double dur_us,
                      uint64_t bytes = 0, bool prefill = false) {
  OpSpan s;
  s.name = name;
  s.group = group;
  s.layer = layer;
  s.step = step;
  s.start_us = start_us;
  s.dur_us = dur_us;
  s.bytes = bytes;
  s.prefill = prefill;
  return s;
}

}  // namespace p64::test
