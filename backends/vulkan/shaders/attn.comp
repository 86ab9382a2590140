#version 450
// Causal attention of one query head and one token per workgroup, over the KV cache of one
// layer. Positions are taken WG at a time with an online softmax (running max and sum), so
// no score buffer is needed and any context length works with fixed shared memory.
#include "common.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool STEP_POS = true;
layout(std430, binding = 0) readonly buffer BK { float kc[]; };
layout(std430, binding = 1) readonly buffer BQ { float q[]; };
layout(std430, binding = 2) readonly buffer BV { float vc[]; };
layout(std430, binding = 3) writeonly buffer BO { float o[]; };
layout(std430, binding = 4) readonly buffer BS { uint step[]; };
layout(push_constant) uniform PC {
  uint head_dim; uint group;  // query heads per KV head
  uint kv_dim; uint q_dim; uint pos0; float scale;
} pc;
const uint WG = gl_WorkGroupSize.x;
shared float red[WG];
shared float p[WG];
shared float qsh[512];
#include "reduce.glsl"
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint h = gl_WorkGroupID.x, n = gl_WorkGroupID.y;
  uint pos = STEP_POS ? step[1] : pc.pos0 + n;
  uint T = pos + 1u, hd = pc.head_dim;
  uint kvo = (h / pc.group) * hd;
  for (uint d = tid; d < hd; d += WG) qsh[d] = q[n * pc.q_dim + h * hd + d] * pc.scale;
  barrier();
  float m = -1.0 / 0.0, l = 0.0, o0 = 0.0, o1 = 0.0;
  for (uint c0 = 0u; c0 < T; c0 += WG) {
    uint t = c0 + tid;
    float s = -1.0 / 0.0;
    if (t < T) {
      s = 0.0;
      uint kb = t * pc.kv_dim + kvo;
      for (uint d = 0u; d < hd; d += 4u)
        s += dot(vec4(qsh[d], qsh[d + 1u], qsh[d + 2u], qsh[d + 3u]),
                 vec4(kc[kb + d], kc[kb + d + 1u], kc[kb + d + 2u], kc[kb + d + 3u]));
    }
    float mn = max(m, wg_max(s));
    float alpha = exp(m - mn);
    float e = t < T ? exp(s - mn) : 0.0;
    p[tid] = e;
    float cs = wg_sum(e);  // its barriers also publish p[]
    l = l * alpha + cs;
    uint cnt = min(WG, T - c0);
    o0 *= alpha;
    o1 *= alpha;
    for (uint i = 0u; i < cnt; ++i) {
      uint vb = (c0 + i) * pc.kv_dim + kvo;
      float pi = p[i];
      if (tid < hd) o0 += pi * vc[vb + tid];
      if (tid + WG < hd) o1 += pi * vc[vb + tid + WG];
    }
    m = mn;
    barrier();
  }
  uint ob = n * pc.q_dim + h * hd;
  if (tid < hd) o[ob + tid] = o0 / l;
  if (tid + WG < hd) o[ob + tid + WG] = o1 / l;
}
