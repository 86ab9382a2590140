// llama.cpp's tokenizer test vectors (../shared/models/*.inp/.out): every input must give
// exactly the ids the model's own tokenizer gives (no BOS, special text not parsed).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/model/tiktoken.h"
#include "engine/model/tokenizer.h"
#include "support/shared_files.h"

using namespace p64;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct VectorCase {
  std::string input;
  std::vector<int32_t> expected;
};

std::vector<VectorCase> read_vectors(const std::string& base) {
  const std::string inp = slurp(test::shared_model(base + ".inp"));
  const std::string out = slurp(test::shared_model(base + ".out"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t pos = 0; pos < inp.size();) {
    const size_t at = inp.find(sep, pos);
    if (at == std::string::npos) break;
    inputs.push_back(inp.substr(pos, at - pos));
    pos = at + sep.size();
  }
  std::vector<VectorCase> cases;
  std::istringstream lines(out);
  std::string line;
  for (const auto& in : inputs) {
    std::getline(lines, line);
    VectorCase c{in, {}};
    std::istringstream ids(line);
    int32_t id;
    while (ids >> id) c.expected.push_back(id);
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (auto id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// Runs every vector; prints each failure with its input, and the pass count.
void run_vectors(const Tokenizer& tok, const std::string& base) {
  const auto cases = read_vectors(base);
  ASSERT_GT(cases.size(), 20u) << base << ": vectors not read";
  size_t pass = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto got = tok.encode(cases[i].input, /*add_special=*/false, /*parse_special=*/false);
    if (got == cases[i].expected) {
      ++pass;
    } else {
      ADD_FAILURE() << base << " vector " << i << " input \"" << cases[i].input << "\"\n  expected: "
                    << join(cases[i].expected) << "\n  got:      " << join(got);
    }
  }
  std::printf("%s: %zu/%zu vectors pass\n", base.c_str(), pass, cases.size());
  EXPECT_EQ(pass, cases.size());
}

}  // namespace

TEST(TokenizerVectors, LlamaBpeAgainstLlama3Tiktoken) {
  const auto vocab = read_tiktoken_model(test::shared_model("llama3_tokenizer.model").string());
  auto tok = Tokenizer::create(vocab);
  run_vectors(*tok, "ggml-vocab-llama-bpe.gguf");
}

TEST(TokenizerVectors, LlamaSpmGguf) {
  auto vocab = gguf_vocabulary(GgufFile::open(test::shared_model("ggml-vocab-llama-spm.gguf").string()));
  auto tok = Tokenizer::create(vocab);
  run_vectors(*tok, "ggml-vocab-llama-spm.gguf");
}

TEST(TokenizerVectors, Gpt2Gguf) {
  auto vocab = gguf_vocabulary(GgufFile::open(test::shared_model("ggml-vocab-gpt-2.gguf").string()));
  auto tok = Tokenizer::create(vocab);
  run_vectors(*tok, "ggml-vocab-gpt-2.gguf");
}

// The vocabularies whose pre-tokenizers llama.cpp names deepseek-coder, mpt (GPT-2's
// expression) and refact (StarCoder's: single digits, then GPT-2's), and Phi-3's SentencePiece.
class TokenizerVectorsGguf : public ::testing::TestWithParam<const char*> {};

TEST_P(TokenizerVectorsGguf, EveryVectorGivesLlamaCppsIds) {
  const std::string base = std::string("ggml-vocab-") + GetParam() + ".gguf";
  auto vocab = gguf_vocabulary(GgufFile::open(test::shared_model(base).string()));
  auto tok = Tokenizer::create(vocab);
  run_vectors(*tok, base);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, TokenizerVectorsGguf, ::testing::Values("deepseek-coder", "mpt", "refact", "phi-3"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });
