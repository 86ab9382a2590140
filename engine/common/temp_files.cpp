#include "engine/common/temp_files.h"

#include <cstdlib>
#include <system_error>

#include "engine/common/platform.h"

namespace p64 {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kTag = ".p64tmp-";
constexpr size_t kUniqueChars = 6;  // the XXXXXX create_unique_file fills in

}  // namespace

fs::path p64_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "p64";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "p64";
  std::error_code ec;
  return fs::temp_directory_path(ec) / "p64-cache";
}

int temp_file_owner(std::string_view name) {
  const size_t tag = name.rfind(kTag);
  if (tag == std::string_view::npos) return 0;
  size_t i = tag + kTag.size();
  long long pid = 0;
  const size_t digits_at = i;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i - digits_at < 10; ++i) pid = pid * 10 + (name[i] - '0');
  if (i == digits_at || i >= name.size() || name[i] != '-' || name.size() - (i + 1) < kUniqueChars) return 0;
  return pid > 0 && pid <= 0x7FFFFFFF ? static_cast<int>(pid) : 0;
}

int remove_stale_temp_files(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int owner = temp_file_owner(it->path().filename().string());
    if (owner == 0 || owner == platform::process_id() || platform::process_running(owner)) continue;
    std::error_code st;
    if (!fs::is_regular_file(fs::symlink_status(it->path(), st))) continue;  // never a link or a folder
    if (fs::remove(it->path(), st)) ++removed;
  }
  return removed;
}

int create_temp_file(const fs::path& dir, std::string_view stem, std::string_view suffix, std::string& path,
                     bool shared_read) {
  remove_stale_temp_files(dir);
  path = (dir / (std::string(stem) + std::string(kTag) + std::to_string(platform::process_id()) + "-" +
                 std::string(kUniqueChars, 'X') + std::string(suffix)))
             .string();
  return platform::create_unique_file(path, static_cast<int>(suffix.size()), shared_read);
}

}  // namespace p64
