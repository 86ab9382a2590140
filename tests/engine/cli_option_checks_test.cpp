// Flags are checked when they are parsed: a thread count above the machine's limit, a negative
// one, and a sampler setting that is NaN, infinite or out of its range end the command before
// any work, with an error that starts with `p64:`, names the flag and leaves no file behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "decode_test_models.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

// What --threads accepts at most here: 4 per hardware thread (app/cli/option_checks.cpp).
unsigned thread_limit() { return 4 * std::max(1u, std::thread::hardware_concurrency()); }

void expect_refused(const std::string& args, const std::string& flag, const std::string& value) {
  const test::CliRun r = test::run_p64(args, "", 60);
  EXPECT_NE(r.status, 0) << args;
  EXPECT_EQ(r.err.rfind("p64: " + flag + ": ", 0), 0u) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(value), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(r.out, "") << args;
}

}  // namespace

TEST(CliOptionChecks, ThreadsAboveTheLimitOrNegativeAreRefusedByEveryCommandThatTakesThem) {
  test::TempDir dir;
  // Each command is also given an input it fails on after parsing and before it starts a
  // thread (a text file as the model, an unknown preset), so that a build without the check
  // fails this test with another error instead of starting 2147483648 threads.
  const std::string not_model = test::shared_model("PROVENANCE.md").string(), db = (dir / "lab.db").string();
  const std::vector<std::string> commands = {
      "generate --model " + not_model + " --backend cpu --temp 0 --tokens 4",
      "chat --model " + not_model + " --backend cpu --temp 0 --tokens 4",
      "timeline " + not_model + " --backend cpu --tokens 2 --db " + db,
      "decode-proxy " + not_model + " --backend cpu --tokens 2 --runs 1 --warmup 0 --db " + db,
      "compare " + not_model + " --backend cpu --tokens 4",
      "bench-cpu --synth no-such-preset:Q8_0 --dir " + (dir / "bench").string() + " --rounds 1",
      "synth --preset no-such-preset --quant Q8_0 -q -o " + (dir / "tiny.gguf").string(),
  };
  const std::string limit = std::to_string(thread_limit());
  for (const std::string& cmd : commands) {
    for (const std::string& v : {std::to_string(thread_limit() + 1), std::string("10000"), std::string("2147483648"),
                                 std::string("-1"), std::string("many")}) {
      expect_refused(cmd + " --threads=" + v, "--threads", v);
    }
    const test::CliRun over = test::run_p64(cmd + " --threads 10000", "", 60);
    EXPECT_NE(over.err.find(limit), std::string::npos) << over.err;  // the error says the limit
    const test::CliRun help = test::run_p64(cmd + " --help");
    EXPECT_NE(help.out.find("at most " + limit), std::string::npos) << cmd << "\n" << help.out;
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));  // no store, no bench folder, no synth output
}

TEST(CliOptionChecks, ThreadsAtTheLimitStillRun) {
  const test::CliRun r = test::run_p64("generate --model " + test::stories260k_p64() + " --backend cpu --temp 0 --tokens 4 --threads " +
                                       std::to_string(thread_limit()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

TEST(CliOptionChecks, SamplerSettingsOutsideTheirRangeOrNotFiniteAreRefused) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {"--temp", {"nan", "inf", "-inf", "-0.5", "NaN"}},
      {"--top-p", {"nan", "inf", "0", "-0.1", "1.5"}},
      {"--min-p", {"nan", "inf", "-0.1", "2"}},
      {"--repeat-penalty", {"nan", "inf", "0", "-1"}},
      {"--top-k", {"-5", "nan"}},
      {"--repeat-last-n", {"-2"}},
  };
  for (const std::string& cmd : {std::string("generate"), std::string("chat")}) {
    const std::string base = cmd + " --model " + test::stories260k_p64() + " --backend cpu --tokens 4 ";
    for (const auto& [flag, values] : bad)
      for (const std::string& v : values) expect_refused(base + flag + "=" + v, flag, v);
  }
}

TEST(CliOptionChecks, SamplerSettingsAtTheEdgesOfTheirRangeRun) {
  const test::CliRun r = test::run_p64("generate --model " + test::stories260k_p64() +
                                       " --backend cpu --tokens 4 --temp 0 --top-p 1 --min-p 0 --top-k 0 --repeat-penalty 1"
                                       " --repeat-last-n -1");
  EXPECT_EQ(r.status, 0) << r.err;
  const test::CliRun s = test::run_p64("generate --model " + test::stories260k_p64() +
                                       " --backend cpu --tokens 4 --temp 1.5 --top-p 0.5 --min-p 1 --top-k 3 --repeat-penalty 0.5"
                                       " --repeat-last-n 0 --seed 7");
  EXPECT_EQ(s.status, 0) << s.err;
}
