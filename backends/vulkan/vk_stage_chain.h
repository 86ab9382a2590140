#pragma once
#include <cstdint>

#include "backends/vulkan/vk_recorder.h"

namespace p64::vulkan {

// How the decode step orders its stages: a pipeline barrier between them, or with overlap=1
// no barrier and flag waits in the shaders (shaders/overlap.glsl). A stage is the dispatches
// between two ordering points; each dispatch signals its stage's slot, waits on the previous.
struct StageChain {
  bool on = false;
  uint32_t slot = 1, prev_wgs = 0, cur_wgs = 0;  // flags[0] is the timed-out-wait word
  struct Sync {
    uint32_t wait, target, signal;
  };
  Sync take(uint32_t workgroups) {
    cur_wgs += workgroups;
    return on ? Sync{slot - 1, prev_wgs, slot} : Sync{0, 0, 0};
  }
  void next(vk::Recorder& r) {
    if (!on) return r.barrier();
    prev_wgs = cur_wgs;
    cur_wgs = 0;
    ++slot;
  }
  void hard(vk::Recorder& r) {  // a real barrier even with overlap (the next stage need not wait)
    r.barrier();
    prev_wgs = cur_wgs = 0;
    ++slot;
  }
};

}  // namespace p64::vulkan
