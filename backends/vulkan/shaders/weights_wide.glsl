// Weight units of the wide decode GEMV (mv_wide.comp), one dtype per build like weights.glsl
// (included after it, to reuse its block layouts). A unit is split in two so that a thread can
// put several units' loads in flight before it does arithmetic on any of them:
//   WUNIT                                   elements per unit
//   Raw raw_load(base, nb, row, u)          issues the loads only: no arithmetic on their results
//   float raw_dot(Raw w, base, nb, row, u)  the unit's dot with the staged input, before any scale
// Needs wq (uint[]) and wq4 (uvec4[]) over the weights, the staged input (vec4 i of it at
// xs4[xp(i)]) and xsum (float[K/16], sums of 16 consecutive inputs: the offset and min terms
// of the block formats become one multiply per 16 elements instead of one add per element).

// Exact float of each lane (values < 2^23): the 2^23 exponent or'ed over the integer, then
// one subtraction, instead of an int-to-float conversion (quarter rate on NVIDIA GPUs).
vec4 u4f(uvec4 v) { return uintBitsToFloat(v | 0x4B000000u) - 8388608.0; }
// Byte i of w in the low bits of lane i (higher bytes are left above it).
uvec4 bytes4(uint w) { return uvec4(w) >> uvec4(0u, 8u, 16u, 24u); }
// The four signed bytes of w, biased by 128 so that the same exponent trick applies.
vec4 s8f(uint w) { return uintBitsToFloat(((bytes4(w) & 0xFFu) ^ 0x80u) | 0x4B000000u) - 8388736.0; }
// Mantissa placement (spec constant MANTISSA): a field v or'ed into the mantissa of 1.0 at bit
// p reads exactly as f = 1 + v 2^(p-23), and f - 1 is exact: two ops per element instead of
// shift, mask, or and subtract. The word is shifted only twice (<< 11, >> 9) so that every
// byte's low and high field lands at some p in 11..19; p, and so the scale 2^(23-p), differs
// per byte lane, which is why lanes stay separate vec4 components until the end. (Removing the
// 1 once per lane as sum(x f) - sum(x) saves an add per element but is exact only to 2^-12 of
// the sum, and measured slower on the H200: 339.2 vs 350.9 tok/s, 3B Q4_K_M, 2026-12-04.)
vec4 mant(uvec4 v) { return uintBitsToFloat(v | 0x3F800000u); }
// The low field (mask m at bit 0 of each byte) and the high field (at bit 4) of each byte of w.
vec4 mant_lo(uint w, uint m) { return mant(uvec4((w << 11) & (m << 11), (w << 11) & (m << 19), w & (m << 16), (w >> 9) & (m << 15))); }
vec4 mant_hi(uint w, uint m) { return mant(uvec4((w << 11) & (m << 15), w & (m << 12), (w >> 9) & (m << 11), (w >> 9) & (m << 19))); }
const vec4 MANT_LO = vec4(4096.0, 16.0, 128.0, 256.0);  // 2^(23-p) for the lanes of mant_lo
const vec4 MANT_HI = vec4(256.0, 2048.0, 4096.0, 16.0);  // and of mant_hi
// The half of a word that holds the f16 at byte offset off.
float f16_at(uint word, uint off) { return unpackHalf2x16(word >> ((off & 2u) * 8u)).x; }

// 16 bytes at a 2-byte-aligned offset (AoS blocks of 34, 22, 210 bytes): five word loads,
// joined at use. Upload pads every weight buffer to 16 bytes, so the fifth word is in bounds.
struct Span16 {
  uvec4 a;
  uint e;
};
Span16 ld16u(uint off) {
  uint i = off >> 2;
  return Span16(uvec4(wq[i], wq[i + 1u], wq[i + 2u], wq[i + 3u]), (off & 2u) != 0u ? wq[i + 4u] : 0u);
}
uvec4 words16(Span16 s, uint off) {
  if ((off & 2u) == 0u) return s.a;
  return uvec4((s.a.x >> 16) | (s.a.y << 16), (s.a.y >> 16) | (s.a.z << 16), (s.a.z >> 16) | (s.a.w << 16),
               (s.a.w >> 16) | (s.e << 16));
}
// 16 bytes at a 16-byte-aligned offset: one load.
Span16 ld16a(uint off) { return Span16(wq4[off >> 4], 0u); }

#if defined(DT_F32)
#define WUNIT 4u
struct Raw {
  uvec4 w;
};
Raw raw_load(uint base, uint nb, uint row, uint u) { return Raw(wq4[(base >> 4) + row * (K / 4u) + u]); }
float raw_dot(Raw r, uint base, uint nb, uint row, uint u) { return dot(uintBitsToFloat(r.w), xs4[xp(u)]); }

