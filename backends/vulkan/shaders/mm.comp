#version 450
// Prefill GEMM: Y[n][row] (+)= sum_k W[row][k] X[n][k] for a chunk of N tokens.
// A workgroup owns BM weight rows x BN tokens; K goes by 32 (one unit of every format). Each
// k-step, every thread dequantizes its share of the BM x 32 weight tile (weights_tile.glsl) and
// copies its share of the BN x 32 input tile into shared memory, once for all BN tokens; the
// next step's raw words are loaded before this step's products, so they arrive meanwhile.
// A thread sums 8 rows x 4 tokens: rows tr*4.. and BM/2 + tr*4.. (contiguous vec4 reads across
// threads), which for SwiGLU are the gate and up rows of the same 4 features.
// F16 (devices with shaderFloat16): the tiles are f16 pairs along k, the products f16vec2 FMAs
// summed over the step's 32 elements, then added into f32 (twice the FMA rate).
// COOPMAT (VK_NV_cooperative_matrix, subgroups of 32): f16 tiles [row][k] and [token][k], each
// subgroup multiplies a 32 x 32 block as 2 x 2 16x16x16 matrices with f32 sums; the sums go
// through shared memory into the same per-thread 8 x 4 layout for split K and the epilogue.
// Split K (grid z = splits > 1, for grids too small to fill the device): each workgroup sums its
// share of the k-steps and leaves the partial sums in `part`; the last of a tile's workgroups to
// arrive (counted in `arrived`, which it resets) adds them in split order, so the result does not
// depend on which one is last, and applies the epilogue.
// Epilogues: store, add (residual), RoPE (rows in pairs) at cache row y_row0 + n, SwiGLU.
#include "common.glsl"
#if defined(F16) || defined(COOPMAT)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#ifdef COOPMAT
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#endif
layout(local_size_x_id = 0) in;  // (BM / 8) x (BN / 4)
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 3) const uint BN = 64;
layout(constant_id = 4) const bool GEGLU = false;  // EPI_SWIGLU with GELU for silu (gemma)
layout(std430, binding = 0) readonly buffer BW { uint wq[]; };
layout(std430, binding = 1) readonly buffer BX { vec4 x4[]; };  // [N][K], K a multiple of 4
layout(std430, binding = 3) buffer BY { float y[]; };
layout(std430, binding = 5) readonly buffer BR { vec2 rope[]; };  // [pos][rope_dim/2] cos,sin
layout(std430, binding = 6) coherent buffer BP { float part[]; };  // [tile][split][32][WG]
layout(std430, binding = 7) coherent buffer BA { uint arrived[]; };  // [tile]
layout(push_constant) uniform PC {
  uint M;       // rows (features for SwiGLU)
  uint N;       // tokens
  uint wbase;   // byte offset of the matrix (gate for SwiGLU)
  uint wbase2;  // byte offset of the up matrix (SwiGLU)
  uint nb;      // blocks of one matrix (SoA array offsets)
  uint ldy;     // output row stride
  uint y_row0;  // output row of token 0 (its cache position for K and V)
  uint pos0;    // position of token 0 (RoPE)
  uint head_dim;
  uint rope_dim;
  uint row_len;  // K
  uint epi;     // EPI_*
  uint splits;
  uint part_off;  // this dispatch's region of `part` (floats) ...
  uint arrived_off;  // ... and of `arrived`
} pc;
// The row length and the epilogue are push constants, not specialization constants, so that one
// pipeline per format and tile serves every matrix (each pipeline costs a compile on a cold start).
#define K pc.row_len
#define EPI pc.epi
const uint WG = gl_WorkGroupSize.x;
const uint RT = BM / 8u;          // threads along the rows
const uint WU = BM * 4u / WG;     // weight eighths a thread loads per step
const uint XU = BN * 8u / WG;     // input vec4s a thread loads per step
float xget(uint k) { return 0.0; }
#include "weights.glsl"
#include "weights_tile.glsl"
#if defined(COOPMAT)
const uint LD = 40u;  // row stride of both tiles: 32 k + 8, rows 16-byte aligned on spread banks
shared float16_t ws[BM * LD];  // [row][k]
shared float16_t xs[BN * LD];  // [token][k]
shared float cs[BM * BN];      // [row][token] sums, read back in the thread layout
#elif defined(F16)
shared uvec4 ws[16u * BM / 4u];  // [k pair][row / 4], each lane an f16 pair
shared uvec4 xs[16u * BN / 4u];  // [k pair][token / 4]
#else
shared vec4 ws[32u * BM / 4u];   // [k][row / 4]
shared vec4 xs[32u * BN / 4u];   // [k][token / 4]
#endif

uint tid, row_base, n0;
shared bool last_split;
uint raw[WU][RAW];
vec4 xr[XU];

