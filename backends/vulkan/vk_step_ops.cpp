#include "backends/vulkan/vk_step_ops.h"

#include "backends/vulkan/vk_common.h"
#include "backends/vulkan/vk_push_constants.h"

namespace p64::vulkan {

void StepOps::mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, uint32_t epi, bool fuse_norm, VkBuffer x,
                 uint32_t x_off, VkBuffer g, VkBuffer y, uint32_t pos_stride) {
  const uint32_t groups = div_up(m.M, k_.mv_rows(m, epi));
  MvPC pc{m.M, m.base, m.base2, m.nb, x_off, 0, pos_stride, hp_.head_dim, hp_.rope_dim, hp_.rms_eps, 0, ch.take(groups)};
  r.dispatch(k_.mv_pipe(m, epi, fuse_norm, x_off, ch.on),
             {{0, m.buf->buf}, {1, x}, {2, g}, {3, y}, {4, ws_.step.buf}, {5, model_.rope.buf}, {6, ws_.part.buf},
              {7, ws_.flags.buf}},
             pc, groups);
}

void StepOps::embed(vk::Recorder& r, uint32_t tok_off, uint32_t n) {
  const DeviceMatrix& e = model_.embd;
  EmbedPC pc{e.base, e.nb, tok_off, hp_.n_vocab, model_.embd_scale};
  const uint32_t units = is_float(e.dtype) ? e.K : e.K / 32;
  r.dispatch(k_.embed_pipe(), {{0, e.buf->buf}, {3, ws_.x.buf}, {4, ws_.step.buf}}, pc, div_up(units, 64), n);
}

void StepOps::rmsnorm(vk::Recorder& r, VkBuffer x, VkBuffer w, VkBuffer y, uint32_t n) {
  RmsPC pc{hp_.n_embd, hp_.rms_eps};
  r.dispatch(k_.simple_pipe("rmsnorm"), {{1, x}, {2, w}, {3, y}}, pc, n);
}

void StepOps::logits(vk::Recorder& r, StageChain& ch, VkBuffer x, uint32_t x_off, bool fuse_norm) {
  VkBuffer xin = x;
  if (!fuse_norm) {
    rmsnorm(r, x, model_.out_norm.buf, ws_.xn.buf, 1);
    ch.next(r);
    xin = ws_.xn.buf;
    x_off = 0;
  }
  mv(r, ch, model_.output, EPI_ARGMAX, fuse_norm, xin, x_off, model_.out_norm.buf, ws_.logits.buf, 0);
  ch.next(r);
  r.mark("logits", OpGroup::Logits, -1);
  const uint32_t logits_rows = k_.mv_rows(model_.output, EPI_ARGMAX);
  ArgmaxPC pc{div_up(model_.output.M, logits_rows), ch.take(1)};
  r.dispatch(k_.simple_pipe(ch.on ? "argmax_ov" : "argmax"), {{4, ws_.step.buf}, {6, ws_.part.buf}, {7, ws_.flags.buf}},
             pc, 1);
  r.mark("argmax", OpGroup::Sample, -1);
}

void StepOps::qkv_heads(vk::Recorder& r, uint32_t layer, uint32_t n, uint32_t pos0, bool decode) {
  const DeviceLayer& l = model_.layers[layer];
  const VkBuffer rope = model_.rope_local.buf && hp_.layer_is_local(layer) ? model_.rope_local.buf : model_.rope.buf;
  const bool bias = l.qkv_bias.buf != VK_NULL_HANDLE, norm = l.qk_norm.buf != VK_NULL_HANDLE;
  const uint32_t flags = (bias ? kHeadsBias : 0) | (norm ? kHeadsNorm : 0) |
                         (hp_.rope_layout == RopeLayout::Halves ? kHeadsHalves : 0) | (decode ? kHeadsStepPos : 0);
  QkvHeadsPC pc{hp_.head_dim, hp_.rope_dim, hp_.n_head, hp_.n_head_kv, pos0, flags, hp_.rms_eps};
  // v's heads only carry a bias; without one they are left alone.
  const uint32_t heads = hp_.n_head + hp_.n_head_kv * (bias ? 2 : 1);
  r.dispatch(k_.simple_pipe("qkv_heads"),
             {{0, ws_.q.buf}, {1, l.kc.buf}, {2, l.vc.buf}, {3, l.qkv_bias.buf}, {4, ws_.step.buf}, {5, rope},
              {6, l.qk_norm.buf}},
             pc, heads, n);
}

void StepOps::post_norm(vk::Recorder& r, const vk::Buffer& w, uint32_t n) {
  RmsPC pc{hp_.n_embd, hp_.rms_eps};
  r.dispatch(k_.simple_pipe("rmsnorm_add"), {{1, ws_.xn.buf}, {2, w.buf}, {3, ws_.x.buf}}, pc, n);
}

}  // namespace p64::vulkan
