#version 450
// Matrix-vector product for decode (gemv_kernel=wide): y = W x for memory-latency-bound
// GPUs. One workgroup per ROWS rows; a group of TPR threads owns RPT rows (so each staged
// input value read serves RPT rows) and each thread keeps NU units per row in flight: their
// loads (16-byte where the layout is aligned) are issued before any arithmetic on them, and
// the first round before the input is even staged, which they do not depend on. The input
// (RMS-normalised on the fly with FUSE_NORM) is staged as vec4 with sums of every 16 values;
// mv_epilogue.glsl then does what the next op would have done.
#include "common.glsl"
#include "mv_interface.glsl"
layout(constant_id = 8) const uint NU = 2;   // units per row in flight per thread
layout(constant_id = 9) const uint RPT = 1;  // rows per group of TPR threads
layout(constant_id = 10) const bool MANTISSA = true;  // weights_wide.glsl: Q4_K/Q6_K fields by mantissa placement

// The same buffers as 16-byte vectors (the host only picks this kernel when the offsets
// and K keep them aligned).
layout(std430, binding = 0) readonly buffer BW4 { uvec4 wq4[]; };
layout(std430, binding = 1) ACT readonly buffer BX4 { vec4 x4[]; };
layout(std430, binding = 2) readonly buffer BG4 { vec4 g4[]; };

// Where vec4 i of the input is staged. The lanes of a quarter subgroup read vec4s that lie a
// multiple of 8 apart (8 units apart for Q8_0/Q5_0/F16, 16 and 48 elements apart inside a
// Q4_K/Q6_K block), i.e. in the same shared-memory banks; a gap every 8 or 16 vec4s (and two
// more every 32 for Q6_K's order of units) spreads them over all banks.
#if defined(DT_F32)
uint xp(uint i) { return i; }
#elif defined(DT_Q4_K) || defined(DT_Q4_K_SOA)
uint xp(uint i) { return i + (i >> 4); }
#elif defined(DT_Q6_K) || defined(DT_Q6_K_SOA)
uint xp(uint i) { return i + (i >> 3) + 2u * (i >> 5); }
#else
uint xp(uint i) { return i + (i >> 3); }
#endif

const uint GROUPS = ROWS / RPT;
const uint WG = GROUPS * TPR;
shared vec4 xs4[K / 4u + K / 32u + K / 64u];  // the largest xp(K / 4 - 1) + 1 of any format
shared float xsum[K / 16u];
shared float red[WG * RPT];
shared float red2[WG * RPT];

float xget(uint k) { return xs4[xp(k >> 2)][k & 3u]; }  // for weights.glsl, whose dot_unit goes unused

#include "weights.glsl"
#include "weights_wide.glsl"
#include "reduce.glsl"
#include "mv_epilogue.glsl"

const uint UNITS = K / WUNIT;    // units per row
const uint BATCH = NU * TPR;     // units per row that a group reads per round
const uint SLOTS = RPT * NU;     // raw units per matrix a thread holds
const bool PAIR = EPI == EPI_SWIGLU;

// Loads of round u0 for rows rbase.. (clamped: rows past M and units past the row end read
// valid weights, whose products are dropped).
void load_round(uint rbase, uint lane, uint u0, inout Raw w[SLOTS], inout Raw w2[SLOTS]) {
  [[unroll]] for (uint r = 0u; r < RPT; ++r) {
    uint row = min(rbase + r, pc.M - 1u);
    [[unroll]] for (uint i = 0u; i < NU; ++i) {
      uint u = min(u0 + i * TPR + lane, UNITS - 1u);
      w[r * NU + i] = raw_load(pc.wbase, pc.nb, row, u);
      if (PAIR) w2[r * NU + i] = raw_load(pc.wbase2, pc.nb, row, u);
    }
  }
}

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint grp = tid / TPR, lane = tid % TPR;
  uint row0 = gl_WorkGroupID.x * ROWS;
  uint rbase = row0 + grp * RPT;

  Raw w[SLOTS], w2[SLOTS];
  load_round(rbase, lane, 0u, w, w2);
  ov_wait(pc.ov_wait, pc.ov_target);

  // Stage the input 16 values per step; the RMS scale multiplies the dot products at the end.
  float ss = 0.0;
  for (uint q = tid; q < K / 16u; q += WG) {
    uint xi = pc.x_off / 4u + q * 4u;
    float sum16 = 0.0;
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      vec4 v = x4[xi + i];
      ss += dot(v, v);
      if (FUSE_NORM) v *= g4[q * 4u + i];
      xs4[xp(q * 4u + i)] = v;
      sum16 += v.x + v.y + v.z + v.w;
    }
    xsum[q] = sum16;
  }
  float scale = 1.0;
  if (FUSE_NORM) scale = inversesqrt(wg_sum(ss) / float(K) + pc.eps);
  barrier();

  float acc[RPT], acc2[RPT];
  [[unroll]] for (uint r = 0u; r < RPT; ++r) { acc[r] = 0.0; acc2[r] = 0.0; }
  for (uint u0 = 0u;;) {
    [[unroll]] for (uint i = 0u; i < NU; ++i) {
      uint u = u0 + i * TPR + lane;
      if (u < UNITS) {
        [[unroll]] for (uint r = 0u; r < RPT; ++r) {
          uint row = min(rbase + r, pc.M - 1u);
          acc[r] += raw_dot(w[r * NU + i], pc.wbase, pc.nb, row, u);
          if (PAIR) acc2[r] += raw_dot(w2[r * NU + i], pc.wbase2, pc.nb, row, u);
        }
      }
    }
    u0 += BATCH;
    if (u0 >= UNITS) break;
    load_round(rbase, lane, u0, w, w2);
  }

  // Row sums into res / res2 (row row0 + grp * RPT + r is res[grp * RPT + r]).
#ifdef USE_SUBGROUP
  [[unroll]] for (uint r = 0u; r < RPT; ++r) {
    float s = subgroupAdd(acc[r]);
    float s2 = PAIR ? subgroupAdd(acc2[r]) : 0.0;
    if (subgroupElect()) {
      red[gl_SubgroupID * RPT + r] = s;
      red2[gl_SubgroupID * RPT + r] = s2;
    }
  }
  barrier();
  uint per_group = TPR / gl_SubgroupSize;
  if (tid < ROWS) {
    uint g = tid / RPT, r = tid % RPT;
    float s = 0.0, s2 = 0.0;
    for (uint i = 0u; i < per_group; ++i) {
      s += red[(g * per_group + i) * RPT + r];
      s2 += red2[(g * per_group + i) * RPT + r];
    }
    res[tid] = s * scale;
    res2[tid] = s2 * scale;
  }
#else
  [[unroll]] for (uint r = 0u; r < RPT; ++r) {
    red[tid * RPT + r] = acc[r];
    red2[tid * RPT + r] = acc2[r];
  }
  barrier();
  for (uint s = TPR / 2u; s > 0u; s >>= 1) {
    if (lane < s) {
      [[unroll]] for (uint r = 0u; r < RPT; ++r) {
        red[tid * RPT + r] += red[(tid + s) * RPT + r];
        red2[tid * RPT + r] += red2[(tid + s) * RPT + r];
      }
    }
    barrier();
  }
  if (tid < ROWS) {
    uint g = tid / RPT, r = tid % RPT;
    res[tid] = red[g * TPR * RPT + r] * scale;
    res2[tid] = red2[g * TPR * RPT + r] * scale;
  }
#endif
  barrier();

  mv_epilogue(tid, row0);
  ov_signal(pc.ov_signal);
}
