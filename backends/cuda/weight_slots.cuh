#pragma once
// The integer GEMV paths' weight units (Dp4a<T>::Raw) staged through shared memory for the
// streaming GEMV (gemv_stream.cu): `copy` starts cp.async copies of one unit's bytes into a
// lane's slot, `read` turns a landed slot into the Raw the dot products take. A slot is kParts
// 16-byte parts; the caller places part p of lane l at slot0 + p * 512 + l * 16, so a warp's
// 16-byte shared accesses are conflict-free. Formats whose blocks are only 2-byte aligned
// (AoS Q6_K, Q8_0) have no slot: cp.async needs 4-byte aligned sources.
#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/weight_formats.cuh"

namespace p64::cuda {

constexpr int kSlotPartStride = 512;  // bytes between a slot's parts: 32 lanes x 16

// An fp16 at byte offset `off` of `base` travels inside the aligned 4-byte word holding it
// (tensors are 256-aligned and padded to 256 bytes, so the word never leaves the allocation).
__device__ __forceinline__ void copy_half_word(uint8_t* dst, const uint8_t* base, int64_t off) {
  cp_async4(dst, base + (off & ~int64_t(3)));
}
__device__ __forceinline__ uint16_t half_from_word(const uint8_t* src, int64_t off) {
  const uint32_t w = *reinterpret_cast<const uint32_t*>(src);
  return uint16_t((off & 2) ? w >> 16 : w & 0xFFFF);
}
__device__ __forceinline__ const uint8_t* part(const uint8_t* slot, int p) { return slot + p * kSlotPartStride; }
__device__ __forceinline__ uint8_t* part(uint8_t* slot, int p) { return slot + p * kSlotPartStride; }

template <uint32_t T>
struct Slot;

// AoS Q4_K: 144-byte blocks, 16-byte aligned: the 16-byte header (d, dmin, 12 scale bytes)
// and the unit's 16 qs bytes.
template <>
struct Slot<kQ4_K> {
  static constexpr int kParts = 2;
  __device__ static void copy(uint8_t* slot, const RowRef& r, int64_t u) {
    const uint8_t* b = r.w + (r.row * (r.n / 256) + (u >> 3)) * 144;
    cp_async16(part(slot, 0), b + 16 + 16 * (u & 7));
    cp_async16(part(slot, 1), b);
  }
  __device__ static void read(Dp4a<kQ4_K>::Raw& raw, const uint8_t* slot, const RowRef&, int64_t) {
    raw.q = *reinterpret_cast<const uint4*>(part(slot, 0));
    const uint4 h = *reinterpret_cast<const uint4*>(part(slot, 1));
    raw.d = uint16_t(h.x & 0xFFFF);
    raw.dm = uint16_t(h.x >> 16);
    raw.s0 = h.y;
    raw.s1 = h.z;
    raw.s2 = h.w;
  }
};

// SoA Q4_K: qs [nb][128], scales [nb][12], d [nb], dmin [nb].
template <>
struct Slot<kQ4_KS> {
  static constexpr int kParts = 3;
  __device__ static void copy(uint8_t* slot, const RowRef& r, int64_t u) {
    const int64_t gb = r.row * (r.n / 256) + (u >> 3);
    cp_async16(part(slot, 0), r.w + gb * 128 + 16 * (u & 7));
    const uint8_t* sc = r.w + r.nb * 128 + gb * 12;
    cp_async4(part(slot, 1), sc);
    cp_async4(part(slot, 1) + 4, sc + 4);
    cp_async4(part(slot, 1) + 8, sc + 8);
    copy_half_word(part(slot, 1) + 12, r.w, r.nb * 140 + gb * 2);
    copy_half_word(part(slot, 2), r.w, r.nb * 142 + gb * 2);
  }
  __device__ static void read(Dp4a<kQ4_KS>::Raw& raw, const uint8_t* slot, const RowRef& r, int64_t u) {
    const int64_t gb = r.row * (r.n / 256) + (u >> 3);
    raw.q = *reinterpret_cast<const uint4*>(part(slot, 0));
    const uint4 h = *reinterpret_cast<const uint4*>(part(slot, 1));
    raw.s0 = h.x;
    raw.s1 = h.y;
    raw.s2 = h.z;
    raw.d = half_from_word(part(slot, 1) + 12, r.nb * 140 + gb * 2);
    raw.dm = half_from_word(part(slot, 2), r.nb * 142 + gb * 2);
  }
};

// SoA Q6_K: ql [nb][128], qh [nb][64], scales [nb][16], d [nb]. The unit's two 8-byte runs of
// ql, its 8 bytes of qh, the 8 scales of its half (of which it uses 4) and d.
template <>
struct Slot<kQ6_KS> {
  static constexpr int kParts = 3;
  __device__ static void copy(uint8_t* slot, const RowRef& r, int64_t u) {
    const int64_t gb = r.row * (r.n / 256) + (u >> 3);
    const int k = int(u & 7), n = k >> 2, l0 = (k & 3) * 8;
    const uint8_t* ql = r.w + gb * 128 + 64 * n + l0;
    cp_async8(part(slot, 0), ql);
    cp_async8(part(slot, 0) + 8, ql + 32);
    cp_async8(part(slot, 1), r.w + r.nb * 128 + gb * 64 + 32 * n + l0);
    cp_async8(part(slot, 1) + 8, r.w + r.nb * 192 + gb * 16 + 8 * n);
    copy_half_word(part(slot, 2), r.w, r.nb * 208 + gb * 2);
  }
  __device__ static void read(Dp4a<kQ6_KS>::Raw& raw, const uint8_t* slot, const RowRef& r, int64_t u) {
    const int64_t gb = r.row * (r.n / 256) + (u >> 3);
    const uint4 l = *reinterpret_cast<const uint4*>(part(slot, 0));
    const uint4 h = *reinterpret_cast<const uint4*>(part(slot, 1));
    raw.la = make_uint2(l.x, l.y);
    raw.lb = make_uint2(l.z, l.w);
    raw.h = make_uint2(h.x, h.y);
    // scales 8n + l0/16 + {0, 2, 4, 6} of the block: bytes {0,2,4,6} or {1,3,5,7} of these 8
    raw.sc = __byte_perm(h.z, h.w, (u & 2) ? 0x7531 : 0x6420);
    raw.d = half_from_word(part(slot, 2), r.nb * 208 + gb * 2);
  }
};

// SoA Q8_0: qs [nb][32], d [nb]: the unit's 16 qs bytes and d.
template <>
struct Slot<kQ8_0S> {
  static constexpr int kParts = 2;
  __device__ static void copy(uint8_t* slot, const RowRef& r, int64_t u) {
    const int64_t gb = r.row * (r.n / 32) + (u >> 1);
    cp_async16(part(slot, 0), r.w + gb * 32 + 16 * (u & 1));
    copy_half_word(part(slot, 1), r.w, r.nb * 32 + gb * 2);
  }
  __device__ static void read(Dp4a<kQ8_0S>::Raw& raw, const uint8_t* slot, const RowRef& r, int64_t u) {
    const int64_t gb = r.row * (r.n / 32) + (u >> 1);
    raw.q = *reinterpret_cast<const uint4*>(part(slot, 0));
    raw.d = half_from_word(part(slot, 1), r.nb * 32 + gb * 2);
  }
};

}  // namespace p64::cuda