#elif defined(DT_F16) || defined(DT_BF16)
#define WUNIT 8u
struct Raw {
  uvec4 w;
};
Raw raw_load(uint base, uint nb, uint row, uint u) { return Raw(wq4[(base >> 4) + row * (K / 8u) + u]); }
vec4 two_words(uint a, uint b) {
#if defined(DT_F16)
  return vec4(unpackHalf2x16(a), unpackHalf2x16(b));
#else
  return uintBitsToFloat(uvec4(a << 16, a & 0xFFFF0000u, b << 16, b & 0xFFFF0000u));
#endif
}
float raw_dot(Raw r, uint base, uint nb, uint row, uint u) {
  return dot(two_words(r.w.x, r.w.y), xs4[xp(2u * u)]) + dot(two_words(r.w.z, r.w.w), xs4[xp(2u * u + 1u)]);
}

#elif defined(DT_Q8_0) || defined(DT_Q8_0_SOA)
#define WUNIT 32u
struct Raw {
  Span16 lo, hi;
  uint d;
};
// Byte offsets of block blk's scale and qs.
void q8_offsets(uint base, uint nb, uint blk, out uint od, out uint oq) {
#if defined(DT_Q8_0)
  od = base + blk * 34u;
  oq = od + 2u;
#else
  od = base + nb * 32u + blk * 2u;
  oq = base + blk * 32u;
#endif
}
Raw raw_load(uint base, uint nb, uint row, uint u) {
  uint od, oq;
  q8_offsets(base, nb, row * (K / 32u) + u, od, oq);
#if defined(DT_Q8_0)
  return Raw(ld16u(oq), ld16u(oq + 16u), wq[od >> 2]);
#else
  return Raw(ld16a(oq), ld16a(oq + 16u), wq[od >> 2]);
#endif
}
float raw_dot(Raw r, uint base, uint nb, uint row, uint u) {
  uint od, oq;
  q8_offsets(base, nb, row * (K / 32u) + u, od, oq);
  uvec4 lo = words16(r.lo, oq), hi = words16(r.hi, oq + 16u);
  uint xb = u * 8u;
  float s = 0.0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i)
    s += dot(s8f(lo[i]), xs4[xp(xb + i)]) + dot(s8f(hi[i]), xs4[xp(xb + 4u + i)]);
  return f16_at(r.d, od) * s;
}

#elif defined(DT_Q5_0)
#define WUNIT 32u
// 22-byte block: d f16 | qh u32 (bit j = 5th bit of element j) | qs[16] (elements j, j+16).
struct Raw {
  uint h0, h1;  // the words holding d and qh
  Span16 qs;
};
Raw raw_load(uint base, uint nb, uint row, uint u) {
  uint o = base + (row * (K / 32u) + u) * 22u;
  return Raw(wq[o >> 2], wq[(o >> 2) + 1u], ld16u(o + 6u));
}
float raw_dot(Raw r, uint base, uint nb, uint row, uint u) {
  uint o = base + (row * (K / 32u) + u) * 22u;
  bool odd = (o & 2u) != 0u;
  float d = f16_at(r.h0, o);
  uint qh = odd ? r.h1 : (r.h0 >> 16) | (r.h1 << 16);
  uvec4 q = words16(r.qs, o + 6u);
  uint xb = u * 8u;
  float s = 0.0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    uvec4 qv = bytes4(q[i]);
    uvec4 lo = (qv & 0xFu) | (((uvec4(qh) >> (uvec4(0u, 1u, 2u, 3u) + 4u * i)) & 1u) << 4);
    uvec4 hi = ((qv >> 4) & 0xFu) | (((uvec4(qh) >> (uvec4(16u, 17u, 18u, 19u) + 4u * i)) & 1u) << 4);
    s += dot(u4f(lo), xs4[xp(xb + i)]) + dot(u4f(hi), xs4[xp(xb + 4u + i)]);
  }
  return d * (s - 16.0 * (xsum[2u * u] + xsum[2u * u + 1u]));
}

#elif defined(DT_Q4_K) || defined(DT_Q4_K_SOA)
#define WUNIT 32u
// Unit u as in weights.glsl: 16 bytes of qs = 16 elements of sub-block 2j (low nibbles) and
// 16 of sub-block 2j+1 (high nibbles).
struct Raw {
  uvec4 qs;
  uvec4 hdr;  // AoS: the block's first 16 bytes (d, dmin, scales); SoA: the word of d, scales
  uint dmin;  // SoA: the word holding dmin
};
Raw raw_load(uint base, uint nb, uint row, uint u) {
  uint od, om, osc, oqs;
  q4k_locate(base, nb, row * (K / 256u) + u / 8u, od, om, osc, oqs);
  uint c = u % 8u;
  uvec4 qs = wq4[(oqs + (c / 2u) * 32u + (c % 2u) * 16u) >> 4];
#if defined(DT_Q4_K)
  return Raw(qs, wq4[od >> 4], 0u);
#else
  uint s = osc >> 2;
  return Raw(qs, uvec4(wq[od >> 2], wq[s], wq[s + 1u], wq[s + 2u]), wq[om >> 2]);
#endif
}
float raw_dot(Raw r, uint base, uint nb, uint row, uint u) {
  uint od, om, osc, oqs;
  q4k_locate(base, nb, row * (K / 256u) + u / 8u, od, om, osc, oqs);
  uint c = u % 8u, j = c / 2u;
#if defined(DT_Q4_K)
  vec2 dm = unpackHalf2x16(r.hdr.x);
#else
  vec2 dm = vec2(f16_at(r.hdr.x, od), f16_at(r.dmin, om));
#endif
  vec2 a = q4k_scale_min_w(r.hdr.y, r.hdr.z, r.hdr.w, 2u * j);
  vec2 b = q4k_scale_min_w(r.hdr.y, r.hdr.z, r.hdr.w, 2u * j + 1u);
  uint k0 = (u / 8u) * 256u + j * 64u + (c % 2u) * 16u;
  uint xb = k0 / 4u;
  float slo = 0.0, shi = 0.0;
  if (MANTISSA) {
    vec4 alo = vec4(0.0), ahi = vec4(0.0);
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      alo += (mant_lo(r.qs[i], 0xFu) - 1.0) * xs4[xp(xb + i)];
      ahi += (mant_hi(r.qs[i], 0xFu) - 1.0) * xs4[xp(xb + 8u + i)];
    }
    slo = dot(alo, MANT_LO);
    shi = dot(ahi, MANT_HI);
  } else {
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      uvec4 qv = bytes4(r.qs[i]);
      slo += dot(u4f(qv & 0xFu), xs4[xp(xb + i)]);
      shi += dot(u4f((qv >> 4) & 0xFu), xs4[xp(xb + 8u + i)]);
    }
  }
  return dm.x * (a.x * slo + b.x * shi) - dm.y * (a.y * xsum[k0 / 16u] + b.y * xsum[k0 / 16u + 2u]);
}

