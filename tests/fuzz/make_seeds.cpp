// Writes the seed corpora of the fuzz targets: small files generated here and pieces of the
// real files in ../shared/models and ../shared/peers. Run at test time (a CTest fixture and
// scripts/fuzz.sh), so nothing from shared/ is committed. Each generated valid seed is read
// back with its reader first, so a seed that has gone stale fails here, not silently.
//
// usage: p64_fuzz_seeds OUT_DIR
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/format/gguf_reader.h"
#include "engine/format/gguf_writer.h"
#include "engine/format/llama2c_reader.h"
#include "engine/format/p64_reader.h"
#include "engine/format/p64_writer.h"
#include "engine/format/safetensors.h"
#include "engine/format/hf_import.h"
#include "engine/format/hf_tokenizer_json.h"
#include "engine/p64_test_model.h"
#include "fuzz_samples.h"

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct Seeds {
  fs::path dir;
  int n = 0;
  void add(const std::string& bytes) { write_file(dir / ("seed-" + std::to_string(n++)), bytes); }
};

fs::path shared(const std::string& rel) { return fs::path(P64_SHARED_DIR) / rel; }

// "__ggml_vocab_test__"-separated test inputs, each behind a flags byte of 0 (plain text).
void add_vocab_test_inputs(Seeds& s, const std::string& inp_name) {
  const std::string all = read_file(shared("models/" + inp_name));
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find(sep, at);
    if (end == std::string::npos) end = all.size();
    s.add(std::string(1, '\0') + all.substr(at, end - at));
    at = end + sep.size();
  }
}

// A vocabulary-only GGUF with stories260K.gguf's metadata, and a tiny one with tensors.
void gguf_seeds(Seeds& s, const fs::path& tmp) {
  const p64::GgufFile src = p64::GgufFile::open(shared("models/stories260K.gguf").string());
  p64::GgufWriter vocab_only;
  for (const auto& kv : src.metadata()) vocab_only.add_value(kv.key, kv.value);
  vocab_only.write((tmp / "a.gguf").string());
  s.add(read_file(tmp / "a.gguf"));

  p64::GgufWriter tiny;
  tiny.add_string("general.architecture", "llama");
  tiny.add_u32("llama.embedding_length", 8);
  tiny.add_u32("llama.block_count", 1);
  tiny.add_u32("llama.attention.head_count", 2);
  tiny.add_u32("llama.attention.head_count_kv", 1);
  tiny.add_u32("llama.feed_forward_length", 16);
  tiny.add_string("tokenizer.ggml.model", "gpt2");
  tiny.add_string("tokenizer.ggml.pre", "gpt-2");
  tiny.add_string_array("tokenizer.ggml.tokens", {"h", "e", "l", "he", "ll", "<|endoftext|>"});
  tiny.add_i32_array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3});
  tiny.add_string_array("tokenizer.ggml.merges", {"h e", "l l"});
  tiny.add_u32("tokenizer.ggml.eos_token_id", 5);
  tiny.add_string("tokenizer.chat_template", "<|im_start|>{{ m.content }}<|im_end|>");
  auto zeros = [](uint8_t* dst, int64_t, int64_t n) { std::memset(dst, 0, static_cast<size_t>(n) * 32); };
  tiny.add_tensor("token_embd.weight", p64::DType::F32, {8, 6}, zeros);
  tiny.add_tensor("output_norm.weight", p64::DType::F32, {8}, zeros);
  tiny.write((tmp / "b.gguf").string());
  (void)p64::GgufFile::open((tmp / "b.gguf").string());
  s.add(read_file(tmp / "b.gguf"));
}

void p64_seeds(Seeds& s, const fs::path& tmp) {
  p64::test::TinyModel tiny = p64::test::tiny_image(7, 1, 16, 32);
  const std::string path = (tmp / "tiny.p64").string();
  p64::write_p64(path, tiny.image);
  (void)p64::open_p64(path);
  const std::string bytes = read_file(path);
  s.add(std::string(1, '\0') + bytes);  // as is
  s.add(std::string(1, '\1') + bytes);  // CRCs recomputed after mutation
}

// A one-layer llama2.c checkpoint: dim 8, hidden 16, 2 heads, 1 KV head, vocab 16, seq 8.
void llama2c_checkpoint_seeds(Seeds& s, const fs::path& tmp) {
  for (int32_t vocab : {16, -16}) {
    const int32_t h[7] = {8, 16, 1, 2, 1, vocab, 8};
    const uint64_t hs = 4, v = 16;
    uint64_t n = v * 8 + 8 + 8 * 8 + 8 * 4 * 2 + 8 * 8 + 8 + 8 * 16 * 3 + 8 + 8 * hs;
    if (vocab < 0) n += v * 8;
    std::string bytes(28 + n * 4, '\0');
    std::memcpy(bytes.data(), h, 28);
    for (uint64_t i = 0; i < n; ++i) {
      const float x = 0.01f * static_cast<float>(i % 97);
      std::memcpy(bytes.data() + 28 + i * 4, &x, 4);
    }
    write_file(tmp / "tiny.bin", bytes);
    (void)p64::read_llama2c((tmp / "tiny.bin").string());
    s.add(bytes);
  }
}

