#include "backends/cuda/stream_layout.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/common/error.h"

namespace p64::cuda {

int64_t StreamPlan::slot_rounds(size_t m, int64_t slot) const {
  return stream_slot_rounds(shapes[m].rows, shapes[m].n, slot, slots(), balanced);
}

uint64_t StreamPlan::round_offset(size_t m, int64_t slot, int64_t t) const {
  if (interleaved) return uint64_t((round_base[m] + t) * slots() + slot) * kStreamRoundBytes;
  uint64_t at = warp_begin[size_t(slot)];
  for (size_t k = 0; k < m; ++k) at += uint64_t(slot_rounds(k, slot)) * kStreamRoundBytes;
  return at + uint64_t(t) * kStreamRoundBytes;
}

StreamPlan plan_stream(const std::vector<StreamMatrixShape>& shapes, int blocks, int warps, bool interleaved,
                       bool balanced) {
  if (blocks < 1 || warps < 1) throw Error("stream layout: blocks and warps must be at least 1");
  if (interleaved && balanced) throw Error("stream layout: the balanced share has no interleaved order");
  for (const StreamMatrixShape& s : shapes)
    if (s.rows < kStreamRows || s.rows % kStreamRows != 0 || s.n < 1024 || s.n % 1024 != 0)
      throw Error("stream layout: a " + std::to_string(s.rows) + " x " + std::to_string(s.n) +
                  " matrix has no streamed form (rows a multiple of " + std::to_string(kStreamRows) +
                  ", width a multiple of 1024)");
  StreamPlan p;
  p.blocks = blocks;
  p.warps = warps;
  p.interleaved = interleaved;
  p.balanced = balanced;
  p.shapes = shapes;
  const int64_t slots = p.slots();
  p.warp_begin.assign(size_t(slots) + 1, 0);
  for (int64_t s = 0; s < slots; ++s) {
    uint64_t rounds = 0;
    for (size_t m = 0; m < shapes.size(); ++m) rounds += uint64_t(p.slot_rounds(m, s));
    p.warp_begin[size_t(s) + 1] = p.warp_begin[size_t(s)] + rounds * kStreamRoundBytes;
  }
  int64_t base = 0;
  for (size_t m = 0; m < shapes.size(); ++m) {
    p.round_base.push_back(base);
    base += p.slot_rounds(m, 0);  // slot 0 has the most groups of every matrix
  }
  p.interleaved_bytes = uint64_t(base * slots) * kStreamRoundBytes;
  return p;
}

void pack_stream(const StreamPlan& plan, const std::vector<const uint8_t*>& tiled, uint8_t* dst) {
  if (tiled.size() != plan.shapes.size()) throw Error("stream layout: one tiled matrix per planned shape");
  const int64_t slots = plan.slots();
  for (int64_t s = 0; s < slots; ++s) {
    uint64_t at = plan.warp_begin[size_t(s)];  // per warp: the slot's rounds one after another
    for (size_t m = 0; m < plan.shapes.size(); ++m) {
      const StreamMatrixShape& sh = plan.shapes[m];
      const int64_t subs = sh.n / 32, supers = sh.n / 256, nb = sh.rows * supers;
      const uint8_t* qs = tiled[m];
      const uint8_t* hdr = tiled[m] + 128 * nb;
      StreamRound r = stream_first_round(sh.rows, sh.n, s, slots, plan.balanced);
      for (int64_t t = 0; t < plan.slot_rounds(m, s); ++t, stream_next_round(r, sh.n, slots, plan.balanced)) {
        uint8_t* out = dst + (plan.interleaved ? plan.round_offset(m, s, t) : at);
        at += kStreamRoundBytes;
        for (int i = 0; i < kStreamRows; ++i) {
          const int64_t row = r.group * kStreamRows + i;
          std::memcpy(out + 512 * i, qs + (row * subs + 32 * r.j) * 16, 512);
          std::memcpy(out + 512 * kStreamRows + 64 * i, hdr + (row * supers + 4 * r.j) * 16, 64);
        }
      }
    }
  }
}

}  // namespace p64::cuda
