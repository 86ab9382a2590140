// Weight tiles of the prefill GEMM (mm.comp), one eighth of a 32-element unit at a time:
// elements kb*32 + q*8 .. +7 of a row. Split in two so that the next tile's loads are in flight
// while the current tile is multiplied: raw_load only issues word loads, raw_decode (called a
// k-step later) does all the arithmetic. A row past the matrix is all-zero words, which every
// format decodes to zeros.
// Include after weights.glsl (its locate and scale helpers).
//   RAW                                     words one eighth needs
//   void raw_load(base, nb, row, kb, q, out uint r[RAW])
//   void raw_decode(r, base, nb, row, kb, q, out vec4 lo, out vec4 hi)

// Bytes `sh` (0 or 16 bits) into a word that spans two loaded words.
uint join(uint lo, uint hi, uint sh) { return sh == 0u ? lo : (lo >> sh) | (hi << (32u - sh)); }
float half_at(uint w, uint byte_off) { return unpackHalf2x16(w >> ((byte_off & 2u) * 8u)).x; }

#if defined(DT_F32)
#define RAW 8u
void raw_load(uint base, uint nb, uint row, uint kb, uint q, out uint r[RAW]) {
  uint k = kb * 32u + q * 8u, i = (base >> 2) + row * K + k;
  [[unroll]] for (uint j = 0u; j < 8u; ++j) r[j] = k + j < K ? wq[i + j] : 0u;
}
void raw_decode(uint r[RAW], uint base, uint nb, uint row, uint kb, uint q, out vec4 lo, out vec4 hi) {
  lo = uintBitsToFloat(uvec4(r[0], r[1], r[2], r[3]));
  hi = uintBitsToFloat(uvec4(r[4], r[5], r[6], r[7]));
}
#elif defined(DT_F16) || defined(DT_BF16)
#define RAW 4u
// Rows are whole words: K is a multiple of 4 and the matrix starts 256-byte aligned.
void raw_load(uint base, uint nb, uint row, uint kb, uint q, out uint r[RAW]) {
  uint k = kb * 32u + q * 8u, i = (base + (row * K + k) * 2u) >> 2;
  [[unroll]] for (uint j = 0u; j < 4u; ++j) r[j] = k + 2u * j < K ? wq[i + j] : 0u;
}
void raw_decode(uint r[RAW], uint base, uint nb, uint row, uint kb, uint q, out vec4 lo, out vec4 hi) {
#if defined(DT_F16)
  lo = vec4(unpackHalf2x16(r[0]), unpackHalf2x16(r[1]));
  hi = vec4(unpackHalf2x16(r[2]), unpackHalf2x16(r[3]));
#else
  lo = uintBitsToFloat(uvec4(r[0] << 16, r[0] & 0xFFFF0000u, r[1] << 16, r[1] & 0xFFFF0000u));
  hi = uintBitsToFloat(uvec4(r[2] << 16, r[2] & 0xFFFF0000u, r[3] << 16, r[3] & 0xFFFF0000u));
#endif
}
#elif defined(DT_Q8_0) || defined(DT_Q8_0_SOA)
#define RAW 4u
// d's word, then the 8 quants: two words, three where the AoS block leaves them 2-byte aligned.
uint q8_d_off(uint base, uint nb, uint blk) {
#if defined(DT_Q8_0)
  return base + blk * 34u;
#else
  return base + nb * 32u + blk * 2u;
#endif
}
uint q8_qs_off(uint base, uint blk, uint q) {
#if defined(DT_Q8_0)
  return base + blk * 34u + 2u + q * 8u;
#else
  return base + blk * 32u + q * 8u;
#endif
}
void raw_load(uint base, uint nb, uint row, uint kb, uint q, out uint r[RAW]) {
  uint blk = row * (K / 32u) + kb, a = q8_qs_off(base, blk, q) >> 2;
  r[0] = wq[q8_d_off(base, nb, blk) >> 2];
  r[1] = wq[a];
  r[2] = wq[a + 1u];
#if defined(DT_Q8_0)
  r[3] = wq[a + 2u];  // inside the buffer's 16-byte tail padding at the last block
#else
  r[3] = 0u;
#endif
}
void raw_decode(uint r[RAW], uint base, uint nb, uint row, uint kb, uint q, out vec4 lo, out vec4 hi) {
  uint blk = row * (K / 32u) + kb, sh = (q8_qs_off(base, blk, q) & 2u) * 8u;
  float d = half_at(r[0], q8_d_off(base, nb, blk));
  lo = vec4(i8x4(join(r[1], r[2], sh))) * d;
  hi = vec4(i8x4(join(r[2], r[3], sh))) * d;
}
#elif defined(DT_Q5_0)
#define RAW 6u
// 22-byte block: d f16 | qh u32 | qs[16]. Element e (0..31) takes bit e of qh; e < 16 the low
// nibble of qs[e], e >= 16 the high nibble of qs[e - 16]. Eighth q: qs bytes (q % 2) * 8.. .
void raw_load(uint base, uint nb, uint row, uint kb, uint q, out uint r[RAW]) {
  uint o = base + (row * (K / 32u) + kb) * 22u;
  uint a = o >> 2, b = (o + 6u + (q % 2u) * 8u) >> 2;
  r[0] = wq[a]; r[1] = wq[a + 1u]; r[2] = wq[a + 2u];
  r[3] = wq[b]; r[4] = wq[b + 1u]; r[5] = wq[b + 2u];
}
void raw_decode(uint r[RAW], uint base, uint nb, uint row, uint kb, uint q, out vec4 lo, out vec4 hi) {
  // A block at a word boundary has qh 2 bytes into its first word and qs unaligned; one at
  // a half word has qh on the next word and qs aligned.
  uint o = base + (row * (K / 32u) + kb) * 22u, sh = (o & 2u) * 8u;
  float d = half_at(r[0], o);
  uint qh = sh == 0u ? join(r[0], r[1], 16u) : r[1];
  uint q0 = join(r[3], r[4], sh ^ 16u), q1 = join(r[4], r[5], sh ^ 16u);
  uint nsh = (q / 2u) * 4u, hb = qh >> (q * 8u);
  vec4 v0, v1;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    v0[i] = float(((q0 >> (8u * i + nsh)) & 0xFu) | (((hb >> i) & 1u) << 4));
    v1[i] = float(((q1 >> (8u * i + nsh)) & 0xFu) | (((hb >> (i + 4u)) & 1u) << 4));
  }
  lo = (v0 - 16.0) * d;
  hi = (v1 - 16.0) * d;
}
#elif defined(DT_Q4_K) || defined(DT_Q4_K_SOA)
#define RAW 7u
// Sub-block s = kb % 8 has scale and min s; its 32 quants are nibble s % 2 of qs bytes
// (s / 2) * 32.., so eighth q reads 8 of those bytes.
void raw_load(uint base, uint nb, uint row, uint kb, uint q, out uint r[RAW]) {
  uint od, om, osc, oqs;
  q4k_locate(base, nb, row * (K / 256u) + kb / 8u, od, om, osc, oqs);
  uint a = (oqs + ((kb % 8u) / 2u) * 32u + q * 8u) >> 2;
  r[0] = wq[od >> 2]; r[1] = wq[om >> 2];
  r[2] = wq[osc >> 2]; r[3] = wq[(osc >> 2) + 1u]; r[4] = wq[(osc >> 2) + 2u];
  r[5] = wq[a]; r[6] = wq[a + 1u];
}
void raw_decode(uint r[RAW], uint base, uint nb, uint row, uint kb, uint q, out vec4 lo, out vec4 hi) {
  uint od, om, osc, oqs;
  q4k_locate(base, nb, row * (K / 256u) + kb / 8u, od, om, osc, oqs);
  uint s = kb % 8u, nsh = (s % 2u) * 4u;
  vec2 sm = q4k_scale_min_w(r[2], r[3], r[4], s);
  float d = half_at(r[0], od) * sm.x, m = half_at(r[1], om) * sm.y;
  vec4 v0, v1;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    v0[i] = float((r[5] >> (8u * i + nsh)) & 0xFu);
    v1[i] = float((r[6] >> (8u * i + nsh)) & 0xFu);
  }
  lo = d * v0 - m;
  hi = d * v1 - m;
}
#elif defined(DT_Q6_K) || defined(DT_Q6_K_SOA)
#define RAW 8u
// Sub-block s32 = kb % 8: half hh, quarter qq. Its quants: nibble qq / 2 of ql bytes
// hh * 64 + (qq % 2) * 32.. and bits 2 * qq of qh bytes hh * 32..; eighth q reads 8 of each and
// uses scale hh * 8 + q / 2 + 2 * qq.
void q6k_eighth(uint base, uint nb, uint row, uint kb, uint q, out uint ql, out uint qh, out uint sc, out uint od) {
  uint oql, oqh, osc;
  q6k_locate(base, nb, row * (K / 256u) + kb / 8u, oql, oqh, osc, od);
  uint s32 = kb % 8u, hh = s32 / 4u, qq = s32 % 4u;
  ql = oql + hh * 64u + (qq % 2u) * 32u + q * 8u;
  qh = oqh + hh * 32u + q * 8u;
  sc = osc + hh * 8u + q / 2u + 2u * qq;
}
void raw_load(uint base, uint nb, uint row, uint kb, uint q, out uint r[RAW]) {
  uint ql, qh, sc, od;
  q6k_eighth(base, nb, row, kb, q, ql, qh, sc, od);
  r[0] = wq[ql >> 2]; r[1] = wq[(ql >> 2) + 1u];
  r[3] = wq[qh >> 2]; r[4] = wq[(qh >> 2) + 1u];
#if defined(DT_Q6_K)
  r[2] = wq[(ql >> 2) + 2u]; r[5] = wq[(qh >> 2) + 2u];
#else
  r[2] = 0u; r[5] = 0u;
#endif
  r[6] = wq[sc >> 2]; r[7] = wq[od >> 2];
}
void raw_decode(uint r[RAW], uint base, uint nb, uint row, uint kb, uint q, out vec4 lo, out vec4 hi) {
  uint ql, qh, sc, od;
  q6k_eighth(base, nb, row, kb, q, ql, qh, sc, od);
  uint qq = (kb % 8u) % 4u, nsh = (qq / 2u) * 4u, hsh = 2u * qq;
  uint l0 = join(r[0], r[1], (ql & 2u) * 8u), l1 = join(r[1], r[2], (ql & 2u) * 8u);
  uint h0 = join(r[3], r[4], (qh & 2u) * 8u), h1 = join(r[4], r[5], (qh & 2u) * 8u);
  float d = half_at(r[7], od) * float(bitfieldExtract(int(r[6]), int((sc & 3u) * 8u), 8));
  vec4 v0, v1;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    v0[i] = float(((l0 >> (8u * i + nsh)) & 0xFu) | (((h0 >> (8u * i + hsh)) & 3u) << 4));
    v1[i] = float(((l1 >> (8u * i + nsh)) & 0xFu) | (((h1 >> (8u * i + hsh)) & 3u) << 4));
  }
  lo = d * (v0 - 32.0);
  hi = d * (v1 - 32.0);
}
#endif