// Local row lr of the tile: its matrix row and byte offset; false past the matrix.
bool tile_row(uint lr, out uint row, out uint base) {
  if (EPI == EPI_SWIGLU) {
    row = row_base + lr % (BM / 2u);
    base = lr < BM / 2u ? pc.wbase : pc.wbase2;
  } else {
    row = row_base + lr;
    base = pc.wbase;
  }
  return row < pc.M;
}

void load_step(uint kb) {
  [[unroll]] for (uint u = 0u; u < WU; ++u) {
    uint i = tid + WG * u, row, base;
    if (tile_row(i % BM, row, base)) {
      raw_load(base, pc.nb, row, kb, i / BM, raw[u]);
    } else {
      [[unroll]] for (uint j = 0u; j < RAW; ++j) raw[u][j] = 0u;
    }
  }
  [[unroll]] for (uint u = 0u; u < XU; ++u) {
    uint i = tid + WG * u, n = n0 + i / 8u, k4 = kb * 8u + i % 8u;
    xr[u] = n < pc.N && k4 * 4u < K ? x4[n * (K / 4u) + k4] : vec4(0.0);
  }
}

void store_step(uint kb) {
  [[unroll]] for (uint u = 0u; u < WU; ++u) {
    uint i = tid + WG * u, lr = i % BM, q = i / BM, row, base;
    tile_row(lr, row, base);
    vec4 lo, hi;
    raw_decode(raw[u], base, pc.nb, row, kb, q, lo, hi);
#if defined(COOPMAT)
    uint c = lr * LD + q * 8u;
    [[unroll]] for (uint e = 0u; e < 4u; ++e) {
      ws[c + e] = float16_t(lo[e]);
      ws[c + 4u + e] = float16_t(hi[e]);
    }
#elif defined(F16)
    uint c = q * 4u * (BM / 4u) + lr / 4u;
    ws[c][lr % 4u] = packHalf2x16(lo.xy);
    ws[c + BM / 4u][lr % 4u] = packHalf2x16(lo.zw);
    ws[c + 2u * (BM / 4u)][lr % 4u] = packHalf2x16(hi.xy);
    ws[c + 3u * (BM / 4u)][lr % 4u] = packHalf2x16(hi.zw);
#else
    uint c = q * 8u * (BM / 4u) + lr / 4u;
    [[unroll]] for (uint e = 0u; e < 4u; ++e) {
      ws[c + e * (BM / 4u)][lr % 4u] = lo[e];
      ws[c + (e + 4u) * (BM / 4u)][lr % 4u] = hi[e];
    }
#endif
  }
  [[unroll]] for (uint u = 0u; u < XU; ++u) {
    uint i = tid + WG * u, n = i / 8u, c4 = i % 8u;
#if defined(COOPMAT)
    [[unroll]] for (uint e = 0u; e < 4u; ++e) xs[n * LD + c4 * 4u + e] = float16_t(xr[u][e]);
#elif defined(F16)
    uint c = c4 * 2u * (BN / 4u) + n / 4u;
    xs[c][n % 4u] = packHalf2x16(xr[u].xy);
    xs[c + BN / 4u][n % 4u] = packHalf2x16(xr[u].zw);
#else
    uint c = c4 * 4u * (BN / 4u) + n / 4u;
    [[unroll]] for (uint e = 0u; e < 4u; ++e) xs[c + e * (BN / 4u)][n % 4u] = xr[u][e];
#endif
  }
}

void main() {
  tid = gl_LocalInvocationID.x;
  uint tr = tid % RT, tn = tid / RT;
  row_base = gl_WorkGroupID.x * (EPI == EPI_SWIGLU ? BM / 2u : BM);
  n0 = gl_WorkGroupID.y * BN;
  vec4 acc[8];  // [row slot][token]
  [[unroll]] for (uint i = 0u; i < 8u; ++i) acc[i] = vec4(0.0);
#ifdef COOPMAT
  // Subgroup sg owns rows r0.. and tokens t0.. of the tile (as many subgroups as 32 x 32 blocks).
  uint r0 = (gl_SubgroupID % (BM / 32u)) * 32u, t0 = (gl_SubgroupID / (BM / 32u)) * 32u;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c00 = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c01 = c00, c10 = c00, c11 = c00;
#endif
  const uint KB = (K + 31u) / 32u;  // k-steps
  uint z = gl_WorkGroupID.z, kb0 = z * KB / pc.splits, kb1 = (z + 1u) * KB / pc.splits;
  load_step(kb0);
  for (uint kb = kb0; kb < kb1; ++kb) {
    store_step(kb);
    barrier();
    if (kb + 1u < kb1) load_step(kb + 1u);
#if defined(COOPMAT)
    [[unroll]] for (uint ks = 0u; ks < 32u; ks += 16u) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a0, a1, b0, b1;
      coopMatLoadNV(a0, ws, r0 * LD + ks, LD, false);
      coopMatLoadNV(a1, ws, (r0 + 16u) * LD + ks, LD, false);
      coopMatLoadNV(b0, xs, t0 * LD + ks, LD, true);  // B[k][n] = X[t0 + n][ks + k]: column-major
      coopMatLoadNV(b1, xs, (t0 + 16u) * LD + ks, LD, true);
      c00 = coopMatMulAddNV(a0, b0, c00);
      c01 = coopMatMulAddNV(a0, b1, c01);
      c10 = coopMatMulAddNV(a1, b0, c10);
      c11 = coopMatMulAddNV(a1, b1, c11);
    }
#elif defined(F16)
    f16vec2 h[8][4];
    [[unroll]] for (uint i = 0u; i < 8u; ++i) [[unroll]] for (uint j = 0u; j < 4u; ++j) h[i][j] = f16vec2(0.0);
    for (uint kp = 0u; kp < 16u; ++kp) {
      uvec4 a0 = ws[kp * (BM / 4u) + tr], a1 = ws[kp * (BM / 4u) + BM / 8u + tr], b = xs[kp * (BN / 4u) + tn];
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        f16vec2 bj = unpackFloat2x16(b[j]);
        [[unroll]] for (uint i = 0u; i < 4u; ++i) {
          h[i][j] = fma(unpackFloat2x16(a0[i]), bj, h[i][j]);
          h[i + 4u][j] = fma(unpackFloat2x16(a1[i]), bj, h[i + 4u][j]);
        }
      }
    }
    [[unroll]] for (uint i = 0u; i < 8u; ++i)
      [[unroll]] for (uint j = 0u; j < 4u; ++j) acc[i][j] += float(h[i][j].x) + float(h[i][j].y);
