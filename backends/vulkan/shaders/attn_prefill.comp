#version 450
// Prefill attention: causal GQA of a chunk's N queries over one layer's KV cache (positions
// 0 .. pos0 + N - 1, earlier chunks included), one dispatch per layer. A workgroup takes one KV
// head and ROWS query rows (row = token * group + query head of that KV head), so each K/V
// tile it stages in shared memory serves every query head of the group and ROWS / group
// tokens. Keys go BKV at a time with an online softmax per row. TPR threads share a row: each
// scores every TPR-th key of the tile and owns every TPR-th 16-byte slice of the output.
// WINDOW > 0 (a local layer of a sliding-window model): a query sees only the last WINDOW
// positions, its own included.
#include "common.glsl"
layout(local_size_x_id = 0) in;  // ROWS x TPR
layout(constant_id = 1) const uint ROWS = 16;
layout(constant_id = 2) const uint HD = 128;  // head_dim, a multiple of 4
layout(constant_id = 3) const uint BKV = 16;
layout(constant_id = 4) const uint WINDOW = 0;
layout(constant_id = 5) const float SOFTCAP = 0.0;  // > 0: scores -> SOFTCAP tanh(score / SOFTCAP) (gemma2)
layout(std430, binding = 0) readonly buffer BK { vec4 kc[]; };
layout(std430, binding = 1) readonly buffer BQ { vec4 q[]; };  // RoPE'd queries [N][q_dim]
layout(std430, binding = 2) readonly buffer BV { vec4 vc[]; };
layout(std430, binding = 3) writeonly buffer BO { vec4 o[]; };  // [N][q_dim]
layout(push_constant) uniform PC { uint N; uint group; uint kv_dim; uint q_dim; uint pos0; float scale; } pc;
const uint WG = gl_WorkGroupSize.x;
const uint TPR = WG / ROWS;
const uint D4 = HD / 4u;
const uint PD = D4 + 1u;  // padded row stride: the TPR threads of a row read distinct banks
const uint SL = (D4 + TPR - 1u) / TPR;  // output slices per thread
shared vec4 qs[ROWS * PD];
shared vec4 ks[BKV * PD];
shared vec4 vs[BKV * PD];
shared float ps[ROWS * BKV];

// Query row r of this workgroup: its token (clamped to the chunk) and its head.
uint row_token(uint r) { return min((gl_WorkGroupID.y * ROWS + r) / pc.group, pc.N - 1u); }
uint row_head(uint r) { return gl_WorkGroupID.x * pc.group + (gl_WorkGroupID.y * ROWS + r) % pc.group; }

void main() {
  uint tid = gl_LocalInvocationID.x, r = tid / TPR, lt = tid % TPR;
  uint kvo4 = gl_WorkGroupID.x * D4, row4 = pc.kv_dim / 4u;
  for (uint i = tid; i < ROWS * D4; i += WG) {
    uint rr = i / D4, d4 = i % D4;
    qs[rr * PD + d4] = q[(row_token(rr) * pc.q_dim + row_head(rr) * HD) / 4u + d4] * pc.scale;
  }
  uint n = (gl_WorkGroupID.y * ROWS + r) / pc.group;
  uint pos = pc.pos0 + row_token(r);
  uint end = pc.pos0 + row_token(ROWS - 1u) + 1u;  // positions this workgroup reads
  uint first = pc.pos0 + row_token(0u);
  uint lo = WINDOW > 0u && first + 1u > WINDOW ? first + 1u - WINDOW : 0u;  // ... from the first row's window on
  float m = -1.0 / 0.0, l = 0.0;
  vec4 acc[SL];
  [[unroll]] for (uint c = 0u; c < SL; ++c) acc[c] = vec4(0.0);
  for (uint c0 = lo; c0 < end; c0 += BKV) {
    uint cnt = min(BKV, end - c0);
    barrier();  // the previous tile's readers are done
    for (uint i = tid; i < BKV * D4; i += WG) {
      uint j = i / D4, d4 = i % D4;
      bool in_tile = j < cnt;
      ks[j * PD + d4] = in_tile ? kc[(c0 + j) * row4 + kvo4 + d4] : vec4(0.0);
      vs[j * PD + d4] = in_tile ? vc[(c0 + j) * row4 + kvo4 + d4] : vec4(0.0);
    }
    barrier();
    for (uint j = lt; j < BKV; j += TPR) {
      float s = -1.0 / 0.0;
      if (j < cnt && c0 + j <= pos && (WINDOW == 0u || c0 + j + WINDOW > pos)) {
        s = 0.0;
        for (uint d4 = 0u; d4 < D4; ++d4) s += dot(qs[r * PD + d4], ks[j * PD + d4]);
        if (SOFTCAP > 0.0) s = SOFTCAP * tanh(s / SOFTCAP);
      }
      ps[r * BKV + j] = s;
    }
    barrier();
    // Without a window position 0 is in the first tile, so after it m is finite and no exp sees
    // -inf - -inf; with one, a row may see no key of the first tiles, which then count nothing.
    float mx = -1.0 / 0.0;
    for (uint j = 0u; j < cnt; ++j) mx = max(mx, ps[r * BKV + j]);
    float mn = max(m, mx), alpha = WINDOW > 0u && mn == -1.0 / 0.0 ? 1.0 : exp(m - mn);
    l *= alpha;
    [[unroll]] for (uint c = 0u; c < SL; ++c) acc[c] *= alpha;
    for (uint j = 0u; j < cnt; ++j) {
      float e = WINDOW > 0u && ps[r * BKV + j] == -1.0 / 0.0 ? 0.0 : exp(ps[r * BKV + j] - mn);
      l += e;
      [[unroll]] for (uint c = 0u; c < SL; ++c) {
        uint d4 = lt + TPR * c;
        if (d4 < D4) acc[c] += e * vs[j * PD + d4];
      }
    }
    m = mn;
  }
  if (n >= pc.N) return;
  uint ob = (n * pc.q_dim + row_head(r) * HD) / 4u;
  [[unroll]] for (uint c = 0u; c < SL; ++c) {
    uint d4 = lt + TPR * c;
    if (d4 < D4) o[ob + d4] = acc[c] / l;
  }
}
