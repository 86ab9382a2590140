// `p64 generate` and `p64 chat` end to end through the binary.
#include <gtest/gtest.h>

#include <regex>

#include "decode_test_models.h"
#include "engine/common/cpu_isa.h"

using namespace p64;

namespace {

std::vector<int> reused_counts(const std::string& err) {
  std::vector<int> v;
  const std::regex re(R"(\[prompt \d+ tokens \((\d+) reused\))");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it)
    v.push_back(std::stoi((*it)[1]));
  return v;
}

}  // namespace

TEST(GenerateCli, Stories260KGreedyFromP64MatchesRunC) {
  const test::CliRun r =
      test::run_p64("generate --model " + test::stories260k_p64() + " --backend cpu --threads 2 --temp 0 --tokens 256");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, test::stories260k_reference_text() + "\n");
  EXPECT_NE(r.err.find("prompt 1 tokens (0 reused), generated 256 tokens, prefill "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("decode "), std::string::npos) << r.err;
}

TEST(GenerateCli, Stories260KFromTheLlama2cCheckpointDirectly) {
  const test::CliRun r = test::run_p64("generate --model " + test::shared_model("stories260K.bin").string() +
                                       " --tokenizer " + test::shared_model("tok512.bin").string() +
                                       " --backend cpu --temp 0 --tokens 256");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, test::stories260k_reference_text() + "\n");
}

// The trained stories260K weights quantized to Q8_0: the plain file and its --cpu-rows form give
// the same greedy text on the CPU, and only the plain one gets the hint to convert.
TEST(GenerateCli, CpuRowsFileGeneratesTheSameTextAndPlainOneGetsAHint) {
  const std::string plain = (test::decode_models_dir() / "stories260K-q8_0.p64").string();
  const std::string rows = (test::decode_models_dir() / "stories260K-q8_0-cpu-rows.p64").string();
  ASSERT_EQ(test::run_p64("convert -q " + test::stories260k_p64() + " " + plain + " --quant Q8_0").status, 0);
  ASSERT_EQ(test::run_p64("convert -q " + plain + " " + rows + " --cpu-rows").status, 0);
  const std::string args = " --backend cpu --temp 0 --tokens 64 --prompt \"Once upon a time\"";
  const test::CliRun a = test::run_p64("generate --model " + plain + args);
  const test::CliRun b = test::run_p64("generate --model " + rows + args);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_GT(a.out.size(), std::string("Once upon a time\n").size());
  EXPECT_EQ(a.err.find("--cpu-rows") != std::string::npos, has_interleaved_kernels()) << a.err;
  EXPECT_EQ(b.err.find("--cpu-rows"), std::string::npos) << b.err;
}

TEST(GenerateCli, PromptIsEchoedAndContinued) {
  const test::CliRun r = test::run_p64("generate --model " + test::stories260k_p64() +
                                       " --backend cpu --temp 0 --tokens 16 --prompt \"Once upon a time\"");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  EXPECT_GT(r.out.size(), std::string("Once upon a time\n").size());
  EXPECT_NE(r.err.find("generated 16 tokens"), std::string::npos) << r.err;
}

TEST(GenerateCli, BadInputIsNamed) {
  const test::CliRun missing_tok =
      test::run_p64("generate --model " + test::shared_model("stories260K.bin").string() + " --backend cpu");
  EXPECT_NE(missing_tok.status, 0);
  EXPECT_NE(missing_tok.err.find("stories260K.bin"), std::string::npos) << missing_tok.err;
  EXPECT_NE(missing_tok.err.find("--tokenizer"), std::string::npos) << missing_tok.err;
  const test::CliRun not_model = test::run_p64("generate --model " + test::shared_model("PROVENANCE.md").string());
  EXPECT_NE(not_model.status, 0);
  EXPECT_NE(not_model.err.find("PROVENANCE.md"), std::string::npos) << not_model.err;
}

TEST(ChatCli, PipedTurnsResetAndQuit) {
  const std::string args = "chat --model " + test::stories260k_p64() + " --backend cpu --temp 0 --tokens 12";
  const test::CliRun r = test::run_p64(args, "Tell me a story.\nAnd then?\n/reset\nTell me a story.\n/quit\nNever answered\n");
  ASSERT_EQ(r.status, 0) << r.err;
  // Three replies: the second on top of the first turn's cache, the third after /reset from nothing.
  const std::vector<int> reused = reused_counts(r.err);
  ASSERT_EQ(reused.size(), 3u) << r.err;
  EXPECT_EQ(reused[0], 0);
  EXPECT_GT(reused[1], 0);
  EXPECT_EQ(reused[2], 0);
  EXPECT_NE(r.err.find("(conversation cleared)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("plain"), std::string::npos) << r.err;  // the fallback template is announced

  // A chat of the first message alone (ended by EOF) answers what the first and the
  // after-/reset turns answered.
  const test::CliRun one = test::run_p64(args, "Tell me a story.\n");
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(reused_counts(one.err).size(), 1u);
  ASSERT_GT(one.out.size(), 1u);
  EXPECT_EQ(r.out.rfind(one.out, 0), 0u) << r.out;
  ASSERT_GE(r.out.size(), one.out.size());
  EXPECT_EQ(r.out.substr(r.out.size() - one.out.size()), one.out) << r.out;
}

TEST(ChatCli, SystemCommandAndUnknownCommand) {
  const test::CliRun r = test::run_p64("chat --model " + test::stories260k_p64() +
                                           " --backend cpu --temp 0 --tokens 4 --system \"Be brief.\"",
                                       "/system Be very brief.\n/nonsense\nHi\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("(system prompt set)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown command /nonsense"), std::string::npos) << r.err;
  EXPECT_EQ(reused_counts(r.err).size(), 1u) << r.err;
}

// A 64-position context with replies that run until it is full: every turn still answers, the
// CLI says when older turns were dropped, and each summary ends with the context meter.
TEST(ChatCli, AFullContextDropsOldTurnsAndShowsTheMeter) {
  const test::CliRun r = test::run_p64("chat --model " + test::stories260k_p64() +
                                           " --backend cpu --threads 1 --temp 0 --tokens 0 --ctx 64 --system \"Be kind.\"",
                                       "Tell me a story.\nAnd then?\nWhat next?\nThe end?\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("more than the context"), std::string::npos) << r.err;
  EXPECT_EQ(reused_counts(r.err).size(), 4u) << r.err;
  EXPECT_NE(r.err.find("context full: dropped the"), std::string::npos) << r.err;
  const std::regex meter(R"(; context (\d+)/64\])");
  int meters = 0;
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), meter); it != std::sregex_iterator(); ++it, ++meters)
    EXPECT_LE(std::stoi((*it)[1]), 64);
  EXPECT_EQ(meters, 4) << r.err;
}

// A message that does not fit the context even alone is refused with its size, and the chat
// goes on: the next message is answered.
TEST(ChatCli, AMessageLongerThanTheContextIsRefusedAndTheChatGoesOn) {
  std::string longer;
  for (int i = 0; i < 40; ++i) longer += "the cat sat ";
  const test::CliRun r = test::run_p64("chat --model " + test::stories260k_p64() +
                                           " --backend cpu --threads 1 --temp 0 --tokens 4 --ctx 64",
                                       longer + "\nHi\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("context holds 64 positions: shorten the message"), std::string::npos) << r.err;
  EXPECT_EQ(reused_counts(r.err).size(), 1u) << r.err;
}