#elif defined(DT_Q6_K) || defined(DT_Q6_K_SOA)
#define WUNIT 32u
// Unit u as in weights.glsl: half hh, 16 positions l0.., ql set s; the low nibbles are
// quarter s, the high nibbles quarter s+2 of the half.
struct Raw {
  Span16 ql, qh, sc;
  uint d;
};
void q6k_unit(uint base, uint nb, uint row, uint u, out uint oql, out uint oqh, out uint osc, out uint od) {
  q6k_locate(base, nb, row * (K / 256u) + u / 8u, oql, oqh, osc, od);
  uint c = u % 8u, hh = c / 4u, l0 = ((c / 2u) % 2u) * 16u;
  oql += hh * 64u + (c % 2u) * 32u + l0;
  oqh += hh * 32u + l0;
}
Raw raw_load(uint base, uint nb, uint row, uint u) {
  uint oql, oqh, osc, od;
  q6k_unit(base, nb, row, u, oql, oqh, osc, od);
#if defined(DT_Q6_K)
  return Raw(ld16u(oql), ld16u(oqh), ld16u(osc), wq[od >> 2]);
#else
  return Raw(ld16a(oql), ld16a(oqh), ld16a(osc), wq[od >> 2]);
#endif
}
float raw_dot(Raw r, uint base, uint nb, uint row, uint u) {
  uint oql, oqh, osc, od;
  q6k_unit(base, nb, row, u, oql, oqh, osc, od);
  uvec4 ql = words16(r.ql, oql), qh = words16(r.qh, oqh), sc = words16(r.sc, osc);
  uint c = u % 8u, hh = c / 4u, l0 = ((c / 2u) % 2u) * 16u, s = c % 2u;
  uint ia = hh * 8u + l0 / 16u + 2u * s;  // scale of quarter s; quarter s+2's is 4 bytes on
  int sh = int((ia & 3u) * 8u);
  float sa = float(bitfieldExtract(int(sc[ia >> 2]), sh, 8));
  float sb = float(bitfieldExtract(int(sc[(ia >> 2) + 1u]), sh, 8));
  uint ea = (u / 8u) * 256u + hh * 128u + l0 + s * 32u, eb = ea + 64u;
  float suma = 0.0, sumb = 0.0;
  if (MANTISSA) {
    // (fl - 17) + 16 fh = (ql + 16 qh) 2^(p-23), exact: every term is a multiple of 2^-12 below 32.
    vec4 la = vec4(0.0), lb = vec4(0.0);
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      uint h = qh[i] >> (2u * s);
      la += ((mant_lo(ql[i], 0xFu) - 17.0) + 16.0 * mant_lo(h, 3u)) * xs4[xp(ea / 4u + i)];
      lb += ((mant_hi(ql[i], 0xFu) - 17.0) + 16.0 * mant_hi(h, 3u)) * xs4[xp(eb / 4u + i)];
    }
    suma = dot(la, MANT_LO);
    sumb = dot(lb, MANT_HI);
  } else {
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      uvec4 qv = bytes4(ql[i]), hv = bytes4(qh[i]) >> (2u * s);
      suma += dot(u4f((qv & 0xFu) | ((hv & 3u) << 4)), xs4[xp(ea / 4u + i)]);
      sumb += dot(u4f(((qv >> 4) & 0xFu) | (((hv >> 4) & 3u) << 4)), xs4[xp(eb / 4u + i)]);
    }
  }
  return f16_at(r.d, od) * (sa * (suma - 32.0 * xsum[ea / 16u]) + sb * (sumb - 32.0 * xsum[eb / 16u]));
}

#else
#error "define one DT_<dtype>"
#endif
