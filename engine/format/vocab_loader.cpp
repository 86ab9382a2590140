#include "engine/format/vocab_loader.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/common/mapped_file.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/llama2c_reader.h"
#include "engine/format/p64_reader.h"
#include "engine/format/hf_tokenizer_json.h"
#include "engine/model/tiktoken.h"

namespace p64 {
namespace {

// A tiktoken file starts with a line "base64 rank".
bool looks_like_tiktoken(std::string_view head) {
  const size_t nl = head.find('\n');
  if (nl == std::string_view::npos) return false;
  const std::string_view line = head.substr(0, nl);
  const size_t sp = line.find(' ');
  if (sp == 0 || sp == std::string_view::npos || sp + 1 >= line.size()) return false;
  for (size_t i = 0; i < sp; ++i) {
    const char c = line[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=')) return false;
  }
  for (size_t i = sp + 1; i < line.size(); ++i)
    if (!(line[i] >= '0' && line[i] <= '9') && !(line[i] == '\r' && i + 1 == line.size())) return false;
  return true;
}

// llama2.c's tokenizer.bin has no token count: int32 max_token_length, then per token a float
// score, an int32 length and the bytes. It is recognised when those records end exactly at
// the end of the file; returns the count, or 0.
size_t llama2c_token_count(const MappedFile& f) {
  const uint8_t* p = f.data();
  const size_t n = f.size();
  if (n < 4) return 0;
  int32_t max_len = 0;
  std::memcpy(&max_len, p, 4);
  if (max_len <= 0 || max_len > 4096) return 0;
  size_t pos = 4, count = 0;
  while (pos < n) {
    if (n - pos < 8) return 0;
    int32_t len = 0;
    std::memcpy(&len, p + pos + 4, 4);
    if (len < 0 || len > max_len || n - pos - 8 < static_cast<size_t>(len)) return 0;
    pos += 8 + static_cast<size_t>(len);
    ++count;
  }
  return count;
}

}  // namespace

Vocabulary load_vocabulary(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const auto json_path = std::filesystem::path(path) / "tokenizer.json";
    if (std::filesystem::exists(json_path)) {
      check_input_file(json_path.string(), path);
      return read_hf_tokenizer_json(json_path.string());
    }
    throw Error(path + ": a folder without tokenizer.json");
  }
  auto file = MappedFile::open(path);
  const std::string_view head(reinterpret_cast<const char*>(file->data()), std::min<size_t>(file->size(), 4096));
  if (head.size() >= 4 && std::memcmp(head.data(), "p64\0", 4) == 0) return inspect_p64(path).vocab;
  if (head.size() >= 4 && std::memcmp(head.data(), "GGUF", 4) == 0) return gguf_vocabulary(GgufFile::open(path));
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head[first] == '{') return read_hf_tokenizer_json(path);
  if (looks_like_tiktoken(head)) return read_tiktoken_model(path);
  if (const size_t n = llama2c_token_count(*file); n > 0) return read_llama2c_tokenizer(path, static_cast<uint32_t>(n));
  throw Error(path + ": not a vocabulary this build reads (expected a .p64, a GGUF, a llama2.c tokenizer, "
                     "a tiktoken .model or a tokenizer.json)");
}

}  // namespace p64
