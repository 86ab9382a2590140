#include "backends/vulkan/vk_prefill_runner.h"

#include <algorithm>
#include <vector>

#include "backends/vulkan/vk_common.h"
#include "backends/vulkan/vk_op_timer.h"
#include "backends/vulkan/vk_push_constants.h"

namespace p64::vulkan {

PrefillRunner::PrefillRunner(vk::Context& ctx, vk::Pipelines& pipes, VkBuffer dummy, StepOps& ops,
                             const ResidentModel& model, Workspace& ws, const HParams& hp, const Tuning& tune)
    : ctx_(ctx), ops_(ops), k_(ops.kernels()), model_(model), ws_(ws), hp_(hp), tune_(tune) {
  rec_ = std::make_unique<vk::Recorder>(ctx, pipes, dummy, hp.n_layer * 16 + 16);
  cmd_ = ctx.allocate_command_buffer();
}

PrefillRunner::~PrefillRunner() {
  rec_.reset();
  ctx_.free_command_buffer(cmd_);
}

void PrefillRunner::create_pipelines() {
  for (uint32_t n : tune_.stepwise ? std::vector<uint32_t>{} : std::vector<uint32_t>{32u, 64u})
    for (const DeviceLayer& l : model_.layers)
      for (const DeviceMatrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gu, &l.dn})
        k_.mm_pipe(m->dtype, k_.mm_tile(n), m == &l.gu && model_.geglu);
  if (!tune_.stepwise)
    for (uint32_t li = 0; li < hp_.n_layer; ++li) k_.attn_prefill_pipe(k_.layer_window(li));
  k_.simple_pipe("rmsnorm");
  k_.glu_pipe();
  if (model_.qkv_heads) k_.simple_pipe("qkv_heads");
  if (model_.post_norms) k_.simple_pipe("rmsnorm_add");
}

int32_t PrefillRunner::run(std::span<const int32_t> tokens, int32_t pos, OpTimer& timer) {
  uint32_t* s = ws_.step_words();
  const bool timed = timer.on();
  for (size_t done = 0; done < tokens.size();) {
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(tune_.ubatch, tokens.size() - done));
    const bool last = done + n == tokens.size();
    for (uint32_t i = 0; i < n; ++i) s[kStepWords + i] = static_cast<uint32_t>(tokens[done + i]);
    s[2] = 0xFFFFFFFFu;
    const uint32_t p0 = static_cast<uint32_t>(pos + done);
    record_chunk({n, p0, k_.mm_tile(n)}, last, timed ? timer.queries() : VK_NULL_HANDLE);
    ctx_.submit_and_wait(cmd_);
    if (timed) timer.emit(*rec_, true, static_cast<int32_t>(p0));
    done += n;
  }
  return static_cast<int32_t>(s[2]);
}

void PrefillRunner::record_chunk(const Chunk& c, bool last, VkQueryPool queries) {
  vk::Recorder& r = *rec_;
  r.reset();
  r.begin(cmd_, queries);
  if (ws_.mm_arrived.buf) r.fill_zero(ws_.mm_arrived.buf);  // ordered before the GEMMs by the barrier after embed
  ops_.embed(r, kStepWords, c.n);
  r.barrier();
  r.mark("embed", OpGroup::Other, -1);
  for (uint32_t li = 0; li < hp_.n_layer; ++li) {
    attention(r, c, li);
    ffn(r, c, li);
  }
  if (last) {
    StageChain barriers;
    ops_.logits(r, barriers, ws_.x.buf, (c.n - 1) * hp_.n_embd, tune_.fuse_norm);
  }
  r.barrier_to_host();
  r.end();
}

