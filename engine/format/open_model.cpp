#include "engine/format/open_model.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "engine/common/error.h"
#include "engine/common/platform.h"
#include "engine/common/temp_files.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/format/source_model.h"

namespace p64 {
namespace fs = std::filesystem;

namespace {

// Removes the temporary file when it goes out of scope; the map outlives the name.
struct TempFile {
  std::string path;
  ~TempFile() {
    std::error_code ec;
    if (!path.empty()) fs::remove(path, ec);
  }
};

// In the p64 cache folder rather than the system's temp folder: often a RAM disk too small
// for a converted model, and one a killed conversion's file would be left in.
std::string make_temp_p64(const std::string& input) {
  std::string stem = fs::path(input).filename().string();
  if (stem.empty()) stem = "model";
  const fs::path dir = p64_cache_dir() / "converted";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string path;
  const int fd = create_temp_file(dir, stem, ".p64", path);
  if (fd < 0)
    throw Error(input + ": cannot create a temporary .p64 in " + dir.string() + ": " + std::strerror(errno) +
                " (XDG_CACHE_HOME chooses another folder)");
  platform::close_file(fd);
  return path;
}

}  // namespace

std::shared_ptr<const Model> open_model_for_decode(const std::string& path, const std::string& tokenizer_path,
                                                   const ProgressFn& progress, ConvertOptions::Layout layout,
                                                   P64Contents* contents) {
  const std::string kind = detect_model_format(path);
  if (kind == "p64") {
    if (contents) *contents = inspect_p64(path);
    return open_p64(path, progress);
  }
  if (kind.empty())
    throw Error(path + ": not a model this program reads (expected .p64, GGUF, a llama2.c checkpoint or a Hugging Face folder)");
  TempFile tmp{make_temp_p64(path)};
  ConvertOptions o;
  o.tokenizer_path = tokenizer_path;
  o.layout = layout;
  convert_to_p64(path, tmp.path, o, progress);
  try {
    if (contents) {
      *contents = inspect_p64(tmp.path);
      contents->path = path;
    }
    return open_p64(tmp.path);
  } catch (const Error& e) {
    // The temporary file is gone when the user reads this; the error is about their file.
    std::string message = e.what();
    for (size_t at; (at = message.find(tmp.path)) != std::string::npos;)
      message.replace(at, tmp.path.size(), path + " (converted)");
    throw Error(message);
  }
}

}  // namespace p64
