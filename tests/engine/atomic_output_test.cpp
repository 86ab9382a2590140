// Outputs go through one atomic writer (engine/common/atomic_output.h): never over a device
// node, a folder, the store or an input of the same command, an existing file only when asked,
// and a failed write leaves the old file whole and nothing half-written under its name.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "decode_test_models.h"
#include "engine/common/atomic_output.h"
#include "engine/common/error.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Runs `body` in a forked child and returns what it returned (one line), or why it could not.
// `setup` runs in the child first; a non-empty result from it is returned instead of running body.
std::string in_child(const std::function<std::string()>& setup, const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t kid = fork();
  if (kid < 0) return "fork failed";
  if (kid == 0) {
    ::close(fds[0]);
    std::string out = setup();
    if (out.empty()) out = body();
    if (::write(fds[1], out.data(), out.size()) < 0) _exit(3);
    _exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  waitpid(kid, &status, 0);
  return out;
}

std::string big_text() { return std::string(256 * 1024, 'x'); }

}  // namespace

TEST(AtomicOutput, RefusesWhatIsNotARegularFileAndLeavesItAsItWas) {
  test::TempDir dir;
  const fs::path fifo = dir / "pipe", folder = dir / "folder", link = dir / "link";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directory(folder);
  write_text(dir / "target.txt", "target");
  fs::create_symlink(dir / "target.txt", link);
  for (const fs::path& p : {fifo, folder, link}) {
    const std::string e = test::error_of([&] { write_file_atomically(p.string(), "new", {}); });
    EXPECT_NE(e.find(p.string()), std::string::npos) << e;
    EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_directory(folder) && fs::is_empty(folder));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(test::read_text_file((dir / "target.txt").string()), "target");
  EXPECT_EQ(test::names_in(dir.path()), (std::vector<std::string>{"folder", "link", "pipe", "target.txt"}));
}

TEST(AtomicOutput, RefusesAnInputWhateverPathNamesIt) {
  test::TempDir dir;
  write_text(dir / "model.p64", "model bytes");
  fs::create_directory(dir / "sub");
  fs::create_hard_link(dir / "model.p64", dir / "hard.p64");
  OutputPolicy policy;
  policy.reads((dir / "model.p64").string(), "the model this command reads");
  for (const fs::path& p : {dir / "model.p64", dir / "sub" / ".." / "model.p64", dir / "hard.p64"}) {
    const std::string e = test::error_of([&] { write_file_atomically(p.string(), "new", policy); });
    EXPECT_NE(e.find(p.string()), std::string::npos) << e;
    EXPECT_NE(e.find("the model this command reads"), std::string::npos) << e;
  }
  EXPECT_EQ(test::read_text_file((dir / "model.p64").string()), "model bytes");
}

TEST(AtomicOutput, AnExistingFileIsReplacedOnlyWhenThePolicySays) {
  test::TempDir dir;
  const std::string p = (dir / "out.txt").string();
  OutputPolicy keep;
  keep.replace_existing = false;
  write_file_atomically(p, "first", keep);  // a new file needs no permission
  const std::string e = test::error_of([&] { write_file_atomically(p, "second", keep); });
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("--force"), std::string::npos) << e;
  EXPECT_EQ(test::read_text_file(p), "first");
  write_file_atomically(p, "second", {});
  EXPECT_EQ(test::read_text_file(p), "second");
  EXPECT_EQ(test::names_in(dir.path()), std::vector<std::string>{"out.txt"});
}

// A write that fails halfway (the file-size limit: EFBIG, no mount needed) leaves the old file
// whole and no temporary file beside it.
TEST(AtomicOutput, AFailedWriteKeepsTheOldFileAndLeavesNothingHalfWritten) {
  test::TempDir dir;
  const std::string p = (dir / "report.html").string();
  write_text(p, "old report");
  const std::string out = in_child(
      [] {
        ::signal(SIGXFSZ, SIG_IGN);  // past the limit a write fails with EFBIG instead of killing
        rlimit lim{};
        lim.rlim_cur = lim.rlim_max = 64 * 1024;
        return ::setrlimit(RLIMIT_FSIZE, &lim) == 0 ? std::string() : std::string("nolimit");
      },
      [&] { return "error " + test::error_of([&] { write_file_atomically(p, big_text(), {}); }); });
  EXPECT_NE(out.find("error " + p + ": write failed"), std::string::npos) << out;
  EXPECT_EQ(test::read_text_file(p), "old report");
  EXPECT_EQ(test::names_in(dir.path()), std::vector<std::string>{"report.html"});
}

