#pragma once
// The model as the Vulkan backend keeps it on the device, the one description of it: every
// weight matrix and norm vector, the KV cache and the RoPE tables, uploaded once by load()
// through a staging buffer, and the steps of the block that the model's architecture adds.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/vulkan/vk_context.h"
#include "engine/model/model.h"

namespace p64::vulkan {

// A weight matrix resident on the device: its buffer, byte offset, and what the shaders need.
struct DeviceMatrix {
  const vk::Buffer* buf = nullptr;
  uint32_t base = 0;   // byte offset of the matrix in buf
  uint32_t base2 = 0;  // byte offset of the paired matrix (up, after gate)
  uint32_t nb = 0;     // blocks of one matrix (SoA array offsets)
  DType dtype = DType::F32;
  uint32_t K = 0, M = 0;  // row length, rows
};

struct DeviceLayer {
  vk::Buffer attn_norm, ffn_norm, wq, wk, wv, wo, gate_up, down, kc, vc;
  vk::Buffer qkv_bias, qk_norm;  // bq|bk|bv and q_norm|k_norm end to end, where the model has them
  vk::Buffer post_attn_norm, post_ffn_norm;  // gemma
  DeviceMatrix q, k, v, o, gu, dn;
};

class ResidentModel {
 public:
  explicit ResidentModel(vk::Context& ctx) : ctx_(ctx) {}
  ~ResidentModel();
  ResidentModel(const ResidentModel&) = delete;
  ResidentModel& operator=(const ResidentModel&) = delete;

  // Uploads the weights and allocates a KV cache of max_ctx positions. Throws p64::DeviceError
  // when the model plainly cannot fit (before any upload), p64::Error for a dtype or a row
  // length no shader reads.
  void upload(const Model& model, uint32_t max_ctx);

  DeviceMatrix embd, output;  // output is embd itself where the model ties them
  vk::Buffer out_norm;
  std::vector<DeviceLayer> layers;
  vk::Buffer rope, rope_local;  // rope_local: local layers with their own base (gemma3)
  // The model needs steps the GEMV's RoPE epilogue cannot do (qkv bias, q/k norm, RoPE over
  // halves): its q and k products are stored plain and qkv_heads.comp finishes them.
  bool qkv_heads = false;
  bool geglu = false;  // the FFN's gate is GELU (gemma), else silu
  bool post_norms = false;  // gemma's norms after attention and FFN
  float embd_scale = 1.0f;  // gemma scales the token embedding by sqrt(n_embd)

 private:
  void upload_layer(uint32_t i, const LayerWeights& w, uint64_t kv_cache_bytes);  // K and V each
  vk::Buffer upload_f32_vector(const TensorView& t, const std::string& what) { return upload_f32_vectors({&t}, what); }
  vk::Buffer upload_f32_vectors(std::initializer_list<const TensorView*> parts, const std::string& what);  // end to end
  DeviceMatrix upload_matrix(vk::Buffer& dst, const TensorView& a, const TensorView* b, const std::string& what);
  void copy_to_device(const vk::Buffer& dst, uint64_t dst_off, const uint8_t* src, uint64_t bytes);
  // cos, sin of every position and rotated pair, times LongRope's attention factor.
  vk::Buffer build_rope_table(const HParams& hp, const char* what);

  vk::Context& ctx_;
  const Model* model_ = nullptr;  // during upload()
  HParams hp_;
  uint32_t max_ctx_ = 0;
  vk::Buffer embd_buf_, output_buf_, staging_;
};

}  // namespace p64::vulkan
