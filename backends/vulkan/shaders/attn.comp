#version 450
// Decode attention of one query head per workgroup (the step's position from the step buffer),
// over the KV cache of one layer. Positions are taken WG at a time with an online softmax (running max and sum), so
// no score buffer is needed and any context length works with fixed shared memory.
// Scores: one position per thread, its key row read as HD/4 independent 16-byte loads (all in
// flight at once). Values: groups of HD/4 threads each take every NG-th position, one 16-byte
// slice of the row per thread, VB positions' loads issued before their multiply-adds; the
// groups' partial outputs are summed at the end. Short contexts are bound by memory latency,
// not bandwidth, so what matters is how many loads are in flight, not how few.
// SPLITS > 1: SPLITS workgroups share a head's positions (flash-decoding); each leaves
// its running max, sum and unnormalised output in `partial`, and the last to arrive (counted in
// `arrived`, which it resets) merges them, so long contexts need no second dispatch.
// WINDOW > 0 (a local layer of a sliding-window model): only the last WINDOW positions.
#include "common.glsl"
#include "overlap.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint HD = 128;  // head_dim, a multiple of 4 up to 4 * WG
layout(constant_id = 3) const uint SPLITS = 1;
layout(constant_id = 4) const uint VB = 4;  // positions whose value loads a group issues at once
layout(constant_id = 5) const uint WINDOW = 0;
layout(constant_id = 6) const float SOFTCAP = 0.0;  // > 0: scores -> SOFTCAP tanh(score / SOFTCAP) (gemma2)
layout(std430, binding = 0) ACT readonly buffer BK { vec4 kc[]; };
layout(std430, binding = 1) ACT readonly buffer BQ { vec4 q[]; };
layout(std430, binding = 2) ACT readonly buffer BV { vec4 vc[]; };
layout(std430, binding = 3) writeonly buffer BO { vec4 o[]; };
layout(std430, binding = 4) readonly buffer BS { uint step[]; };
layout(std430, binding = 5) coherent buffer BM { vec4 partial[]; };  // [head][split]: (m, l), D4 sums
layout(std430, binding = 6) coherent buffer BA { uint arrived[]; };  // [head]
layout(push_constant) uniform PC {
  uint head_dim; uint group;  // query heads per KV head
  uint kv_dim; uint q_dim; uint pos0; float scale;
  uint ov_wait, ov_target, ov_signal;
} pc;
const uint WG = gl_WorkGroupSize.x;
const uint D4 = HD / 4u;   // 16-byte slices of a row = threads of a value group
const uint NG = WG / D4;   // value groups
shared float red[WG];
shared float p[WG];
shared vec4 qsh[D4];
shared vec4 part[WG];
shared bool last_split;
#include "reduce.glsl"
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint h = gl_WorkGroupID.x / SPLITS, sp = gl_WorkGroupID.x % SPLITS;
  uint pos = step[1];
  uint lo = WINDOW > 0u && pos + 1u > WINDOW ? pos + 1u - WINDOW : 0u;  // the first position attended
  uint per = (pos - lo + SPLITS) / SPLITS;  // positions per split, of pos + 1 - lo
  uint t0 = min(pos + 1u, lo + sp * per), T = min(pos + 1u, t0 + per);
  ov_wait(pc.ov_wait, pc.ov_target);
  uint row4 = pc.kv_dim / 4u, kvo4 = (h / pc.group) * D4;
  if (tid < D4) qsh[tid] = q[h * D4 + tid] * pc.scale;
  barrier();
  uint g = tid / D4, d4 = tid % D4;
  float m = -1.0 / 0.0, l = 0.0;
  vec4 acc = vec4(0.0);
  for (uint c0 = t0; c0 < T; c0 += WG) {
    uint t = c0 + tid;
    float s = -1.0 / 0.0;
    if (t < T) {
      uint kb = t * row4 + kvo4;
      vec4 k[D4];
      [[unroll]] for (uint i = 0u; i < D4; ++i) k[i] = kc[kb + i];
      s = 0.0;
      [[unroll]] for (uint i = 0u; i < D4; ++i) s += dot(qsh[i], k[i]);
      if (SOFTCAP > 0.0) s = SOFTCAP * tanh(s / SOFTCAP);
    }
    float mn = max(m, wg_max(s));
    float alpha = exp(m - mn);
    float e = t < T ? exp(s - mn) : 0.0;
    p[tid] = e;
    float cs = wg_sum(e);  // its barriers also publish p[]
    l = l * alpha + cs;
    acc *= alpha;
    uint cnt = min(WG, T - c0);
    if (g < NG) {
      for (uint i0 = g; i0 < cnt; i0 += VB * NG) {
        vec4 v[VB];
        [[unroll]] for (uint j = 0u; j < VB; ++j) {
          uint i = min(i0 + j * NG, cnt - 1u);
          v[j] = vc[(c0 + i) * row4 + kvo4 + d4];
        }
        [[unroll]] for (uint j = 0u; j < VB; ++j)
          if (i0 + j * NG < cnt) acc += p[i0 + j * NG] * v[j];
      }
    }
    m = mn;
    barrier();
  }
  part[tid] = acc;
  barrier();
  vec4 sum = vec4(0.0);
  if (tid < D4)
    for (uint j = 0u; j < NG; ++j) sum += part[j * D4 + tid];
  uint out4 = h * D4 + tid;
  if (SPLITS == 1u) {
    if (tid < D4) o[out4] = sum / l;
  } else {
    uint hb = h * SPLITS * (D4 + 1u);
    if (tid == 0u) partial[hb + sp * (D4 + 1u)] = vec4(m, l, 0.0, 0.0);
    if (tid < D4) partial[hb + sp * (D4 + 1u) + 1u + tid] = sum;
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) last_split = atomicAdd(arrived[h], 1u) == SPLITS - 1u;
    barrier();
    if (last_split) {
      memoryBarrierBuffer();
      if (tid < D4) {
        float mx = -1.0 / 0.0;
        for (uint j = 0u; j < SPLITS; ++j) mx = max(mx, partial[hb + j * (D4 + 1u)].x);
        float lt = 0.0;
        vec4 ot = vec4(0.0);
        for (uint j = 0u; j < SPLITS; ++j) {
          vec4 ml = partial[hb + j * (D4 + 1u)];
          float w = ml.y > 0.0 ? exp(ml.x - mx) : 0.0;  // an empty split has m = -inf, l = 0
          lt += w * ml.y;
          ot += w * partial[hb + j * (D4 + 1u) + 1u + tid];
        }
        o[out4] = ot / lt;
      }
      if (tid == 0u) arrived[h] = 0u;
    }
  }
  ov_signal(pc.ov_signal);
}
