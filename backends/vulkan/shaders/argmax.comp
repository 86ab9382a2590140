#version 450
// Final argmax over the per-workgroup partials the logits GEMV left; writes the token id into
// the step buffer, the only value a decode step copies to the host.
#include "common.glsl"
#include "overlap.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 4) buffer BS { uint step[]; };
layout(std430, binding = 6) ACT readonly buffer BP { uint part[]; };
layout(push_constant) uniform PC { uint n; uint ov_wait, ov_target, ov_signal; } pc;
shared float bv[256];
shared uint bi[256];
void main() {
  uint tid = gl_LocalInvocationID.x;
  ov_wait(pc.ov_wait, pc.ov_target);
  float best = -1.0 / 0.0;
  uint besti = 0xFFFFFFFFu;
  for (uint i = tid; i < pc.n; i += 256u) {
    float v = uintBitsToFloat(part[2u * i]);
    uint id = part[2u * i + 1u];
    if (v > best || (v == best && id < besti)) { best = v; besti = id; }
  }
  bv[tid] = best;
  bi[tid] = besti;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (tid < s) {
      float o = bv[tid + s];
      uint oi = bi[tid + s];
      if (o > bv[tid] || (o == bv[tid] && oi < bi[tid])) { bv[tid] = o; bi[tid] = oi; }
    }
    barrier();
  }
  if (tid == 0u) step[2] = bi[0] == 0xFFFFFFFFu ? 0u : bi[0];
#ifdef OVERLAP
  if (tid == 0u) step[3] = flags[0];  // a timed-out wait of this step, for the host
#endif
}
