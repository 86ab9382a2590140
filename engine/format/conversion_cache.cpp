#include "engine/format/conversion_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/temp_files.h"
#include "engine/format/p64_format.h"
#include "p64/build_info.h"

namespace p64 {
namespace fs = std::filesystem;

namespace {

// FNV-1a over everything that decides what a conversion produces.
struct KeyHash {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\0", 1);
  }
  void add(uint64_t v) { add(&v, sizeof v); }
};

// Each file the input consists of: its name under the input, size and modification time.
// False for anything but regular files and folders of them (a FIFO, a device): those are not
// kept, and the conversion's own checks name them.
bool add_file(KeyHash& k, const fs::path& f, const std::string& name) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return false;
  const uint64_t size = fs::file_size(f, ec);
  if (ec) return false;
  const auto mtime = fs::last_write_time(f, ec);
  if (ec) return false;
  k.add(name);
  k.add(size);
  k.add(uint64_t(mtime.time_since_epoch().count()));
  return true;
}
bool add_files(KeyHash& k, const fs::path& input) {
  std::error_code ec;
  if (!fs::is_directory(input, ec)) return add_file(k, input, "");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(input, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec)) continue;
    files.push_back(it->path());
  }
  if (ec) return false;
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files)
    if (!add_file(k, f, fs::relative(f, input, ec).generic_string())) return false;
  return true;
}

bool is_entry(const fs::directory_entry& e) {
  return e.is_regular_file() && e.path().extension() == ".p64" && temp_file_owner(e.path().filename().string()) == 0;
}

}  // namespace

fs::path converted_cache_path(const std::string& input, const std::string& tokenizer, int layout) {
  KeyHash k;
  std::error_code ec;
  k.add(fs::weakly_canonical(input, ec).string());
  if (ec || !add_files(k, input)) return {};
  if (!tokenizer.empty()) {
    k.add(fs::weakly_canonical(tokenizer, ec).string());
    if (ec || !add_files(k, tokenizer)) return {};
  }
  k.add(uint64_t(layout));
  // the container version and the converter that wrote it: a new build converts again
  k.add(uint64_t(kP64Version));
  k.add(std::string(build::version) + "+" + build::git_revision);
  std::string stem = fs::path(input).filename().string();
  if (stem.empty()) stem = fs::path(input).parent_path().filename().string();
  if (stem.empty()) stem = "model";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(k.h));
  return p64_cache_dir() / "converted" / (stem + "-" + hex + ".p64");
}

uint64_t converted_cache_budget() {
  const char* v = std::getenv("P64_CONVERTED_CACHE_MB");
  if (!v || !*v) return uint64_t(8192) << 20;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  if (*end != '\0' || v[0] == '-' || mb > (uint64_t(1) << 30))
    throw Error(std::string("P64_CONVERTED_CACHE_MB='") + v + "' is not a number of megabytes (0.." +
                std::to_string(uint64_t(1) << 30) + ")");
  return uint64_t(mb) << 20;
}

void trim_converted_cache(const fs::path& dir, uint64_t budget, const fs::path& keep) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!is_entry(e)) continue;
    Entry en{e.path(), e.last_write_time(ec), e.file_size(ec)};
    if (ec) continue;
    total += en.bytes;
    entries.push_back(std::move(en));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= budget) break;
    if (fs::equivalent(e.path, keep, ec)) continue;
    if (fs::remove(e.path, ec)) total -= e.bytes;
  }
}

}  // namespace p64
