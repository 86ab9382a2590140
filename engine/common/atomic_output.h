#pragma once
// The one way the engine and the CLI write an output file (a converted model, a report, a
// trace): a temporary file in the target's folder (named for this process, so one left by a
// killed process is removed by the next: temp_files.h), written, flushed to the disk, then
// renamed over the target. A failed or cancelled write leaves the old file as it was and nothing
// half-written under the final name. Before anything is written the target is checked against
// an OutputPolicy, so an output never lands on a device node, a folder, the lab store the
// command reads or one of its input files.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace p64 {

struct OutputPolicy {
  // An existing regular file may be replaced. The CLI sets it from --force; a library caller
  // that chose the path (a file dialog that asked, a fresh temporary name) leaves it on.
  bool replace_existing = true;
  // Files the command reads, with what they are ("the lab store this command reads"): the
  // output is never one of them, whichever path names it (compared as files, not as strings).
  struct Input {
    std::string path;
    std::string what;
  };
  std::vector<Input> inputs;

  OutputPolicy& reads(std::string path, std::string what);  // adds an input; empty paths are skipped
};

// Throws p64::Error naming `path` when the policy forbids writing there: it exists and is not
// a regular file (device node, FIFO, folder, symbolic link), it is one of the inputs, or it
// exists and replace_existing is off. Commands call it before long work; AtomicOutput calls it too.
void check_output_path(const std::string& path, const OutputPolicy& policy);

class AtomicOutput {
 public:
  // Checks the target and creates the temporary file beside it.
  AtomicOutput(std::string path, OutputPolicy policy);
  ~AtomicOutput();  // removes the temporary file unless commit() put it in place
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // Claims `size` bytes on the disk now, so a full disk is one clear error before any work.
  void reserve(uint64_t size);
  // Writes all n bytes at `offset` (safe from several threads on disjoint ranges). `what`
  // names the part being written in the error message.
  void write_at(uint64_t offset, const void* p, uint64_t n, std::string_view what = {}) const;
  void append(std::string_view bytes);  // at the end of what append() wrote so far
  // fsync (when `sync`), close, check the target again and rename the temporary file over it.
  void commit(bool sync = true);

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return tmp_; }

 private:
  std::string path_, dir_, tmp_;
  OutputPolicy policy_;
  int fd_ = -1;
  uint64_t appended_ = 0;
  bool committed_ = false;
};

// The whole of `bytes` to `path` through an AtomicOutput.
void write_file_atomically(const std::string& path, std::string_view bytes, const OutputPolicy& policy);

}  // namespace p64
