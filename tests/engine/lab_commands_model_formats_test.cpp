// Every command that takes a model takes the formats generate and chat take (a GGUF, a llama2.c
// checkpoint with its tokenizer, a .p64), and an error about a converted file names the user's file.
#include <gtest/gtest.h>

#include "tests/engine/decode_test_models.h"
#include "tests/support/shared_files.h"

namespace p64 {
namespace {

// `p64 timeline` prints each op's spread over the decode steps under its top ops: median, min,
// max and max/min of a span, and for ops inside blocks the fastest and slowest layer.
void expect_spread_table(const std::string& out) {
  const size_t head = out.find("op spread");
  ASSERT_NE(head, std::string::npos) << out;
  EXPECT_NE(out.find("max/min", head), std::string::npos) << out;
  const size_t gate_up = out.find("\n  gate_up ", head);
  ASSERT_NE(gate_up, std::string::npos) << out;
  const std::string line = out.substr(gate_up + 1, out.find('\n', gate_up + 1) - gate_up - 1);
  EXPECT_NE(line.find("FFN"), std::string::npos) << line;
  EXPECT_NE(line.find("(L"), std::string::npos) << "the fastest and slowest layer: " << line;
}

TEST(LabCommandsModelFormats, DecodeProxyTimelineAbAndCompareReadAGgufAndALlama2cCheckpoint) {
  const std::string gguf = test::shared_model("stories260K.gguf").string();
  const std::string llama2c = test::shared_model("stories260K.bin").string() + " --tokenizer " +
                              test::shared_model("tok512.bin").string();
  // Each command measures the passport's bandwidth first, so the llama2.c form is checked once.
  const std::vector<std::string> commands = {
      "decode-proxy " + gguf + " --backend cpu --tokens 4 --runs 2 --warmup 0 --no-store",
      "timeline " + gguf + " --backend cpu --tokens 4 --no-store",
      "ab " + gguf + " --b backend=cpu,opt.kv_f16=1 --tokens 4 --runs 2 --no-store",
      "compare " + gguf + " --backend cpu --tokens 4 --greedy 4",
      "decode-proxy " + llama2c + " --backend cpu --tokens 4 --runs 2 --warmup 0 --no-store"};
  for (const std::string& cmd : commands) {
    const test::CliRun r = test::run_p64(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
    EXPECT_EQ(r.err.find("not a P64 file"), std::string::npos) << cmd << "\n" << r.err;
    if (cmd.rfind("timeline ", 0) == 0) expect_spread_table(r.out);
  }
}

TEST(LabCommandsModelFormats, AVocabularyOnlyGgufIsNamedNotItsTemporaryConversion) {
  const std::string vocab_only = test::shared_model("ggml-vocab-deepseek-coder.gguf").string();
  const test::CliRun r = test::run_p64("decode-proxy " + vocab_only + " --backend cpu --no-store");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(vocab_only), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".p64"), std::string::npos) << "names the temporary conversion: " << r.err;
}

}  // namespace
}  // namespace p64
