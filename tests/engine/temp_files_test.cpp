// Killed conversions left their temporary files behind for good (in /tmp for a model converted
// for decode, beside the target for convert's output). Each temporary file now carries its
// process id, and the next p64 to make one in that folder removes those of dead processes.
#include "engine/common/temp_files.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/atomic_output.h"
#include "engine/format/open_model.h"
#include "support/scoped_env.h"
#include "support/shared_files.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

// The id of a process that has exited and been reaped: no process has it now.
int dead_process_id() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return static_cast<int>(pid);
}

void touch(const fs::path& p) { std::ofstream(p) << "left by a killed process"; }

TEST(TempFiles, TheOwnerIsReadFromTheName) {
  EXPECT_EQ(temp_file_owner(".report.md.p64tmp-4242-a1B2c3"), 4242);
  EXPECT_EQ(temp_file_owner("model.gguf.p64tmp-7-zzzzzz.p64"), 7);
  EXPECT_EQ(temp_file_owner("report.md"), 0);
  EXPECT_EQ(temp_file_owner("x.p64tmp--abcdef"), 0);
  EXPECT_EQ(temp_file_owner("x.p64tmp-12-abc"), 0);  // not the six unique characters
  EXPECT_EQ(temp_file_owner("x.p64tmp-99999999999-abcdef"), 0);
}

TEST(TempFiles, TheNextOutputInAFolderRemovesTheStaleOnesOnly) {
  test::TempDir dir;
  const std::string dead = std::to_string(dead_process_id());
  const std::string mine = std::to_string(getpid());
  touch(dir / (".out.p64.p64tmp-" + dead + "-abc123"));       // a killed convert's output
  touch(dir / (".other.md.p64tmp-" + dead + "-xyz789"));      // another target's, same folder
  touch(dir / (".out.p64.p64tmp-" + mine + "-abc123"));       // this process's: still in use
  touch(dir / (".out.p64.p64tmp-1-abc123"));                  // a running process's
  touch(dir / "notes.txt");
  fs::create_directory(dir / ("folder.p64tmp-" + dead + "-abcdef"));  // never a folder
  write_file_atomically((dir / "report.md").string(), "# report\n", OutputPolicy{});
  std::vector<std::string> kept = {".out.p64.p64tmp-" + mine + "-abc123", ".out.p64.p64tmp-1-abc123",
                                    "folder.p64tmp-" + dead + "-abcdef", "notes.txt", "report.md"};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(test::names_in(dir.path()), kept);
}

TEST(TempFiles, AModelConvertedForDecodeIsMadeInTheCacheFolderWhichItCleans) {
  test::TempDir dir;
  const test::ScopedEnv cache("XDG_CACHE_HOME", (dir / "cache").string());
  const test::ScopedEnv tmp("TMPDIR", (dir / "tmp").string());
  fs::create_directory(dir / "tmp");
  ASSERT_EQ(p64_cache_dir(), dir / "cache" / "p64");
  const fs::path converted = dir / "cache" / "p64" / "converted";
  fs::create_directories(converted);
  const std::string stale = "stories260K.gguf.p64tmp-" + std::to_string(dead_process_id()) + "-q1w2e3.p64";
  touch(converted / stale);
  auto model = open_model_for_decode(test::shared_model("stories260K.gguf").string());
  ASSERT_TRUE(model);
  // the stale file removed; the conversion kept under its cache name, no temporary left
  const std::vector<std::string> left = test::names_in(converted);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].rfind("stories260K.gguf-", 0), 0u) << left[0];
  EXPECT_EQ(temp_file_owner(left[0]), 0) << left[0];
  EXPECT_TRUE(test::names_in(dir / "tmp").empty());
}

}  // namespace
}  // namespace p64
