#include "engine/common/atomic_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/common/platform.h"
#include "engine/common/temp_files.h"

namespace p64 {
namespace fs = std::filesystem;
namespace {

std::string free_space_text(const std::string& dir) {
  std::error_code ec;
  const fs::space_info s = fs::space(dir, ec);
  if (ec) return "";
  return " (" + std::to_string(static_cast<uint64_t>(s.available)) + " bytes free there)";
}

}  // namespace

OutputPolicy& OutputPolicy::reads(std::string path, std::string what) {
  if (!path.empty()) inputs.push_back({std::move(path), std::move(what)});
  return *this;
}

void check_output_path(const std::string& path, const OutputPolicy& policy) {
  if (path.empty()) throw Error("no output path given");
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (st.type() == fs::file_type::not_found) return;
  if (ec) throw Error(path + ": cannot check the output path: " + ec.message());
  if (st.type() != fs::file_type::regular)
    throw Error(path + ": is " + file_type_text(st.type()) + ", not a regular file; refusing to write the output over it");
  for (const auto& in : policy.inputs) {
    std::error_code eq;
    if (fs::equivalent(path, in.path, eq))  // the input's own name too when another path reaches it
      throw Error(path + ": is " + in.what + (in.path == path ? "" : " (" + in.path + ")") +
                  "; refusing to write the output over it");
  }
  if (!policy.replace_existing) throw Error(path + ": already exists; pass --force to replace it");
}

AtomicOutput::AtomicOutput(std::string path, OutputPolicy policy) : path_(std::move(path)), policy_(std::move(policy)) {
  check_output_path(path_, policy_);
  const fs::path t(path_);
  dir_ = t.has_parent_path() ? t.parent_path().string() : std::string(".");
  fd_ = create_temp_file(dir_, "." + t.filename().string(), "", tmp_, /*shared_read=*/true);
  if (fd_ < 0) throw Error(path_ + ": cannot create a temporary file in " + dir_ + ": " + std::strerror(errno));
}

AtomicOutput::~AtomicOutput() {
  if (fd_ >= 0) platform::close_file(fd_);
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicOutput::reserve(uint64_t size) {
  const int rc = platform::reserve_file(fd_, size);
  if (platform::is_disk_full_error(rc))
    throw Error(path_ + ": not enough disk space for " + std::to_string(size) + " bytes" + free_space_text(dir_));
  if (rc != 0) throw Error(path_ + ": cannot size the output to " + std::to_string(size) + " bytes: " + std::strerror(rc));
}

void AtomicOutput::write_at(uint64_t offset, const void* data, uint64_t n, std::string_view what) const {
  const auto* p = static_cast<const uint8_t*>(data);
  const std::string part = what.empty() ? std::string() : " (" + std::string(what) + ")";
  while (n > 0) {
    const int64_t w = platform::write_at(fd_, p, n, offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = w < 0 ? errno : ENOSPC;
      if (platform::is_disk_full_error(e)) throw Error(path_ + ": disk full while writing" + part + free_space_text(dir_));
      throw Error(path_ + ": write failed at offset " + std::to_string(offset) + part + ": " + std::strerror(e));
    }
    p += w;
    n -= static_cast<uint64_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

void AtomicOutput::append(std::string_view bytes) {
  write_at(appended_, bytes.data(), bytes.size());
  appended_ += bytes.size();
}

void AtomicOutput::commit(bool sync) {
  if (sync && !platform::sync_to_disk(fd_)) throw Error(path_ + ": fsync failed: " + std::strerror(errno));
  const int rc = platform::close_file(fd_);
  fd_ = -1;
  if (rc != 0) throw Error(path_ + ": close failed: " + std::strerror(errno));
  check_output_path(path_, policy_);  // the target may have changed while the output was written
  std::error_code ec;  // std::filesystem::rename replaces an existing target on Windows too
  fs::rename(tmp_, path_, ec);
  if (ec) throw Error(path_ + ": cannot rename the finished file into place: " + ec.message());
  committed_ = true;
  if (sync) platform::sync_directory(dir_);  // the rename itself; the file is complete either way
}

void write_file_atomically(const std::string& path, std::string_view bytes, const OutputPolicy& policy) {
  AtomicOutput out(path, policy);
  out.append(bytes);
  out.commit();
}

}  // namespace p64
