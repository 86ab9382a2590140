#include "engine/format/source_model.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/hf_import.h"
#include "engine/format/llama2c_reader.h"
#include "engine/format/p64_reader.h"

namespace p64 {
namespace fs = std::filesystem;

std::string detect_model_format(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::exists(fs::path(path) / "config.json") ? "hf" : "";
  check_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading");
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0) return "gguf";
  if (in.gcount() == 4 && std::memcmp(magic, "p64\0", 4) == 0) return "p64";
  if (is_llama2c_checkpoint(*MappedFile::open(path))) return "llama2c";
  return "";
}

namespace {

P64TensorSource source_of(const std::string& name, DType dtype, uint32_t n_dims, const int64_t* ne, const uint8_t* data) {
  P64TensorSource s;
  s.name = name;
  s.dtype = dtype;
  s.n_dims = n_dims;
  for (int d = 0; d < 4; ++d) s.ne[d] = ne[d];
  s.data = data;
  return s;
}

}  // namespace

SourceModel load_source_model(const std::string& path, const std::string& tokenizer_path) {
  const std::string kind = detect_model_format(path);
  SourceModel src;
  src.kind = kind;
  src.path = path;
  if (kind == "gguf") {
    auto g = std::make_shared<GgufFile>(GgufFile::open(path));
    src.hparams = gguf_hparams(*g);
    src.vocab = gguf_vocabulary(*g);
    for (const auto& t : g->tensors()) {
      // Carried as hparams.rope_freq_factors (the long LongRope factors are not run: the backend
      // refuses contexts that would need them).
      if (t.name == "rope_freqs.weight" || t.name == "rope_factors_short.weight" || t.name == "rope_factors_long.weight")
        continue;
      src.tensors.push_back(source_of(t.name, t.dtype, t.n_dims, t.ne, t.data));
    }
    src.keepalive.push_back(g);
  } else if (kind == "llama2c") {
    if (tokenizer_path.empty())
      throw Error(path + ": a llama2.c checkpoint has no vocabulary; give its tokenizer file (--tokenizer tokenizer.bin)");
    auto c = std::make_shared<Llama2cCheckpoint>(read_llama2c(path));
    src.hparams = c->hparams;
    src.vocab = read_llama2c_tokenizer(tokenizer_path, c->hparams.n_vocab);
    for (const auto& t : c->tensors) src.tensors.push_back(source_of(t.name, t.dtype, t.n_dims, t.ne, t.data));
    src.keepalive.push_back(c);
  } else if (kind == "hf") {
    return load_hf_directory(path, tokenizer_path);
  } else if (kind == "p64") {
    auto m = open_p64(path);
    src.hparams = m->hparams();
    src.vocab = m->vocab();
    for (const auto& t : m->tensors()) src.tensors.push_back(source_of(t.name, t.dtype, t.n_dims, t.ne, t.data));
    src.keepalive.push_back(m);
  } else {
    throw Error(path + ": not a model this build reads (GGUF, llama2.c checkpoint, Hugging Face folder, P64)");
  }
  return src;
}

}  // namespace p64
