// Reading one weight dtype. Before including, define DT_<NAME> and a weight array `wq` (uint[]).
// Every dtype offers:
//   UNIT                   elements per unit (the GEMV's work item)
//   float dot_unit(base, nb, row, u)  dot of unit u of `row` with xget(k), before any scale
//   DQ32 types: void dq32(base, nb, row, kb, out float v[32]) contiguous elements kb*32..+31
//   float types: float w_at(base, row, k)
// `base` is the tensor's byte offset in the buffer, `nb` the tensor's total block count (SoA
// arrays are laid out back to back, engine/quant/quant.h), K the row length (a specialization
// constant, or a push constant in mm.comp).
// Unaligned 32-bit read (offset even), used by the 2-byte-aligned AoS blocks.
uint rd_u32u(uint off) {
  uint a = off >> 2;
  uint s = (off & 3u) * 8u;
  if (s == 0u) return wq[a];
  return (wq[a] >> s) | (wq[a + 1u] << (32u - s));
}

#if defined(DT_F32)
#define UNIT 4u
#define DT_FLOAT 1
float w_at(uint base, uint row, uint k) { return uintBitsToFloat(wq[(base >> 2) + row * K + k]); }
float dot_unit(uint base, uint nb, uint row, uint u) {
  uint i = (base >> 2) + row * K + u * 4u;
  vec4 w = uintBitsToFloat(uvec4(wq[i], wq[i + 1u], wq[i + 2u], wq[i + 3u]));
  uint k = u * 4u;
  return dot(w, vec4(xget(k), xget(k + 1u), xget(k + 2u), xget(k + 3u)));
}
#elif defined(DT_F16)
#define UNIT 4u
#define DT_FLOAT 1
float w_at(uint base, uint row, uint k) { return RD_F16(wq, base + (row * K + k) * 2u); }
float dot_unit(uint base, uint nb, uint row, uint u) {
  uint i = (base + (row * K + u * 4u) * 2u) >> 2;
  vec2 a = unpackHalf2x16(wq[i]), b = unpackHalf2x16(wq[i + 1u]);
  uint k = u * 4u;
  return dot(vec4(a, b), vec4(xget(k), xget(k + 1u), xget(k + 2u), xget(k + 3u)));
}
#elif defined(DT_BF16)
#define UNIT 4u
#define DT_FLOAT 1
float bf16(uint bits) { return uintBitsToFloat(bits << 16); }
float w_at(uint base, uint row, uint k) { return bf16(RD_U16(wq, base + (row * K + k) * 2u)); }
float dot_unit(uint base, uint nb, uint row, uint u) {
  uint i = (base + (row * K + u * 4u) * 2u) >> 2;
  vec4 w = vec4(bf16(wq[i] & 0xFFFFu), bf16(wq[i] >> 16), bf16(wq[i + 1u] & 0xFFFFu), bf16(wq[i + 1u] >> 16));
  uint k = u * 4u;
  return dot(w, vec4(xget(k), xget(k + 1u), xget(k + 2u), xget(k + 3u)));
}
#elif defined(DT_Q8_0) || defined(DT_Q8_0_SOA)
#define UNIT 32u
#define DT_DQ32 1
// Block `blk` (row-major block index over the tensor): scale and byte offset of its 32 qs.
void q8_locate(uint base, uint nb, uint blk, out float d, out uint qs) {
#if defined(DT_Q8_0)
  uint o = base + blk * 34u;
  d = RD_F16(wq, o);
  qs = o + 2u;
#else
  d = RD_F16(wq, base + nb * 32u + blk * 2u);
  qs = base + blk * 32u;
#endif
}
uint q8_word(uint qs, uint i) {
#if defined(DT_Q8_0)
  return rd_u32u(qs + i * 4u);
#else
  return wq[(qs >> 2) + i];
#endif
}
float dot_unit(uint base, uint nb, uint row, uint u) {
  float d; uint qs;
  q8_locate(base, nb, row * (K / 32u) + u, d, qs);
  uint k = u * 32u;
  float s = 0.0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    vec4 q = vec4(i8x4(q8_word(qs, i)));
    uint e = k + i * 4u;
    s += dot(q, vec4(xget(e), xget(e + 1u), xget(e + 2u), xget(e + 3u)));
  }
  return d * s;
}
void dq32(uint base, uint nb, uint row, uint kb, out float v[32]) {
  float d; uint qs;
  q8_locate(base, nb, row * (K / 32u) + kb, d, qs);
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    vec4 q = vec4(i8x4(q8_word(qs, i))) * d;
    v[i * 4u] = q.x; v[i * 4u + 1u] = q.y; v[i * 4u + 2u] = q.z; v[i * 4u + 3u] = q.w;
  }
}
#elif defined(DT_Q5_0)
#define UNIT 32u
#define DT_DQ32 1
// 22-byte block: d f16 | qh u32 (bit j = 5th bit of element j) | qs[16] (elements j, j+16).
float dot_unit(uint base, uint nb, uint row, uint u) {
  uint o = base + (row * (K / 32u) + u) * 22u;
  float d = RD_F16(wq, o);
  uint qh = rd_u32u(o + 2u);
  uint k = u * 32u;
  float s = 0.0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    uint q = rd_u32u(o + 6u + i * 4u);
    [[unroll]] for (uint b = 0u; b < 4u; ++b) {
      uint j = i * 4u + b;
      uint qb = (q >> (b * 8u)) & 0xFFu;
      float lo = float((qb & 0xFu) | (((qh >> j) & 1u) << 4)) - 16.0;
      float hi = float((qb >> 4) | (((qh >> (j + 16u)) & 1u) << 4)) - 16.0;
      s += lo * xget(k + j) + hi * xget(k + j + 16u);
    }
  }
  return d * s;
}
void dq32(uint base, uint nb, uint row, uint kb, out float v[32]) {
  uint o = base + (row * (K / 32u) + kb) * 22u;
  float d = RD_F16(wq, o);
  uint qh = rd_u32u(o + 2u);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    uint q = rd_u32u(o + 6u + i * 4u);
    [[unroll]] for (uint b = 0u; b < 4u; ++b) {
      uint j = i * 4u + b;
      uint qb = (q >> (b * 8u)) & 0xFFu;
      v[j] = d * (float((qb & 0xFu) | (((qh >> j) & 1u) << 4)) - 16.0);
      v[j + 16u] = d * (float((qb >> 4) | (((qh >> (j + 16u)) & 1u) << 4)) - 16.0);
    }
  }
}
#elif defined(DT_Q4_K) || defined(DT_Q4_K_SOA)
#define UNIT 32u
#define DT_DQ32 1
// Offsets of block `blk`'s fields: d, dmin (f16), scales[12], qs[128].
void q4k_locate(uint base, uint nb, uint blk, out uint od, out uint om, out uint osc, out uint oqs) {
#if defined(DT_Q4_K)
  uint o = base + blk * 144u;
  od = o; om = o + 2u; osc = o + 4u; oqs = o + 16u;
#else
  oqs = base + blk * 128u; osc = base + nb * 128u + blk * 12u;
  od = base + nb * 140u + blk * 2u; om = base + nb * 142u + blk * 2u;
#endif
}
// 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes as three words.
vec2 q4k_scale_min_w(uint s0, uint s1, uint s2, uint j) {
  uint sc, mn;
  if (j < 4u) {
    sc = (s0 >> (8u * j)) & 63u;
    mn = (s1 >> (8u * j)) & 63u;
  } else {
    uint jj = j - 4u;
    uint b8 = (s2 >> (8u * jj)) & 0xFFu;
    sc = (b8 & 0xFu) | (((s0 >> (8u * jj)) >> 6 & 3u) << 4);
    mn = (b8 >> 4) | (((s1 >> (8u * jj)) >> 6 & 3u) << 4);
  }
  return vec2(float(sc), float(mn));
}
// The same from the 12 bytes at osc (word aligned).
vec2 q4k_scale_min(uint osc, uint j) {
  return q4k_scale_min_w(wq[osc >> 2], wq[(osc >> 2) + 1u], wq[(osc >> 2) + 2u], j);
}
// Unit u: 16 bytes of qs (chunk j = c/2, half h = c%2) = 16 elements of sub-block 2j (low
// nibbles) and 16 of sub-block 2j+1 (high nibbles), so one read feeds two sub-blocks.
float dot_unit(uint base, uint nb, uint row, uint u) {
  uint od, om, osc, oqs;
  q4k_locate(base, nb, row * (K / 256u) + u / 8u, od, om, osc, oqs);
  uint c = u % 8u, j = c / 2u, h = c % 2u;
  vec2 dm = vec2(RD_F16(wq, od), RD_F16(wq, om));
  vec2 a = q4k_scale_min(osc, 2u * j), b = q4k_scale_min(osc, 2u * j + 1u);
  uint qi = (oqs + j * 32u + h * 16u) >> 2;
  uint k0 = (u / 8u) * 256u + j * 64u + h * 16u;
  float slo = 0.0, shi = 0.0, xlo = 0.0, xhi = 0.0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    uint q = wq[qi + i];
    uint e = k0 + i * 4u;
    vec4 xl = vec4(xget(e), xget(e + 1u), xget(e + 2u), xget(e + 3u));
    vec4 xh = vec4(xget(e + 32u), xget(e + 33u), xget(e + 34u), xget(e + 35u));
    slo += dot(u4lo(q), xl); shi += dot(u4hi(q), xh);
    xlo += xl.x + xl.y + xl.z + xl.w; xhi += xh.x + xh.y + xh.z + xh.w;
  }
  return dm.x * (a.x * slo + b.x * shi) - dm.y * (a.y * xlo + b.y * xhi);
}
void dq32(uint base, uint nb, uint row, uint kb, out float v[32]) {
  uint od, om, osc, oqs;
  q4k_locate(base, nb, row * (K / 256u) + kb / 8u, od, om, osc, oqs);
  uint s = kb % 8u;
  vec2 sm = q4k_scale_min(osc, s);
  float d = RD_F16(wq, od) * sm.x, m = RD_F16(wq, om) * sm.y;
  uint qi = (oqs + (s / 2u) * 32u) >> 2;
  uint sh = (s % 2u) * 4u;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    uint q = wq[qi + i];
    [[unroll]] for (uint b = 0u; b < 4u; ++b) v[i * 4u + b] = d * float((q >> (b * 8u + sh)) & 0xFu) - m;
  }
}
#elif defined(DT_Q6_K) || defined(DT_Q6_K_SOA)
#define UNIT 32u
#define DT_DQ32 1
// Offsets of block `blk`'s fields: ql[128], qh[64], scales[16] (int8), d (f16).
void q6k_locate(uint base, uint nb, uint blk, out uint oql, out uint oqh, out uint osc, out uint od) {
#if defined(DT_Q6_K)
  uint o = base + blk * 210u;
  oql = o; oqh = o + 128u; osc = o + 192u; od = o + 208u;
#else
  oql = base + blk * 128u; oqh = base + nb * 128u + blk * 64u;
  osc = base + nb * 192u + blk * 16u; od = base + nb * 208u + blk * 2u;
#endif
}
#if defined(DT_Q6_K)
#define Q6W(off) rd_u32u(off)
#else
#define Q6W(off) wq[(off) >> 2]
#endif
float q6k_scale(uint osc, uint i) { return float(bitfieldExtract(int(RD_U8(wq, osc + i)), 0, 8)); }
// Unit u (8 per block): half hh, 16 positions l0.., ql set s: the low nibbles are quarter s,
// the high nibbles quarter s+2 of the half (ggml's q1..q4), all from one 16-byte read.
float dot_unit(uint base, uint nb, uint row, uint u) {
  uint oql, oqh, osc, od;
  q6k_locate(base, nb, row * (K / 256u) + u / 8u, oql, oqh, osc, od);
  uint c = u % 8u, hh = c / 4u, l0 = ((c / 2u) % 2u) * 16u, s = c % 2u;
  float d = RD_F16(wq, od);
  float sa = q6k_scale(osc, hh * 8u + l0 / 16u + 2u * s);
  float sb = q6k_scale(osc, hh * 8u + l0 / 16u + 2u * (s + 2u));
  uint ql = oql + hh * 64u + s * 32u + l0, qh = oqh + hh * 32u + l0;
  uint k0 = (u / 8u) * 256u + hh * 128u + l0;
  uint ea = k0 + s * 32u, eb = k0 + (s + 2u) * 32u;
  float sum_a = 0.0, sum_b = 0.0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    uint q = Q6W(ql + i * 4u), h = Q6W(qh + i * 4u);
    uint ha = h >> (2u * s), hb = h >> (2u * (s + 2u));
    vec4 qa = u4lo(q) + 16.0 * vec4(ha & 3u, (ha >> 8) & 3u, (ha >> 16) & 3u, (ha >> 24) & 3u) - 32.0;
    vec4 qb = u4hi(q) + 16.0 * vec4(hb & 3u, (hb >> 8) & 3u, (hb >> 16) & 3u, (hb >> 24) & 3u) - 32.0;
    uint e = i * 4u;
    sum_a += dot(qa, vec4(xget(ea + e), xget(ea + e + 1u), xget(ea + e + 2u), xget(ea + e + 3u)));
    sum_b += dot(qb, vec4(xget(eb + e), xget(eb + e + 1u), xget(eb + e + 2u), xget(eb + e + 3u)));
  }
  return d * (sa * sum_a + sb * sum_b);
}
void dq32(uint base, uint nb, uint row, uint kb, out float v[32]) {
  uint oql, oqh, osc, od;
  q6k_locate(base, nb, row * (K / 256u) + kb / 8u, oql, oqh, osc, od);
  uint s32 = kb % 8u, hh = s32 / 4u, qq = s32 % 4u;
  float d = RD_F16(wq, od);
  uint ql = oql + hh * 64u + (qq % 2u) * 32u, qh = oqh + hh * 32u;
  uint nsh = (qq / 2u) * 4u, hsh = 2u * qq;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    uint q = Q6W(ql + i * 4u), h = Q6W(qh + i * 4u);
    float sc = d * q6k_scale(osc, hh * 8u + (i / 4u) + 2u * qq);
    [[unroll]] for (uint b = 0u; b < 4u; ++b) {
      uint qv = ((q >> (b * 8u + nsh)) & 0xFu) | (((h >> (b * 8u + hsh)) & 3u) << 4);
      v[i * 4u + b] = sc * (float(qv) - 32.0);
    }
  }
}
#else
#error "define one DT_<dtype>"
#endif
