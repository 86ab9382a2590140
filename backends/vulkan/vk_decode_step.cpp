#include "backends/vulkan/vk_decode_step.h"

#include "backends/vulkan/vk_common.h"
#include "backends/vulkan/vk_op_timer.h"
#include "backends/vulkan/vk_push_constants.h"
#include "engine/common/error.h"

namespace p64::vulkan {

DecodeStep::DecodeStep(vk::Context& ctx, vk::Pipelines& pipes, VkBuffer dummy, StepOps& ops, const ResidentModel& model,
                       Workspace& ws, const HParams& hp, const Tuning& tune)
    : ctx_(ctx), pipes_(pipes), dummy_(dummy), ops_(ops), k_(ops.kernels()), model_(model), ws_(ws), hp_(hp) {
  plan_.norm_in_gemv = tune.fuse_norm;
  plan_.gate_up_in_one = tune.fused_gate_up;
  plan_.qkv_heads = model.qkv_heads;
  plan_.overlap = tune.overlap;
  plan_.attn_splits = tune.attn_splits;
  plan_.attn_split_from = tune.attn_split_from;
  plan_.fence_poll = tune.fence_poll;
}

DecodeStep::~DecodeStep() {
  for (Program& p : programs_) {
    p.rec.reset();
    ctx_.free_command_buffer(p.cmd);
  }
}

void DecodeStep::record_untimed() {
  for (bool logits : {false, true})
    for (bool long_ctx : {false, true})
      if (!long_ctx || plan_.attn_splits > 1) program(false, logits, long_ctx, VK_NULL_HANDLE);
}

DecodeStep::Program& DecodeStep::program(bool timed, bool logits, bool long_ctx, VkQueryPool queries) {
  Program& p = programs_[(timed ? 4 : 0) + (logits ? 2 : 0) + (long_ctx ? 1 : 0)];
  if (!p.rec) {
    p.rec = std::make_unique<vk::Recorder>(ctx_, pipes_, dummy_, hp_.n_layer * 16 + 16);
    p.cmd = ctx_.allocate_command_buffer();
    record(*p.rec, p.cmd, logits, timed ? queries : VK_NULL_HANDLE, long_ctx ? plan_.attn_splits : 1);
  }
  return p;
}

int32_t DecodeStep::run(int32_t token, int32_t pos, bool want_logits, OpTimer& timer, bool prefill_step) {
  uint32_t* s = ws_.step_words();
  s[0] = static_cast<uint32_t>(token);
  s[1] = static_cast<uint32_t>(pos);
  s[2] = 0xFFFFFFFFu;
  const bool timed = timer.on();
  const bool long_ctx = plan_.attn_splits > 1 && static_cast<uint32_t>(pos) + 1 >= plan_.attn_split_from;
  Program& prog = program(timed, want_logits, long_ctx, timer.queries());
  ctx_.submit_and_wait(prog.cmd, plan_.fence_poll);
  if (plan_.overlap && s[3] != 0)
    throw DeviceError("Vulkan (overlap=1): a decode dispatch waited too long for the one before it; this device "
                      "does not start dispatches in order, so run it with overlap=0");
  if (timed) timer.emit(*prog.rec, prefill_step, pos);
  return static_cast<int32_t>(s[2]);
}

void DecodeStep::record(vk::Recorder& r, VkCommandBuffer cmd, bool copy_logits, VkQueryPool queries,
                        uint32_t attn_splits) {
  r.reset();
  r.begin(cmd, queries);
  StageChain ch;
  ch.on = plan_.overlap;
  // Both ordered before their first use by the barrier after embed.
  if (ch.on) r.fill_zero(ws_.flags.buf);
  if (attn_splits > 1) r.fill_zero(ws_.attn_arrived.buf);
  ops_.embed(r, 0, 1);
  ch.hard(r);
  r.mark("embed", OpGroup::Other, -1);
  for (uint32_t li = 0; li < hp_.n_layer; ++li) {
    attention(r, ch, li, attn_splits);
    ffn(r, ch, li);
  }
  ops_.logits(r, ch, ws_.x.buf, 0, plan_.norm_in_gemv);
  if (copy_logits) {
    r.barrier();
    r.copy(ws_.logits.buf, ws_.readback.buf, 4ull * hp_.n_vocab);
  }
  r.barrier_to_host();
  r.end();
}

VkBuffer DecodeStep::normed_input(vk::Recorder& r, StageChain& ch, const vk::Buffer& norm, const char* op,
                                  int32_t layer) {
  if (plan_.norm_in_gemv) return ws_.x.buf;
  ops_.rmsnorm(r, ws_.x.buf, norm.buf, ws_.xn.buf, 1);
  ch.next(r);
  r.mark(op, OpGroup::Rms, layer);
  return ws_.xn.buf;
}

void DecodeStep::attention(vk::Recorder& r, StageChain& ch, uint32_t layer, uint32_t attn_splits) {
  const DeviceLayer& l = model_.layers[layer];
  const int32_t L = static_cast<int32_t>(layer);
  const bool fn = plan_.norm_in_gemv;
  const uint32_t kvd = hp_.kv_dim();
  const VkBuffer xin = normed_input(r, ch, l.attn_norm, "rms_attn", L);
  // Q, K, V: independent dispatches with no barrier between them; RoPE and the KV-cache
  // write happen in their epilogues.
  const uint32_t qk_epi = plan_.qkv_heads ? EPI_STORE : EPI_ROPE;
  ops_.mv(r, ch, l.q, qk_epi, fn, xin, 0, l.attn_norm.buf, ws_.q.buf, 0);
  ops_.mv(r, ch, l.k, qk_epi, fn, xin, 0, l.attn_norm.buf, l.kc.buf, kvd);
  ops_.mv(r, ch, l.v, EPI_STORE, fn, xin, 0, l.attn_norm.buf, l.vc.buf, kvd);
  if (plan_.qkv_heads) {
    // Real barriers around it (overlap too): it takes no part in the stage flags.
    ch.hard(r);
    r.mark("qkv", OpGroup::Attn, L);
    ops_.qkv_heads(r, layer, 1, 0, true);
    ch.hard(r);
    r.mark("qkv_heads", OpGroup::Attn, L);
  } else {
    ch.next(r);
    r.mark("qkv", OpGroup::Attn, L);
  }
  AttnPC pc{hp_.head_dim, hp_.n_head / hp_.n_head_kv, kvd, hp_.q_dim(), 0, hp_.attn_scale(),
            ch.take(hp_.n_head * attn_splits)};
  r.dispatch(k_.attn_pipe(ch.on, attn_splits, k_.layer_window(layer)),
             {{0, l.kc.buf}, {1, ws_.q.buf}, {2, l.vc.buf}, {3, ws_.att.buf}, {4, ws_.step.buf},
              {5, ws_.attn_partial.buf}, {6, ws_.attn_arrived.buf}, {7, ws_.flags.buf}},
             pc, hp_.n_head * attn_splits);
  ch.next(r);
  r.mark("sdpa", OpGroup::Attn, L);
  residual_mv(r, ch, l.o, ws_.att.buf, l.post_attn_norm, {"o", OpGroup::Attn, L}, "post_attn_norm");
}

void DecodeStep::ffn(vk::Recorder& r, StageChain& ch, uint32_t layer) {
  const DeviceLayer& l = model_.layers[layer];
  const int32_t L = static_cast<int32_t>(layer);
  gate_up(r, ch, l, normed_input(r, ch, l.ffn_norm, "rms_ffn", L));
  ch.next(r);
  r.mark("gate_up", OpGroup::Ffn, L);
  residual_mv(r, ch, l.dn, ws_.g.buf, l.post_ffn_norm, {"down", OpGroup::Ffn, L}, "post_ffn_norm");
}

void DecodeStep::gate_up(vk::Recorder& r, StageChain& ch, const DeviceLayer& l, VkBuffer xin) {
  const bool fn = plan_.norm_in_gemv;
  if (plan_.gate_up_in_one) {
    ops_.mv(r, ch, l.gu, EPI_SWIGLU, fn, xin, 0, l.ffn_norm.buf, ws_.g.buf, 0);
    return;
  }
  DeviceMatrix up = l.gu;
  up.base = l.gu.base2;
  ops_.mv(r, ch, l.gu, EPI_STORE, fn, xin, 0, l.ffn_norm.buf, ws_.g.buf, 0);
  ops_.mv(r, ch, up, EPI_STORE, fn, xin, 0, l.ffn_norm.buf, ws_.up.buf, 0);
  ch.next(r);
  CountPC pc{hp_.n_ff};
  r.dispatch(k_.glu_pipe(), {{2, ws_.up.buf}, {3, ws_.g.buf}}, pc, div_up(hp_.n_ff, 256));
}

void DecodeStep::residual_mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, VkBuffer in,
                             const vk::Buffer& post_norm, const OpMark& op, const char* norm_op) {
  if (!post_norm.buf) {
    ops_.mv(r, ch, m, EPI_ADD, false, in, 0, VK_NULL_HANDLE, ws_.x.buf, 0);
    ch.next(r);
    r.mark(op.name, op.group, op.layer);
    return;
  }
  // the product's own rmsnorm before the residual add (gemma), between real barriers
  ops_.mv(r, ch, m, EPI_STORE, false, in, 0, VK_NULL_HANDLE, ws_.xn.buf, 0);
  ch.hard(r);
  r.mark(op.name, op.group, op.layer);
  ops_.post_norm(r, post_norm, 1);
  ch.hard(r);
  r.mark(norm_op, OpGroup::Rms, op.layer);
}

}  // namespace p64::vulkan