#else
    for (uint kk = 0u; kk < 32u; ++kk) {
      vec4 a0 = ws[kk * (BM / 4u) + tr], a1 = ws[kk * (BM / 4u) + BM / 8u + tr], b = xs[kk * (BN / 4u) + tn];
      [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        acc[i] += a0[i] * b;
        acc[i + 4u] += a1[i] * b;
      }
    }
#endif
    barrier();
  }
#ifdef COOPMAT
  coopMatStoreNV(c00, cs, r0 * BN + t0, BN, false);
  coopMatStoreNV(c01, cs, r0 * BN + t0 + 16u, BN, false);
  coopMatStoreNV(c10, cs, (r0 + 16u) * BN + t0, BN, false);
  coopMatStoreNV(c11, cs, (r0 + 16u) * BN + t0 + 16u, BN, false);
  barrier();
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    uint c = ((i / 4u) * (BM / 2u) + tr * 4u + i % 4u) * BN + tn * 4u;
    acc[i] = vec4(cs[c], cs[c + 1u], cs[c + 2u], cs[c + 3u]);
  }
#endif
  if (pc.splits > 1u) {
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint pb = pc.part_off + tile * pc.splits * 32u * WG + tid;
    [[unroll]] for (uint e = 0u; e < 32u; ++e) part[pb + (z * 32u + e) * WG] = acc[e / 4u][e % 4u];
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) last_split = atomicAdd(arrived[pc.arrived_off + tile], 1u) == pc.splits - 1u;
    barrier();
    if (!last_split) return;
    memoryBarrierBuffer();
    [[unroll]] for (uint e = 0u; e < 32u; ++e) {
      float sum = 0.0;
      for (uint s = 0u; s < pc.splits; ++s) sum += s == z ? acc[e / 4u][e % 4u] : part[pb + (s * 32u + e) * WG];
      acc[e / 4u][e % 4u] = sum;
    }
    if (tid == 0u) arrived[pc.arrived_off + tile] = 0u;
  }

  [[unroll]] for (uint j = 0u; j < 4u; ++j) {
    uint n = n0 + tn * 4u + j;
    if (n >= pc.N) continue;
    if (EPI == EPI_SWIGLU) {
      [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        uint f = row_base + tr * 4u + i;
        float g = acc[i][j];
        if (f < pc.M) y[n * pc.ldy + f] = glu(g, acc[i + 4u][j], GEGLU);
      }
      continue;
    }
    uint yb = (pc.y_row0 + n) * pc.ldy;
    [[unroll]] for (uint i = 0u; i < 8u; i += 2u) {
      uint row = row_base + (i / 4u) * (BM / 2u) + tr * 4u + i % 4u;
      if (row >= pc.M) continue;
      float a = acc[i][j], b = acc[i + 1u][j];
      if (EPI == EPI_ROPE) {
        uint d = row % pc.head_dim;
        if (d < pc.rope_dim) {
          vec2 cs = rope[(pc.pos0 + n) * (pc.rope_dim / 2u) + d / 2u];
          float na = a * cs.x - b * cs.y;
          b = a * cs.y + b * cs.x;
          a = na;
        }
      }
      bool second = row + 1u < pc.M;  // RoPE rows come in pairs; other matrices may be odd
      if (EPI == EPI_ADD) {
        y[yb + row] += a;
        if (second) y[yb + row + 1u] += b;
      } else {
        y[yb + row] = a;
        if (second) y[yb + row + 1u] = b;
      }
    }
  }
}