// A real full disk: a 64 KiB tmpfs in a private mount namespace of a forked child.
TEST(AtomicOutput, AFullDiskKeepsTheOldFileAndLeavesNothingHalfWritten) {
  test::TempDir dir;
  const std::string mount_point = (dir / "disk").string();
  fs::create_directories(mount_point);
  const std::string p = mount_point + "/report.html";
  const std::string out = in_child(
      [&] {
        if (::getuid() != 0) return std::string("nomount: not root");
        if (::unshare(CLONE_NEWNS) != 0) return std::string("nomount unshare: ") + std::strerror(errno);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0)
          return std::string("nomount mount: ") + std::strerror(errno);
        return std::string();
      },
      [&] {
        write_text(p, "old report");
        const std::string e = test::error_of([&] { write_file_atomically(p, big_text(), {}); });
        std::string names;
        for (const auto& n : test::names_in(mount_point)) names += n + ",";
        return "error " + e + "|content " + test::read_text_file(p) + "|files " + names;
      });
  if (out.rfind("nomount", 0) == 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (" << out << "); the file-size-limit test covers the error path";
  EXPECT_NE(out.find("error " + p + ": disk full"), std::string::npos) << out;
  EXPECT_NE(out.find("|content old report|"), std::string::npos) << out;
  EXPECT_NE(out.find("|files report.html,"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.find("|files ")), "|files report.html,") << out;
}

// The commands: report, convert, synth and timeline refuse the same targets and say why.
TEST(OutputsCli, ReportNeverReplacesItsStoreAndAnExistingFileOnlyWithForce) {
  test::TempDir dir;
  const std::string db = (dir / "v.db").string(), out = (dir / "scoreboard.md").string();
  ASSERT_EQ(test::run_p64("report --db " + db).status, 0);  // makes the store
  const std::string before = test::read_text_file(db);
  const test::CliRun over_store = test::run_p64("report --db " + db + " -o " + db + " --force");
  EXPECT_NE(over_store.status, 0);
  EXPECT_EQ(over_store.err.rfind("p64: ", 0), 0u) << over_store.err;
  EXPECT_NE(over_store.err.find(db + ": is the lab store"), std::string::npos) << over_store.err;
  EXPECT_EQ(test::read_text_file(db), before);

  ASSERT_EQ(test::run_p64("report --db " + db + " -o " + out).status, 0);
  const std::string report = test::read_text_file(out);
  write_text(out, "kept");
  const test::CliRun again = test::run_p64("report --db " + db + " -o " + out);
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.err.find(out + ": already exists; pass --force"), std::string::npos) << again.err;
  EXPECT_EQ(test::read_text_file(out), "kept");
  ASSERT_EQ(test::run_p64("report --db " + db + " -o " + out + " --force").status, 0);
  // The two reports differ only in their "Generated <time>" line, which may cross a second.
  const auto without_time = [](std::string text) {
    const std::size_t at = text.find("Generated ");
    if (at != std::string::npos) text.erase(at, text.find('\n', at) - at);
    return text;
  };
  EXPECT_EQ(without_time(test::read_text_file(out)), without_time(report));
  EXPECT_NE(without_time(report).find("## Scoreboard"), std::string::npos) << report;
}

TEST(OutputsCli, ConvertAndTimelineNeverWriteOverTheirInputOrADeviceNode) {
  test::TempDir dir;
  const std::string model = (dir / "base.p64").string();
  ASSERT_EQ(test::run_p64("convert -q " + test::stories260k_p64() + " " + model).status, 0);
  const std::string bytes = test::read_text_file(model);

  const test::CliRun onto_input = test::run_p64("convert -q " + model + " " + model + " --force --cpu-rows");
  EXPECT_NE(onto_input.status, 0);
  EXPECT_NE(onto_input.err.find(model + ": is the model being converted"), std::string::npos) << onto_input.err;
  const test::CliRun trace = test::run_p64("timeline " + model + " --backend cpu --no-store --force --trace " + model);
  EXPECT_NE(trace.status, 0);
  EXPECT_NE(trace.err.find(model + ": is the model this command reads"), std::string::npos) << trace.err;
  EXPECT_EQ(test::read_text_file(model), bytes);

  const test::CliRun twice = test::run_p64("convert -q " + test::stories260k_p64() + " " + model);
  EXPECT_NE(twice.status, 0);
  EXPECT_NE(twice.err.find("--force"), std::string::npos) << twice.err;
  EXPECT_EQ(test::run_p64("convert -q " + test::stories260k_p64() + " " + model + " --force").status, 0);

  // `mknod dev/null c 1 3`: a copy of /dev/null's device node under a relative path.
  fs::create_directory(dir / "dev");
  const fs::path node = dir / "dev" / "null";
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod: " << std::strerror(errno) << " (needs root)";
  const test::CliRun onto_node = test::run_p64("convert -q " + model + " " + node.string() + " --force");
  EXPECT_NE(onto_node.status, 0);
  EXPECT_NE(onto_node.err.find(node.string() + ": is a character device"), std::string::npos) << onto_node.err;
  struct stat st {};
  ASSERT_EQ(::lstat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(test::names_in(dir / "dev"), std::vector<std::string>{"null"});
}

TEST(OutputsCli, SynthNeedsForceToReplaceAFile) {
  test::TempDir dir;
  const std::string out = (dir / "tiny.gguf").string();
  write_text(out, "kept");
  const test::CliRun r = test::run_p64("synth --preset tiny --quant Q8_0 -q -o " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(out + ": already exists; pass --force"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_text_file(out), "kept");
  ASSERT_EQ(test::run_p64("synth --preset tiny --quant Q8_0 -q --force -o " + out).status, 0);
  EXPECT_GT(fs::file_size(out), 1000u);
  EXPECT_EQ(test::names_in(dir.path()), std::vector<std::string>{"tiny.gguf"});
}
