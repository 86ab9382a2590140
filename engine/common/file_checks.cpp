#include "engine/common/file_checks.h"

#include <system_error>

#include "engine/common/error.h"

namespace p64 {
namespace fs = std::filesystem;

const char* file_type_text(fs::file_type t) {
  switch (t) {
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::directory: return "a folder";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

void check_input_file(const std::string& path, const std::string& folder) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw Error(path + ": no such file");
  if (ec) throw Error(path + ": cannot check the file: " + ec.message());
  if (st.type() != fs::file_type::regular)
    throw Error(path + ": is " + file_type_text(st.type()) + ", not a regular file; refusing to read it");
  if (folder.empty()) return;
  const fs::path real = fs::canonical(path, ec);
  std::error_code ed;
  const fs::path real_folder = fs::canonical(folder, ed);
  if (ec || ed) throw Error(path + ": cannot resolve the path: " + (ec ? ec : ed).message());
  const fs::path rel = real.lexically_relative(real_folder);
  if (rel.empty() || *rel.begin() == "..")
    throw Error(path + ": leads out of the model folder " + folder + " (to " + real.string() + "); refusing to read it");
}

}  // namespace p64
