#version 450
// Matrix-vector product for decode (gemv_kernel=scalar): y = W x, one workgroup per ROWS
// rows, TPR threads per row, one unit of weights per thread at a time. The input (optionally
// RMS-normalised on the fly: the norm is fused here so it costs no dispatch of its own) is
// staged in shared memory when it fits; mv_epilogue.glsl does what the next op would have done.
#include "common.glsl"
#include "mv_interface.glsl"
layout(constant_id = 6) const uint XS_LEN = 256;  // K when the input is staged, else 1

const uint WG = ROWS * TPR;
shared float xs[XS_LEN];
shared float red[WG];
shared float red2[WG];

float xget(uint k) {
  if (XS_LEN > 1u) return xs[k];
  float v = x[pc.x_off + k];
  return FUSE_NORM ? v * g[k] : v;
}

#include "weights.glsl"
#include "reduce.glsl"
#include "mv_epilogue.glsl"

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint row0 = gl_WorkGroupID.x * ROWS;
  ov_wait(pc.ov_wait, pc.ov_target);

  // Stage the input; the RMS scale multiplies the dot products at the end.
  float ss = 0.0;
  for (uint k = tid; k < K; k += WG) {
    float v = x[pc.x_off + k];
    ss += v * v;
    if (XS_LEN > 1u) xs[k] = FUSE_NORM ? v * g[k] : v;
  }
  float scale = 1.0;
  if (FUSE_NORM) scale = inversesqrt(wg_sum(ss) / float(K) + pc.eps);
  barrier();

  uint r = tid / TPR, lane = tid % TPR;
  uint row = row0 + r;
  float acc = 0.0, acc2 = 0.0;
  if (row < pc.M) {
    for (uint u = lane; u < K / UNIT; u += TPR) {
      acc += dot_unit(pc.wbase, pc.nb, row, u);
      if (EPI == EPI_SWIGLU) acc2 += dot_unit(pc.wbase2, pc.nb, row, u);
    }
  }

  // Per-row sums into res[r] / res2[r].
#ifdef USE_SUBGROUP
  acc = subgroupAdd(acc);
  if (EPI == EPI_SWIGLU) acc2 = subgroupAdd(acc2);
  if (subgroupElect()) { red[gl_SubgroupID] = acc; red2[gl_SubgroupID] = acc2; }
  barrier();
  uint per_row = TPR / gl_SubgroupSize;
  if (tid < ROWS) {
    float s = 0.0, s2 = 0.0;
    for (uint i = 0u; i < per_row; ++i) { s += red[tid * per_row + i]; s2 += red2[tid * per_row + i]; }
    res[tid] = s * scale;
    res2[tid] = s2 * scale;
  }
#else
  red[tid] = acc;
  red2[tid] = acc2;
  barrier();
  for (uint s = TPR / 2u; s > 0u; s >>= 1) {
    if (lane < s) { red[tid] += red[tid + s]; red2[tid] += red2[tid + s]; }
    barrier();
  }
  if (tid < ROWS) { res[tid] = red[tid * TPR] * scale; res2[tid] = red2[tid * TPR] * scale; }
#endif
  barrier();

  mv_epilogue(tid, row0);
  ov_signal(pc.ov_signal);
}
