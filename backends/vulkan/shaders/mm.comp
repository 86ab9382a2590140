#version 450
// Prefill matrix product Y[n][row] (+)= sum_k W[row][k] X[n][k] for a batch of tokens:
// 64 rows x 64 tokens per workgroup, K in steps of 32 staged through shared memory (weights
// dequantized once per tile and reused by all 64 tokens), 4x4 outputs per thread.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 2) const uint K = 256;
layout(constant_id = 4) const uint EPI = 0;
layout(std430, binding = 0) readonly buffer BW { uint wq[]; };
layout(std430, binding = 1) readonly buffer BX { float x[]; };
layout(std430, binding = 3) buffer BY { float y[]; };
layout(push_constant) uniform PC { uint M; uint N; uint wbase; uint nb; uint ldy; } pc;
shared float ws[32][65];
shared float xt[32][65];
float xget(uint k) { return 0.0; }
#include "weights.glsl"
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint row0 = gl_WorkGroupID.x * 64u, n0 = gl_WorkGroupID.y * 64u;
  uint tr = tid % 16u, tn = tid / 16u;
  float acc[4][4];
  [[unroll]] for (uint i = 0u; i < 4u; ++i) [[unroll]] for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < K; k0 += 32u) {
#if defined(DT_FLOAT)
    {
      uint r = tid / 4u, kk = (tid % 4u) * 8u;
      [[unroll]] for (uint i = 0u; i < 8u; ++i) {
        uint k = k0 + kk + i;
        ws[kk + i][r] = (row0 + r < pc.M && k < K) ? w_at(pc.wbase, row0 + r, k) : 0.0;
      }
    }
#else
    if (tid < 64u) {
      float v[32];
      if (row0 + tid < pc.M) {
        dq32(pc.wbase, pc.nb, row0 + tid, k0 / 32u, v);
      } else {
        [[unroll]] for (uint i = 0u; i < 32u; ++i) v[i] = 0.0;
      }
      [[unroll]] for (uint i = 0u; i < 32u; ++i) ws[i][tid] = v[i];
    }
#endif
    {
      uint nn = tid / 4u, kk = (tid % 4u) * 8u;
      [[unroll]] for (uint i = 0u; i < 8u; ++i) {
        uint k = k0 + kk + i;
        xt[kk + i][nn] = (n0 + nn < pc.N && k < K) ? x[(n0 + nn) * K + k] : 0.0;
      }
    }
    barrier();
    [[unroll]] for (uint kk = 0u; kk < 32u; ++kk) {
      float a[4], b[4];
      [[unroll]] for (uint i = 0u; i < 4u; ++i) { a[i] = ws[kk][tr + 16u * i]; b[i] = xt[kk][tn + 16u * i]; }
      [[unroll]] for (uint i = 0u; i < 4u; ++i) [[unroll]] for (uint j = 0u; j < 4u; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < 4u; ++i) [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    uint row = row0 + tr + 16u * i, n = n0 + tn + 16u * j;
    if (row < pc.M && n < pc.N) {
      uint idx = n * pc.ldy + row;
      if (EPI == EPI_ADD) y[idx] += acc[i][j]; else y[idx] = acc[i][j];
    }
  }
}
