#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/architecture.h"
#include "engine/model/hparams.h"
#include "engine/model/vocab.h"
#include "engine/quant/dtype.h"

namespace p64 {

// A tensor of a loaded model, read in place (from the P64 map or from an owned buffer).
// Shapes follow GGML order: ne[0] is the row length (contiguous), ne[1] the number of rows.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  uint32_t crc32c = 0;

  int64_t row_length() const { return ne[0]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

// t as its plain (AoS) blocks: t itself, or for a row-interleaved dtype (the CPU's layout) its
// rows gathered into `storage`, which the returned view points into. For backends whose
// kernels read the plain blocks (the GPU backends, at upload).
TensorView plain_blocks(const TensorView& t, std::vector<uint8_t>& storage);

// The tensors of one transformer block. Projections are [in = ne0, out = ne1]; the tensors
// only some architectures have are nullptr in the others.
struct LayerWeights {
  const TensorView* attn_norm = nullptr;  // [n_embd] F32
  const TensorView* wq = nullptr;         // [n_embd, q_dim]
  const TensorView* wk = nullptr;         // [n_embd, kv_dim]
  const TensorView* wv = nullptr;         // [n_embd, kv_dim]
  const TensorView* wo = nullptr;         // [q_dim, n_embd]
  const TensorView* ffn_norm = nullptr;   // [n_embd] F32
  const TensorView* w_gate = nullptr;     // [n_embd, n_ff]
  const TensorView* w_up = nullptr;       // [n_embd, n_ff]
  const TensorView* w_down = nullptr;     // [n_ff, n_embd]
  const TensorView* bq = nullptr;         // [q_dim] qkv bias (qwen2)
  const TensorView* bk = nullptr;         // [kv_dim]
  const TensorView* bv = nullptr;         // [kv_dim]
  const TensorView* q_norm = nullptr;     // [head_dim] per-head RMSNorm of q and k (qwen3, gemma3)
  const TensorView* k_norm = nullptr;     // [head_dim]
  const TensorView* post_attn_norm = nullptr;  // [n_embd] norm of the attention output (gemma2, gemma3)
  const TensorView* post_ffn_norm = nullptr;   // [n_embd] norm of the FFN output
  // phi3 fuses the projections that read the same input; wq..wv, w_gate and w_up are then nullptr.
  const TensorView* wqkv = nullptr;       // [n_embd, q_dim + 2 kv_dim]: q, k, v rows
  const TensorView* w_gate_up = nullptr;  // [n_embd, 2 n_ff]: gate rows, then up rows
};

// A model ready for a backend: hyperparameters, vocabulary and tensor views. Built by the
// P64 reader (engine/format/p64_reader.h) over a read-only map, or by Model::from_parts for
// tests and synthetic models in memory. Tensor names are GGUF's (token_embd, blk.N.attn_q, ...),
// the set and shapes those of hparams.arch's table (engine/model/architecture.h).
class Model {
 public:
  // `keepalive` owns the memory the views point into (a MappedFile or a buffer).
  static std::shared_ptr<const Model> from_parts(std::string source, HParams hp, Vocabulary vocab,
                                                 std::vector<TensorView> tensors,
                                                 std::shared_ptr<const void> keepalive);

  const std::string& source() const { return source_; }  // file path, or a label
  const HParams& hparams() const { return hparams_; }
  const Architecture& architecture() const { return *arch_; }
  const Vocabulary& vocab() const { return vocab_; }
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(std::string_view name) const;

  const TensorView& token_embd() const { return *token_embd_; }
  const TensorView& output_norm() const { return *output_norm_; }
  const TensorView& output() const { return *output_; }  // == token_embd() when tied
  const std::vector<LayerWeights>& layers() const { return layers_; }

  uint64_t weight_bytes() const;  // bytes a decode step streams (all matrices incl. output once)

 private:
  Model() = default;
  Model(const Model&) = delete;  // by_name_ points into tensors_
  Model& operator=(const Model&) = delete;
  std::string source_;
  HParams hparams_;
  const Architecture* arch_ = nullptr;
  Vocabulary vocab_;
  std::vector<TensorView> tensors_;
  // Name -> tensor, so looking up a model's N layers is not N times a scan of its tensors.
  std::unordered_map<std::string_view, const TensorView*> by_name_;
  std::shared_ptr<const void> keepalive_;
  const TensorView* token_embd_ = nullptr;
  const TensorView* output_norm_ = nullptr;
  const TensorView* output_ = nullptr;
  std::vector<LayerWeights> layers_;
};

}  // namespace p64
