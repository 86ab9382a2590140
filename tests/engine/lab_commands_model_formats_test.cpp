// Every command that takes a model takes the formats generate and chat take (a GGUF, a llama2.c
// checkpoint with its tokenizer, a .p64), and an error about a converted file names the user's file.
#include <gtest/gtest.h>

#include "tests/engine/decode_test_models.h"
#include "tests/support/shared_files.h"

namespace p64 {
namespace {

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
