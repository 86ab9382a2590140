#include "engine/format/open_model.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "engine/common/error.h"
#include "engine/common/platform.h"
#include "engine/common/temp_files.h"
#include "engine/format/conversion_cache.h"
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

// Opens a converted model; errors name the user's file rather than the cache entry.
std::shared_ptr<const Model> open_converted(const std::string& user_path, const fs::path& p64_path,
                                            P64Contents* contents) {
  try {
    if (contents) {
      *contents = inspect_p64(p64_path.string());
      contents->path = user_path;
    }
    return open_p64(p64_path.string());
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string tmp = p64_path.string();
    for (size_t at; (at = message.find(tmp)) != std::string::npos;)
      message.replace(at, tmp.size(), user_path + " (converted)");
    throw Error(message);
  }
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
  const fs::path kept = converted_cache_path(path, tokenizer_path, int(layout));
  const uint64_t budget = kept.empty() ? 0 : converted_cache_budget();
  const fs::path dir = p64_cache_dir() / "converted";
  std::error_code ec;
  if (budget > 0 && fs::is_regular_file(kept, ec)) {
    try {
      auto model = open_converted(path, kept, contents);
      fs::last_write_time(kept, fs::file_time_type::clock::now(), ec);  // most recently used
      return model;
    } catch (const Error&) {
      fs::remove(kept, ec);  // damaged or cut short: converted again below
    }
  }
  // In the p64 cache folder rather than the system's temp folder: often a RAM disk too small
  // for a converted model, and one a killed conversion's file would be left in.
  fs::create_directories(dir, ec);
  std::string tmp_path;
  std::string stem = fs::path(path).filename().string();
  const int fd = create_temp_file(dir, stem.empty() ? "model" : stem, ".p64", tmp_path);
  if (fd < 0)
    throw Error(path + ": cannot create a temporary .p64 in " + dir.string() + ": " + std::strerror(errno) +
                " (XDG_CACHE_HOME chooses another folder)");
  platform::close_file(fd);
  TempFile tmp{tmp_path};
  ConvertOptions o;
  o.tokenizer_path = tokenizer_path;
  o.layout = layout;
  convert_to_p64(path, tmp.path, o, progress);
  if (budget == 0) return open_converted(path, tmp.path, contents);  // mapped, then the name goes
  // Complete before it gets its name, so a reader never maps half a conversion.
  fs::rename(tmp.path, kept, ec);
  if (ec) return open_converted(path, tmp.path, contents);
  tmp.path.clear();
  trim_converted_cache(dir, budget, kept);
  return open_converted(path, kept, contents);
}

}  // namespace p64
