#version 450
// The steps between the q/k/v products and attention that the Llama block folds into the
// GEMV's RoPE epilogue but other architectures cannot: each needs a whole head in one
// workgroup. Per head of one token: add the projection's bias (qwen2), RMS-normalise q and k
// with their per-head weights (qwen3), then RoPE in the model's pairing, adjacent (2i, 2i+1)
// or halves (i, i + rope_dim/2). In place: q in the query buffer, k and v in their cache rows.
// Workgroup x: q heads, then k heads, then (with a bias) v heads; y: the token of a batch.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer BQ { float q[]; };
layout(std430, binding = 1) buffer BK { float kc[]; };
layout(std430, binding = 2) buffer BV { float vc[]; };
layout(std430, binding = 3) readonly buffer BB { float bias[]; };  // bq, bk, bv end to end
layout(std430, binding = 4) readonly buffer BS { uint step[]; };   // token, pos, ...
layout(std430, binding = 5) readonly buffer BR { vec2 rope[]; };   // [pos][rope_dim/2] cos,sin
layout(std430, binding = 6) readonly buffer BN { float norm[]; };  // q norm, k norm (head_dim each)
layout(push_constant) uniform PC {
  uint head_dim, rope_dim, n_head, n_head_kv;
  uint pos0;   // position of token 0 of the batch (unless FLAG_STEP_POS)
  uint flags;  // FLAG_*
  float eps;
} pc;
const uint FLAG_BIAS = 1u, FLAG_NORM = 2u, FLAG_HALVES = 4u, FLAG_STEP_POS = 8u;
const uint WG = 64u;
const uint PART_Q = 0u, PART_K = 1u, PART_V = 2u;
shared float red[WG];
shared float h[512];
#include "reduce.glsl"

float load(uint part, uint i) { return part == PART_Q ? q[i] : part == PART_K ? kc[i] : vc[i]; }
void store(uint part, uint i, float v) {
  if (part == PART_Q) q[i] = v;
  else if (part == PART_K) kc[i] = v;
  else vc[i] = v;
}

void main() {
  uint tid = gl_LocalInvocationID.x, j = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
  uint hd = pc.head_dim, q_dim = pc.n_head * hd, kv_dim = pc.n_head_kv * hd;
  uint pos = (pc.flags & FLAG_STEP_POS) != 0u ? step[1] : pc.pos0 + t;
  uint part, off, bias_off;
  if (j < pc.n_head) {
    part = PART_Q, off = t * q_dim + j * hd, bias_off = j * hd;
  } else if (j < pc.n_head + pc.n_head_kv) {
    uint kh = j - pc.n_head;
    part = PART_K, off = pos * kv_dim + kh * hd, bias_off = q_dim + kh * hd;
  } else {
    uint vh = j - pc.n_head - pc.n_head_kv;
    part = PART_V, off = pos * kv_dim + vh * hd, bias_off = q_dim + kv_dim + vh * hd;
  }

  // bias add
  float ss = 0.0;
  for (uint d = tid; d < hd; d += WG) {
    float v = load(part, off + d);
    if ((pc.flags & FLAG_BIAS) != 0u) v += bias[bias_off + d];
    h[d] = v;
    ss += v * v;
  }
  if (part == PART_V) {
    for (uint d = tid; d < hd; d += WG) store(part, off + d, h[d]);
    return;
  }
  // q and k rmsnorm per head
  if ((pc.flags & FLAG_NORM) != 0u) {
    float scale = inversesqrt(wg_sum(ss) / float(hd) + pc.eps);
    uint w = part == PART_Q ? 0u : hd;
    for (uint d = tid; d < hd; d += WG) h[d] = norm[w + d] * (scale * h[d]);
  }
  barrier();
  // RoPE, then the dimensions past rope_dim as they are
  uint pairs = pc.rope_dim / 2u;
  bool halves = (pc.flags & FLAG_HALVES) != 0u;
  for (uint i = tid; i < pairs; i += WG) {
    uint a = halves ? i : 2u * i, b = halves ? i + pairs : 2u * i + 1u;
    vec2 cs = rope[pos * pairs + i];
    store(part, off + a, h[a] * cs.x - h[b] * cs.y);
    store(part, off + b, h[a] * cs.y + h[b] * cs.x);
  }
  for (uint d = pc.rope_dim + tid; d < hd; d += WG) store(part, off + d, h[d]);
}