void chat_template_seeds(Seeds& s) {
  // Template end, then (role byte, content) turns: system, user, assistant, user + generation prompt.
  static const char kTurns[] = "\0\0You are helpful.\0\1Hello there\0\2Hi!\0\x81" "What now?";
  const std::string messages(kTurns, sizeof kTurns - 1);
  for (const char* t : {"{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>{% endfor %}",
                        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
                        "{{ '<|im_start|>system\nYou are SmolLM.<|im_end|>\n' }}<|im_start|>",
                        "<start_of_turn>user\n{{ m.content }}<end_of_turn>", "<|user|>\n{{ m }}<|end|>", "<|user|>\n{{ m }}</s>",
                        "[INST] <<SYS>>\n{{ s }}\n<</SYS>> [/INST]", "[INST] {{ m }} [/INST]", "{{ unknown }}"}) {
    s.add(std::string(t) + messages);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: p64_fuzz_seeds OUT_DIR\n";
    return 2;
  }
  const fs::path out(argv[1]);
  const fs::path tmp = out / "_work";
  fs::create_directories(tmp);
  auto seeds = [&](const std::string& target) {
    fs::remove_all(out / target);
    fs::create_directories(out / target);
    return Seeds{out / target};
  };
  try {
    { Seeds s = seeds("gguf"); gguf_seeds(s, tmp); }
    { Seeds s = seeds("p64"); p64_seeds(s, tmp); }
    { Seeds s = seeds("llama2c_checkpoint"); llama2c_checkpoint_seeds(s, tmp); }
    {
      Seeds s = seeds("llama2c_tokenizer");
      s.add(std::string(1, '\0') + read_file(shared("models/tok512.bin")));
    }
    {
      Seeds s = seeds("safetensors");
      s.add(p64::fuzz::tiny_llama_safetensors());
      s.add(p64::fuzz::safetensors_bytes({{"a", {2, 3}}, {"b", {}}}));
    }
    {
      // The tiny folder must load as a whole, or every config.json mutation stops early.
      fs::create_directories(tmp / "hf");
      write_file(tmp / "hf" / "config.json", p64::fuzz::tiny_llama_config());
      write_file(tmp / "hf" / "model.safetensors", p64::fuzz::tiny_llama_safetensors());
      write_file(tmp / "hf" / "tokenizer.json", p64::fuzz::tiny_tokenizer_json());
      (void)p64::load_hf_directory((tmp / "hf").string());
      Seeds s = seeds("hf_config");
      s.add(p64::fuzz::tiny_llama_config());
      s.add(p64::fuzz::tiny_llama_config() + "\xFF" +
            R"({"weight_map":{"model.embed_tokens.weight":"model.safetensors","model.norm.weight":"model.safetensors"}})");
    }
    {
      Seeds s = seeds("hf_tokenizer_json");
      s.add(p64::fuzz::tiny_tokenizer_json());
    }
    { Seeds s = seeds("tokenizer_spm"); add_vocab_test_inputs(s, "ggml-vocab-llama-spm.gguf.inp"); }
    {
      Seeds s = seeds("tokenizer_bpe");
      add_vocab_test_inputs(s, "ggml-vocab-gpt-2.gguf.inp");
      const int gpt2 = s.n;
      add_vocab_test_inputs(s, "ggml-vocab-llama-bpe.gguf.inp");
      // The Llama 3 inputs go to the Llama 3 tokenizer (flags bit 2).
      for (int i = gpt2; i < s.n; ++i) {
        std::string b = read_file(s.dir / ("seed-" + std::to_string(i)));
        b[0] = 4;
        write_file(s.dir / ("seed-" + std::to_string(i)), b);
      }
    }
    { Seeds s = seeds("chat_template"); chat_template_seeds(s); }
    {
      Seeds s = seeds("llama_bench");
      for (const auto& e : fs::directory_iterator(shared("peers")))
        if (e.path().extension() != ".md") s.add(read_file(e.path()));
    }
    {
      Seeds s = seeds("vocab_loader");
      s.add(read_file(shared("models/tok512.bin")));
      s.add(p64::fuzz::tiny_tokenizer_json());
      const std::string tiktoken = read_file(shared("models/llama3_tokenizer.model"));
      size_t cut = 0;
      for (int line = 0; line < 300; ++line) cut = tiktoken.find('\n', cut) + 1;
      s.add(tiktoken.substr(0, cut));
    }
  } catch (const std::exception& e) {
    std::cerr << "p64_fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  fs::remove_all(tmp);
  std::cout << "seed corpora written to " << out.string() << "\n";
  return 0;
}