void PrefillRunner::attention(vk::Recorder& r, const Chunk& c, uint32_t layer) {
  const DeviceLayer& l = model_.layers[layer];
  const int32_t L = static_cast<int32_t>(layer);
  const uint32_t kvd = hp_.kv_dim(), qd = hp_.q_dim();
  ops_.rmsnorm(r, ws_.x.buf, l.attn_norm.buf, ws_.xn.buf, c.n);
  r.barrier();
  r.mark("rms_attn", OpGroup::Rms, L);
  // RoPE in the epilogues; K and V go straight into the cache at positions pos0 + t.
  const uint32_t qk_epi = model_.qkv_heads ? EPI_STORE : EPI_ROPE;
  gemm(r, c, l.q, qk_epi, ws_.xn.buf, ws_.q.buf, qd, 0, 0);
  gemm(r, c, l.k, qk_epi, ws_.xn.buf, l.kc.buf, kvd, c.pos0, 1);
  gemm(r, c, l.v, EPI_STORE, ws_.xn.buf, l.vc.buf, kvd, c.pos0, 2);
  r.barrier();
  r.mark("qkv", OpGroup::Attn, L);
  if (model_.qkv_heads) {
    ops_.qkv_heads(r, layer, c.n, c.pos0, false);
    r.barrier();
    r.mark("qkv_heads", OpGroup::Attn, L);
  }
  const uint32_t group = hp_.n_head / hp_.n_head_kv;
  AttnPrefillPC pc{c.n, group, kvd, qd, c.pos0, hp_.attn_scale()};
  r.dispatch(k_.attn_prefill_pipe(k_.layer_window(layer)),
             {{0, l.kc.buf}, {1, ws_.q.buf}, {2, l.vc.buf}, {3, ws_.att.buf}}, pc, hp_.n_head_kv,
             div_up(uint64_t(c.n) * group, tune_.pa_rows));
  r.barrier();
  r.mark("sdpa", OpGroup::Attn, L);
  residual_gemm(r, c, l.o, ws_.att.buf, l.post_attn_norm, {"o", OpGroup::Attn, L}, "post_attn_norm");
}

void PrefillRunner::ffn(vk::Recorder& r, const Chunk& c, uint32_t layer) {
  const DeviceLayer& l = model_.layers[layer];
  const int32_t L = static_cast<int32_t>(layer);
  ops_.rmsnorm(r, ws_.x.buf, l.ffn_norm.buf, ws_.xn.buf, c.n);
  r.barrier();
  r.mark("rms_ffn", OpGroup::Rms, L);
  gemm(r, c, l.gu, EPI_SWIGLU, ws_.xn.buf, ws_.g.buf, hp_.n_ff, 0, 0);
  r.barrier();
  r.mark("gate_up", OpGroup::Ffn, L);
  residual_gemm(r, c, l.dn, ws_.g.buf, l.post_ffn_norm, {"down", OpGroup::Ffn, L}, "post_ffn_norm");
}

void PrefillRunner::residual_gemm(vk::Recorder& r, const Chunk& c, const DeviceMatrix& m, VkBuffer in,
                                  const vk::Buffer& post_norm, const OpMark& op, const char* norm_op) {
  const bool normed = post_norm.buf != VK_NULL_HANDLE;
  gemm(r, c, m, normed ? EPI_STORE : EPI_ADD, in, normed ? ws_.xn.buf : ws_.x.buf, hp_.n_embd, 0, 0);
  r.barrier();
  r.mark(op.name, op.group, op.layer);
  if (!normed) return;
  ops_.post_norm(r, post_norm, c.n);
  r.barrier();
  r.mark(norm_op, OpGroup::Rms, op.layer);
}

void PrefillRunner::gemm(vk::Recorder& r, const Chunk& c, const DeviceMatrix& m, uint32_t epi, VkBuffer x, VkBuffer y,
                         uint32_t ldy, uint32_t y_row0, uint32_t region) {
  const Kernels::MmTile tile = c.tile;
  const uint32_t M = epi == EPI_SWIGLU ? hp_.n_ff : m.M;
  const uint32_t gx = div_up(M, epi == EPI_SWIGLU ? tile.rows / 2 : tile.rows), gy = div_up(c.n, tile.tokens);
  const uint64_t tile_floats = uint64_t(tile.rows) * tile.tokens, grid = uint64_t(gx) * gy;
  uint32_t splits = 1;
  if (ws_.mm_part.buf) {
    splits = std::min({tune_.mm_splits, div_up(kMmTargetGroups, grid), std::max(div_up(m.K, 32) / 2, 1u)});
    while (splits > 1 && grid * tile_floats * splits > ws_.mm_part_floats) --splits;
  }
  MmPC pc{M, c.n, m.base, m.base2, m.nb, ldy, y_row0, c.pos0, hp_.head_dim, hp_.rope_dim, m.K, epi, splits,
          static_cast<uint32_t>(region * ws_.mm_part_floats), region * ws_.mm_tiles};
  r.dispatch(k_.mm_pipe(m.dtype, tile, epi == EPI_SWIGLU && model_.geglu),
             {{0, m.buf->buf}, {1, x}, {3, y}, {5, model_.rope.buf}, {6, ws_.mm_part.buf}, {7, ws_.mm_arrived.buf}}, pc,
             gx, gy, splits);
}

}  // namespace p64::vulkan
