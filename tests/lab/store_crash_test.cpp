// The store under crashes and a full disk. Writers run in forked children (their own SQLite
// connections); each child reports a run's id through a pipe only after write_run returned,
// i.e. after the commit. The parent SIGKILLs children at random moments and then checks that
// the database is intact and that every reported run is there whole.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/error.h"
#include "engine/lab/store.h"
#include "support/shared_files.h"
#include "support/store_checks.h"

namespace p64 {
namespace {

constexpr int kSamplesPerRun = 6;


RunBundle run_with_samples(const std::string& label, int n_samples, size_t notes_bytes = 0) {
  RunBundle b;
  b.run.kind = RunKind::DecodeProxy;
  b.run.backend = "toy";
  b.run.config = "backend=toy";
  b.run.label = label;
  b.run.summary_json = "{\"pad\":\"" + std::string(notes_bytes, 'n') + "\"}";
  b.passport = Passport{};
  b.passport->device.name = "toy device";
  b.passport->device.backend = "toy";
  for (int i = 0; i < n_samples; ++i) {
    SampleRecord s;
    s.rep = i;
    s.decode_tok_s = 50.0 + i;
    s.decode_tokens = 16;
    b.samples.push_back(s);
  }
  return b;
}

std::string integrity(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  std::string r = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return r;
}

// A child that writes runs until it is killed, sending each committed id down `fd`.
[[noreturn]] void write_runs_until_killed(const std::string& path, int fd, int writer) {
  try {
    auto store = Store::open(path, test::without_plan_history());
    for (int i = 0;; ++i) {
      const int64_t id = store->write_run(run_with_samples("w" + std::to_string(writer) + "-" + std::to_string(i), kSamplesPerRun));
      if (::write(fd, &id, sizeof id) != sizeof id) _exit(3);
    }
  } catch (...) {
    _exit(2);
  }
}

// Everything the writers of `fd` send until they have all closed it (or died).
std::string read_all(int fd) {
  std::string buf;
  char chunk[4096];
  ssize_t n;
  while ((n = ::read(fd, chunk, sizeof chunk)) > 0) buf.append(chunk, static_cast<size_t>(n));
  return buf;
}

// Reads every whole int64 the children sent before they died.
std::vector<int64_t> read_ids(int fd) {
  std::vector<int64_t> ids;
  const std::string buf = read_all(fd);
  for (size_t at = 0; at + sizeof(int64_t) <= buf.size(); at += sizeof(int64_t)) {
    int64_t id;
    std::memcpy(&id, buf.data() + at, sizeof id);
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

// Two writers at once per trial, each killed at its own random moment (while opening the
// store, inside a transaction, between commits), hundreds of times.
TEST(StoreCrash, SigkilledWritersNeverLoseACommittedRunOrCorruptTheStore) {
  test::TempDir dir;
  const std::string path = (dir / "lab.db").string();
  // The schema in place before the writers start; then how long a writer here takes to open the
  // store (which checks it) and commit one run, so the kills land around commits whatever the
  // build (sanitizers) or the machine's load.
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto store = Store::open(path, test::without_plan_history());
    store->write_run(run_with_samples("timing", kSamplesPerRun));
  }
  const auto first_commit_us =
      unsigned(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  constexpr int kTrials = 150, kMaxTrials = 600;
  constexpr size_t kEnoughReported = 30;
  std::mt19937 rng(20261202);
  std::set<int64_t> reported;
  int unfinished_children = 0;
  // Past kTrials the kill window widens until enough runs were reported committed.
  int trial = 0;
  for (; trial < kMaxTrials && (trial < kTrials || reported.size() <= kEnoughReported); ++trial) {
    const unsigned window_us = std::max(12000u, 3 * first_commit_us) * unsigned(1 + trial / kTrials);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t kids[2];
    for (int k = 0; k < 2; ++k) {
      kids[k] = fork();
      ASSERT_GE(kids[k], 0);
      if (kids[k] == 0) {
        ::close(fds[0]);
        write_runs_until_killed(path, fds[1], k);
      }
    }
    ::close(fds[1]);
    for (pid_t kid : kids) {
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % window_us));
      ::kill(kid, SIGKILL);
    }
    for (pid_t kid : kids) {
      int status = 0;
      ASSERT_EQ(waitpid(kid, &status, 0), kid);
      // A child that exited by itself hit an error: that is a failure, not a crash test.
      ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited with " << WEXITSTATUS(status) << " in trial " << trial;
      unfinished_children += WTERMSIG(status) == SIGKILL;
    }
    for (int64_t id : read_ids(fds[0])) reported.insert(id);
    ::close(fds[0]);
  }
  EXPECT_EQ(unfinished_children, 2 * trial);
  auto store = Store::open(path, test::without_plan_history());
  EXPECT_EQ(integrity(store->handle()), "ok");
  std::set<int64_t> stored;
  for (const auto& r : store->runs()) {
    stored.insert(r.id);
    EXPECT_EQ(store->samples(r.id).size(), static_cast<size_t>(kSamplesPerRun)) << "half-written run " << r.id;
  }
  for (int64_t id : reported) EXPECT_TRUE(stored.count(id)) << "committed run " << id << " was lost";
  // A run can be committed and its writer killed before it reported: at most one per child.
  EXPECT_LE(stored.size(), reported.size() + 2 * size_t(trial) + 1);  // + the timing run
  EXPECT_GT(reported.size(), kEnoughReported) << "the kills came too early to test anything";
  std::cout << "[ kill test ] " << trial << " trials x 2 writers, " << reported.size() << " runs reported committed, "
            << stored.size() << " stored, integrity ok\n";
}

// A file-size limit (RLIMIT_FSIZE, works anywhere without a mount): the write that does not
// fit fails with an error naming the store and the cause, and every run stored before it —
// the parent's and the child's own — is still there afterwards.
TEST(StoreCrash, FileSizeLimitGivesAClearErrorAndKeepsWhatWasStored) {
  test::TempDir dir;
  const std::string path = (dir / "lab.db").string();
  std::set<int64_t> before;
  {
    auto store = Store::open(path, test::without_plan_history());
    for (int i = 0; i < 20; ++i) before.insert(store->write_run(run_with_samples("before-" + std::to_string(i), 3)));
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t kid = fork();
  ASSERT_GE(kid, 0);
  if (kid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG instead of killing
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = 512 * 1024;
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(4);
    std::string message;
    int64_t committed = 0;
    try {
      auto store = Store::open(path, test::without_plan_history());
      for (int i = 0; i < 100000; ++i) {
        const int64_t id = store->write_run(run_with_samples("fill-" + std::to_string(i), 20, 8000));
        if (::write(fds[1], &id, sizeof id) != sizeof id) _exit(3);
        ++committed;
      }
      message = "never filled up";
    } catch (const Error& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("not a p64::Error: ") + e.what();
    }
    // The message goes last, after a zero id.
    const int64_t zero = 0;
    if (::write(fds[1], &zero, sizeof zero) != sizeof zero) _exit(3);
    if (::write(fds[1], message.data(), message.size()) < 0) _exit(3);
    _exit(committed > 0 ? 0 : 5);
  }
  ::close(fds[1]);
  const std::string buf = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(kid, &status, 0), kid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child stored nothing before the disk filled: " << buf.substr(std::min(buf.size(), buf.find(std::string(8, '\0'))));

  std::set<int64_t> child_committed;
  size_t at = 0;
  for (; at + 8 <= buf.size(); at += 8) {
    int64_t id;
    std::memcpy(&id, buf.data() + at, 8);
    if (id == 0) break;
    child_committed.insert(id);
  }
  const std::string message = buf.substr(at + 8);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("disk I/O error"), std::string::npos) << message;  // EFBIG, where a full disk says "full"
  EXPECT_NE(message.find("nothing of this write was stored"), std::string::npos) << message;

  auto store = Store::open(path, test::without_plan_history());
  EXPECT_EQ(integrity(store->handle()), "ok");
  std::set<int64_t> stored;
  for (const auto& r : store->runs()) stored.insert(r.id);
  for (int64_t id : before) EXPECT_TRUE(stored.count(id)) << "run " << id << " stored before the disk filled was lost";
  for (int64_t id : child_committed) EXPECT_TRUE(stored.count(id)) << "run " << id << " committed before the disk filled was lost";
  EXPECT_EQ(stored.size(), before.size() + child_committed.size());
  // With room again, the store takes new runs.
  EXPECT_GT(store->write_run(run_with_samples("after", 2)), 0);
  std::cout << "[ file-size limit ] " << child_committed.size() << " runs fitted, then: " << message << "\n";
}

// A real full disk: a 640 KiB tmpfs mounted in a private mount namespace of a forked child
// (a user namespace too when not root). The child does the whole scenario, since the mount
// lives only as long as it does, and reports through the pipe: runs stored before, runs that
// fitted, the error, then — after the tmpfs is grown again — what a fresh connection sees.
TEST(StoreCrash, FullDiskGivesAClearErrorAndKeepsWhatWasStored) {
  test::TempDir dir;
  const std::string mount_point = (dir / "disk").string();
  std::filesystem::create_directories(mount_point);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t kid = fork();
  ASSERT_GE(kid, 0);
  if (kid == 0) {
    ::close(fds[0]);
    auto say = [&](const std::string& line) {
      const std::string l = line + "\n";
      if (::write(fds[1], l.data(), l.size()) < 0) _exit(3);
    };
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWNS | (uid == 0 ? 0 : CLONE_NEWUSER)) != 0) {
      say(std::string("nomount unshare: ") + std::strerror(errno));
      _exit(0);
    }
    if (uid != 0) {  // become root of the new user namespace, which may mount a tmpfs
      std::ofstream("/proc/self/setgroups") << "deny";
      std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
      std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=640k") != 0) {
      say(std::string("nomount mount: ") + std::strerror(errno));
      _exit(0);
    }
    const std::string path = mount_point + "/lab.db";
    try {
      auto store = Store::open(path, test::without_plan_history());
      for (int i = 0; i < 10; ++i) say("before " + std::to_string(store->write_run(run_with_samples("before", 3))));
      try {
        for (int i = 0; i < 100000; ++i) say("fitted " + std::to_string(store->write_run(run_with_samples("fill", 20, 8000))));
        say("error never filled up");
      } catch (const Error& e) {
        std::string m = e.what();
        for (char& c : m) c = c == '\n' ? ' ' : c;
        say("error " + m);
      }
    } catch (const std::exception& e) {
      say(std::string("error before filling: ") + e.what());
      _exit(0);
    }
    // Space again (someone deleted files): a fresh connection sees every committed run.
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", MS_REMOUNT, "size=8m") != 0) {
      say(std::string("error remount: ") + std::strerror(errno));
      _exit(0);
    }
    try {
      auto store = Store::open(path, test::without_plan_history());
      say("integrity " + integrity(store->handle()));
      for (const auto& r : store->runs()) say("stored " + std::to_string(r.id));
    } catch (const std::exception& e) {
      say(std::string("reopen failed: ") + e.what());
    }
    _exit(0);
  }
  ::close(fds[1]);
  const std::string out = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(kid, &status, 0), kid);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  if (out.rfind("nomount", 0) == 0) GTEST_SKIP() << "cannot mount a tmpfs here (" << out.substr(0, out.find('\n'))
                                                 << "); the file-size-limit test covers the error path";
  std::set<int64_t> committed, stored;
  std::string error, integrity_result;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp), value = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "before" || key == "fitted") committed.insert(std::stoll(value));
    else if (key == "stored") stored.insert(std::stoll(value));
    else if (key == "error") error = value;
    else if (key == "integrity") integrity_result = value;
    else ADD_FAILURE() << line;
  }
  EXPECT_NE(error.find("lab.db"), std::string::npos) << error;
  EXPECT_NE(error.find("database or disk is full"), std::string::npos) << error;
  EXPECT_NE(error.find("nothing of this write was stored"), std::string::npos) << error;
  EXPECT_EQ(integrity_result, "ok");
  EXPECT_GE(committed.size(), 10u);
  EXPECT_EQ(stored, committed) << "a run committed before the disk filled was lost, or a failed one was kept";
  std::cout << "[ full disk ] " << committed.size() << " runs stored on a 640 KiB tmpfs, then: " << error << "\n";
}

}  // namespace p64
