#version 450
// Prefill: RoPE on the batch's Q (in place) and K, then K and V into the layer's KV cache at
// positions pos0 + n (one workgroup per token).
#include "common.glsl"
layout(local_size_x = 128) in;
layout(std430, binding = 0) writeonly buffer BKC { float kc[]; };
layout(std430, binding = 1) readonly buffer BK { float kb[]; };
layout(std430, binding = 2) readonly buffer BV { float vb[]; };
layout(std430, binding = 3) buffer BQ { float qb[]; };
layout(std430, binding = 5) readonly buffer BR { vec2 rope[]; };
layout(std430, binding = 6) writeonly buffer BVC { float vc[]; };
layout(push_constant) uniform PC { uint q_dim; uint kv_dim; uint head_dim; uint rope_dim; uint pos0; } pc;
vec2 rot(vec2 ab, uint d, uint pos) {
  if (d >= pc.rope_dim) return ab;
  vec2 cs = rope[pos * (pc.rope_dim / 2u) + d / 2u];
  return vec2(ab.x * cs.x - ab.y * cs.y, ab.x * cs.y + ab.y * cs.x);
}
void main() {
  uint n = gl_WorkGroupID.x, pos = pc.pos0 + n, tid = gl_LocalInvocationID.x;
  for (uint i = tid; i < pc.q_dim / 2u; i += 128u) {
    uint e = n * pc.q_dim + 2u * i;
    vec2 r = rot(vec2(qb[e], qb[e + 1u]), (2u * i) % pc.head_dim, pos);
    qb[e] = r.x;
    qb[e + 1u] = r.y;
  }
  for (uint i = tid; i < pc.kv_dim / 2u; i += 128u) {
    uint e = n * pc.kv_dim + 2u * i, c = pos * pc.kv_dim + 2u * i;
    vec2 r = rot(vec2(kb[e], kb[e + 1u]), (2u * i) % pc.head_dim, pos);
    kc[c] = r.x;
    kc[c + 1u] = r.y;
    vc[c] = vb[e];
    vc[c + 1u] = vb[e + 1u];
  }
}
