#pragma once
// Small valid inputs shared by the fuzz targets (as fixed surroundings) and the seed
// generator (as starting points): a tiny Hugging Face Llama folder's three files.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace p64::fuzz {

// A byte-level BPE tokenizer.json of 13 tokens ("Ġ" is the byte-level space).
inline std::string tiny_tokenizer_json() {
  return R"({"version":"1.0","added_tokens":[{"id":11,"content":"<|im_end|>","special":true},
  {"id":12,"content":"<|im_start|>","special":true}],"normalizer":null,
  "pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
  "model":{"type":"BPE","dropout":null,"unk_token":null,"vocab":{"h":0,"e":1,"l":2,"o":3,"Ġ":4,"w":5,
  "he":6,"ll":7,"hell":8,"hello":9,"Ġw":10},"merges":["h e","l l","he ll","hell o","Ġ w"]}})";
}

// config.json of a one-layer Llama whose tensors tiny_llama_safetensors() holds.
inline std::string tiny_llama_config() {
  return R"({"model_type":"llama","architectures":["LlamaForCausalLM"],"hidden_size":8,"num_hidden_layers":1,
  "num_attention_heads":2,"num_key_value_heads":1,"intermediate_size":16,"vocab_size":13,"rms_norm_eps":1e-05,
  "max_position_embeddings":64,"rope_theta":10000.0,"tie_word_embeddings":true,"torch_dtype":"float32"})";
}

// A .safetensors file of zero-filled F32 tensors (shapes in PyTorch order).
inline std::string safetensors_bytes(const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors) {
  std::string header = "{";
  uint64_t at = 0;
  for (const auto& [name, shape] : tensors) {
    uint64_t n = 1;
    std::string dims;
    for (int64_t d : shape) {
      n *= static_cast<uint64_t>(d);
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"F32\",\"shape\":[" + dims +
              "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + 4 * n) + "]}";
    at += 4 * n;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  return out + header + std::string(at, '\0');
}

// The tensors of a one-layer Llama of width 8 (FFN 16, 2 heads, 1 KV head, vocab 13) as an HF
// folder names and shapes them.
inline std::vector<std::pair<std::string, std::vector<int64_t>>> tiny_llama_tensor_shapes() {
  const std::string l = "model.layers.0.";
  return {{"model.embed_tokens.weight", {13, 8}},
          {l + "input_layernorm.weight", {8}},
          {l + "self_attn.q_proj.weight", {8, 8}},
          {l + "self_attn.k_proj.weight", {4, 8}},
          {l + "self_attn.v_proj.weight", {4, 8}},
          {l + "self_attn.o_proj.weight", {8, 8}},
          {l + "post_attention_layernorm.weight", {8}},
          {l + "mlp.gate_proj.weight", {16, 8}},
          {l + "mlp.up_proj.weight", {16, 8}},
          {l + "mlp.down_proj.weight", {8, 16}},
          {"model.norm.weight", {8}}};
}

inline std::string tiny_llama_safetensors() { return safetensors_bytes(tiny_llama_tensor_shapes()); }

}  // namespace p64::fuzz
