#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "engine/common/error.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/llama2c_reader.h"
#include "support/shared_files.h"

using namespace p64;

TEST(FormatLlama2c, Stories260KMatchesItsGgufTensorForTensor) {
  Llama2cCheckpoint c = read_llama2c(test::shared_model("stories260K.bin").string());
  EXPECT_EQ(c.hparams.n_embd, 64u);
  EXPECT_EQ(c.hparams.n_ff, 172u);
  EXPECT_EQ(c.hparams.n_layer, 5u);
  EXPECT_EQ(c.hparams.n_head, 8u);
  EXPECT_EQ(c.hparams.n_head_kv, 4u);
  EXPECT_EQ(c.hparams.n_vocab, 512u);
  EXPECT_EQ(c.hparams.n_ctx_train, 512u);
  EXPECT_TRUE(c.shared_classifier);
  GgufFile g = GgufFile::open(test::shared_model("stories260K.gguf").string());
  // Every checkpoint tensor (47; freq_cis is not a weight) is in the GGUF with the same bytes.
  size_t matched = 0;
  for (const auto& t : c.tensors) {
    const GgufTensorInfo* gt = g.find_tensor(t.name);
    ASSERT_NE(gt, nullptr) << t.name;
    EXPECT_EQ(gt->dtype, DType::F32);
    EXPECT_EQ(gt->ne[0], t.ne[0]) << t.name;
    EXPECT_EQ(gt->ne[1], t.ne[1]) << t.name;
    ASSERT_EQ(gt->bytes, t.bytes) << t.name;
    EXPECT_EQ(std::memcmp(gt->data, t.data, t.bytes), 0) << t.name;
    ++matched;
  }
  EXPECT_EQ(matched, 47u);
  HParams gh = gguf_hparams(g);
  // (llama.cpp's converter wrote context_length 2048; the checkpoint's seq_len is 512.)
  EXPECT_EQ(gh.n_head_kv, c.hparams.n_head_kv);
  EXPECT_FLOAT_EQ(gh.rms_eps, c.hparams.rms_eps);
}

TEST(FormatLlama2c, Tok512MatchesTheGgufVocabulary) {
  Vocabulary v = read_llama2c_tokenizer(test::shared_model("tok512.bin").string(), 512);
  Vocabulary g = gguf_vocabulary(GgufFile::open(test::shared_model("stories260K.gguf").string()));
  ASSERT_EQ(v.size(), 512u);
  EXPECT_EQ(v.tokens, g.tokens);
  EXPECT_EQ(v.scores, g.scores);
  EXPECT_EQ(v.types, g.types);
  EXPECT_EQ(v.tokens[259], "\xE2\x96\x81t");
  EXPECT_EQ(v.type_of(3), TokenType::Byte);
  EXPECT_EQ(v.bos_id, 1);
  EXPECT_EQ(v.eos_id, 2);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_THROW(read_llama2c_tokenizer(test::shared_model("tok512.bin").string(), 600), FormatError);
}

TEST(FormatLlama2c, TruncatedOrWrongHeaderIsRefused) {
  test::TempDir dir;
  std::ifstream in(test::shared_model("stories260K.bin"), std::ios::binary);
  std::vector<char> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t cut : {size_t(0), size_t(20), size_t(28), size_t(1000), all.size() - 4}) {
    std::string p = (dir / "t.bin").string();
    std::ofstream(p, std::ios::binary).write(all.data(), std::streamsize(cut));
    EXPECT_THROW(read_llama2c(p), FormatError) << cut;
  }
  std::vector<char> bad = all;
  int32_t heads = 7;  // 64 is not a multiple of 7
  std::memcpy(bad.data() + 12, &heads, 4);
  std::string p = (dir / "h.bin").string();
  std::ofstream(p, std::ios::binary).write(bad.data(), std::streamsize(bad.size()));
  try {
    read_llama2c(p);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.section(), "header");
  }
}
