// tokenizer.json + tokenizer_config.json, and load_vocabulary's dispatch by content.
#include <fstream>

#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/model/chat_template.h"
#include "engine/format/hf_tokenizer_json.h"
#include "engine/model/tokenizer.h"
#include "engine/format/vocab_loader.h"
#include "support/shared_files.h"

using namespace p64;

namespace {

void write(const std::filesystem::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

// A small byte-level BPE: "Ġ" is the byte-level space.
std::string tiny_tokenizer_json(bool pair_merges) {
  const std::string merges = pair_merges ? R"([["h","e"],["l","l"],["he","ll"],["hell","o"],["Ġ","w"]])"
                                         : R"(["h e","l l","he ll","hell o","Ġ w"])";
  return R"({"version":"1.0","added_tokens":[{"id":11,"content":"<|im_end|>","special":true},
  {"id":12,"content":"<|im_start|>","special":true}],
  "normalizer":null,
  "pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
  "model":{"type":"BPE","dropout":null,"unk_token":null,"vocab":{"h":0,"e":1,"l":2,"o":3,"Ġ":4,"w":5,
  "he":6,"ll":7,"hell":8,"hello":9,"Ġw":10},"merges":)" +
         merges + "}}";
}

}  // namespace

TEST(HfTokenizerJson, StringAndPairMergesGiveTheSameTokens) {
  test::TempDir dir;
  for (bool pairs : {false, true}) {
    write(dir / "tokenizer.json", tiny_tokenizer_json(pairs));
    const Vocabulary v = read_hf_tokenizer_json((dir / "tokenizer.json").string());
    EXPECT_EQ(v.kind, TokenizerKind::ByteLevelBPE);
    EXPECT_EQ(v.pre, "gpt-2");
    ASSERT_EQ(v.tokens.size(), 13u);
    ASSERT_EQ(v.merges.size(), 5u);
    EXPECT_EQ(v.merges[2], "he ll");
    EXPECT_EQ(v.type_of(11), TokenType::Control);
    auto t = Tokenizer::create(v);
    EXPECT_EQ(t->encode("hello", false, false), (std::vector<int32_t>{9}));
    EXPECT_EQ(t->encode("hello<|im_end|>", false, true), (std::vector<int32_t>{9, 11}));
    EXPECT_EQ(t->encode("hellow", false, false), (std::vector<int32_t>{9, 5}));
    EXPECT_EQ(t->decode(t->encode("hello hello", false, false)), "hello hello");
  }
}

TEST(HfTokenizerJson, ConfigBesideGivesEosAndTemplate) {
  test::TempDir dir;
  write(dir / "tokenizer.json", tiny_tokenizer_json(false));
  write(dir / "tokenizer_config.json",
        R"({"add_bos_token":false,"eos_token":{"content":"<|im_end|>"},"bos_token":null,
        "chat_template":"{% for m in messages %}{{'<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n'}}{% endfor %}"})");
  const Vocabulary v = load_vocabulary(dir.path().string());  // a folder with tokenizer.json
  EXPECT_EQ(v.eos_id, 11);
  EXPECT_FALSE(v.add_bos);
  EXPECT_EQ(ChatTemplate::detect(v.chat_template).family(), ChatFamily::ChatML);
  auto t = Tokenizer::create(v);
  EXPECT_TRUE(t->is_end_of_generation(11));
}

TEST(HfTokenizerJson, BrokenFilesNameTheFileAndField) {
  test::TempDir dir;
  write(dir / "tokenizer.json", R"({"model":{"type":"Unigram","vocab":[]}})");
  try {
    read_hf_tokenizer_json((dir / "tokenizer.json").string());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("model.type"), std::string::npos) << e.what();
  }
  write(dir / "tokenizer.json", R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[7]}})");
  EXPECT_THROW(read_hf_tokenizer_json((dir / "tokenizer.json").string()), FormatError);
  write(dir / "tokenizer.json", R"({"model": {"type": "BPE", "vocab": )");
  EXPECT_THROW(read_hf_tokenizer_json((dir / "tokenizer.json").string()), FormatError);
}

TEST(VocabLoader, DispatchesByContentAndRefusesOthers) {
  EXPECT_EQ(load_vocabulary(test::shared_model("llama3_tokenizer.model").string()).tokens.size(), 128256u);
  const Vocabulary spm = load_vocabulary(test::shared_model("ggml-vocab-llama-spm.gguf").string());
  EXPECT_EQ(spm.kind, TokenizerKind::SentencePiece);
  EXPECT_EQ(spm.tokens.size(), 32000u);
  try {
    load_vocabulary(test::shared_model("PROVENANCE.md").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PROVENANCE.md"), std::string::npos);
  }
  test::TempDir dir;
  write(dir / "bad.model", "aGVsbG8= 0\nd29ybGQ= 5\n");  // ranks out of order
  EXPECT_THROW(load_vocabulary((dir / "bad.model").string()), FormatError);
}

TEST(TokenizeCli, PrintsIdsOnOneLine) {
  const std::string cmd = std::string(P64_CLI_PATH) + " tokenize --no-bos --model " +
                          test::shared_model("llama3_tokenizer.model").string() + " \"Hello world\" 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {};
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out, "9906 1917\n");
}

TEST(TokenizeCli, P64FileCarriesTheSameVocabulary) {
  test::TempDir dir;
  const std::string p64 = (dir / "s260.p64").string();
  auto run = [](const std::string& cmd) {
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    std::string out;
    char buf[512];
    while (p && fgets(buf, sizeof buf, p)) out += buf;
    const int rc = p ? pclose(p) : -1;
    return std::make_pair(rc, out);
  };
  const std::string cli = P64_CLI_PATH;
  const auto conv = run(cli + " convert -q " + test::shared_model("stories260K.bin").string() + " " + p64 +
                        " --tokenizer " + test::shared_model("tok512.bin").string());
  ASSERT_EQ(conv.first, 0) << conv.second;
  const auto from_p64 = run(cli + " tokenize --model " + p64 + " \"Once upon a time <s> x\"");
  const auto from_tok = run(cli + " tokenize --model " + test::shared_model("tok512.bin").string() + " \"Once upon a time <s> x\"");
  EXPECT_EQ(from_p64.first, 0) << from_p64.second;
  EXPECT_EQ(from_p64.second, from_tok.second);
  EXPECT_EQ(from_p64.second.substr(0, 2), "1 ");
  const auto bad = run(cli + " tokenize --model " + test::shared_model("PROVENANCE.md").string() + " x");
  EXPECT_NE(bad.first, 0);
  EXPECT_NE(bad.second.find("PROVENANCE.md"), std::string::npos) << bad.second;
}
