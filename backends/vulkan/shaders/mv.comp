#version 450
// Matrix-vector product for decode: y = W x, one workgroup per ROWS rows, TPR threads per
// row. The input (optionally RMS-normalised on the fly: the norm is fused here so it costs
// no dispatch of its own) is staged in shared memory when it fits, and the epilogue does
// what the next op would have done: add into the residual, RoPE + KV-cache write, SwiGLU,
// or argmax partials for the logits.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(constant_id = 2) const uint K = 256;
layout(constant_id = 3) const uint TPR = 32;
layout(constant_id = 4) const uint EPI = 0;
layout(constant_id = 5) const bool FUSE_NORM = false;
layout(constant_id = 6) const uint XS_LEN = 256;  // K when the input is staged, else 1
layout(constant_id = 7) const bool STEP_POS = true;  // position from the step buffer

layout(std430, binding = 0) readonly buffer BW { uint wq[]; };
layout(std430, binding = 1) readonly buffer BX { float x[]; };
layout(std430, binding = 2) readonly buffer BG { float g[]; };
layout(std430, binding = 3) buffer BY { float y[]; };
layout(std430, binding = 4) buffer BS { uint step[]; };  // token, pos, result
layout(std430, binding = 5) readonly buffer BR { vec2 rope[]; };  // [pos][rope_dim/2] cos,sin
layout(std430, binding = 6) buffer BP { uint part[]; };  // argmax partials: value bits, index

layout(push_constant) uniform PC {
  uint M;           // rows (per matrix)
  uint wbase;       // byte offset of the matrix (gate for SwiGLU)
  uint wbase2;      // byte offset of the up matrix (SwiGLU)
  uint nb;          // blocks of one matrix (SoA array offsets)
  uint x_off;       // element offset of the input vector
  uint y_off;       // element offset of the output
  uint pos_stride;  // output advances by pos * pos_stride (KV cache rows); 0 otherwise
  uint head_dim;
  uint rope_dim;
  float eps;
  uint pos;         // when !STEP_POS
} pc;

const uint WG = ROWS * TPR;
shared float xs[XS_LEN];
shared float red[WG];
shared float red2[WG];
shared float res[ROWS];
shared float res2[ROWS];

float xget(uint k) {
  if (XS_LEN > 1u) return xs[k];
  float v = x[pc.x_off + k];
  return FUSE_NORM ? v * g[k] : v;
}

#include "weights.glsl"
#include "reduce.glsl"

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint row0 = gl_WorkGroupID.x * ROWS;

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

  uint pos = STEP_POS ? step[1] : pc.pos;
  uint ybase = pc.y_off + pos * pc.pos_stride;
  if (EPI == EPI_ROPE) {
    // Rows come in adjacent pairs (2i, 2i+1) of a head: rotate them together.
    if (tid < ROWS / 2u) {
      uint ra = row0 + 2u * tid;
      if (ra < pc.M) {
        float a = res[2u * tid], b = res[2u * tid + 1u];
        uint d = ra % pc.head_dim;
        if (d < pc.rope_dim) {
          vec2 cs = rope[pos * (pc.rope_dim / 2u) + d / 2u];
          float na = a * cs.x - b * cs.y;
          b = a * cs.y + b * cs.x;
          a = na;
        }
        y[ybase + ra] = a;
        y[ybase + ra + 1u] = b;
      }
    }
  } else if (tid < ROWS && row0 + tid < pc.M) {
    uint ro = row0 + tid;
    float v = res[tid];
    if (EPI == EPI_ADD) {
      y[ybase + ro] += v;
    } else if (EPI == EPI_SWIGLU) {
      y[ybase + ro] = v / (1.0 + exp(-v)) * res2[tid];
    } else {
      y[ybase + ro] = v;
    }
  }
  if (EPI == EPI_ARGMAX && tid == 0u) {
    // Largest logit of this workgroup's rows; ties go to the lowest id.
    float best = res[0];
    uint bi = row0;
    for (uint i = 1u; i < ROWS && row0 + i < pc.M; ++i)
      if (res[i] > best) { best = res[i]; bi = row0 + i; }
    part[2u * gl_WorkGroupID.x] = floatBitsToUint(best);
    part[2u * gl_WorkGroupID.x + 1u] = bi;
  }
}
