// Special tokens in chat text, streaming decode of split characters, round trips.
#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/model/chat_template.h"
#include "engine/model/tiktoken.h"
#include "engine/model/tokenizer.h"
#include "engine/model/utf8.h"
#include "engine/format/vocab_loader.h"
#include "support/shared_files.h"

using namespace p64;

namespace {

const Tokenizer& llama3() {
  static const auto tok = Tokenizer::create(read_tiktoken_model(test::shared_model("llama3_tokenizer.model").string()));
  return *tok;
}
const Tokenizer& llama2() {
  static const auto tok =
      Tokenizer::create(gguf_vocabulary(GgufFile::open(test::shared_model("ggml-vocab-llama-spm.gguf").string())));
  return *tok;
}

std::vector<int32_t> cat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

TEST(TokenizerSpecial, Llama3VocabularyFacts) {
  const auto& t = llama3();
  EXPECT_EQ(t.n_vocab(), 128256u);
  EXPECT_EQ(t.bos(), 128000);
  EXPECT_EQ(t.eos(), 128001);
  EXPECT_EQ(t.eot(), 128009);
  EXPECT_EQ(t.token_piece(128006), "<|start_header_id|>");
  EXPECT_EQ(t.token_piece(128008), "<|reserved_special_token_4|>");
  EXPECT_EQ(t.token_piece(128255), "<|reserved_special_token_250|>");
  EXPECT_TRUE(t.is_end_of_generation(128009));
  EXPECT_TRUE(t.is_end_of_generation(128001));
  EXPECT_FALSE(t.is_end_of_generation(128006));
  EXPECT_FALSE(t.is_end_of_generation(9906));
  EXPECT_EQ(t.token_text(128009), "");          // control tokens are not shown as text
  EXPECT_EQ(t.token_text(9906), "Hello");
}

TEST(TokenizerSpecial, Llama3ChatTextParsesHeaderAndTurnTokens) {
  const auto& t = llama3();
  const ChatTemplate tmpl = ChatTemplate::detect(t.vocabulary().chat_template);
  ASSERT_EQ(tmpl.family(), ChatFamily::Llama3);
  const std::vector<ChatMessage> chat = {{"user", "Hi there"}};
  const std::string prompt = tmpl.render(chat, true);
  const auto ids = t.encode(prompt, /*add_special=*/true, /*parse_special=*/true);
  const auto plain = [&](const char* s) { return t.encode(s, false, false); };
  const auto expected = cat({{128000, 128006}, plain("user"), {128007}, plain("\n\n"), plain("Hi there"), {128009, 128006},
                             plain("assistant"), {128007}, plain("\n\n")});
  EXPECT_EQ(ids, expected);

  // Without parse_special the same text is plain text: no control id appears.
  for (int32_t id : t.encode(prompt, false, false)) EXPECT_LT(id, 128000) << "control token from unparsed text";
}

TEST(TokenizerSpecial, SpmParsesBosEosInText) {
  const auto& t = llama2();
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  const auto ids = t.encode("[INST] Hi [/INST] Hello </s><s>[INST] Bye [/INST]", true, true);
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 2);
  // After a special token the dummy-prefix space applies again: "<s>[INST]" -> <s> "▁[" ...
  const auto after = std::find(ids.begin() + 1, ids.end(), 1);
  ASSERT_NE(after + 1, ids.end());
  EXPECT_EQ(t.token_piece(*(after + 1)).substr(0, 3), "\xE2\x96\x81");
  // Unparsed, "</s>" is just characters.
  const auto unparsed = t.encode("Hello </s>", false, false);
  EXPECT_EQ(std::count(unparsed.begin(), unparsed.end(), 2), 0);
}

TEST(TokenizerStream, MultiByteCharacterSplitAcrossSpmByteTokens) {
  const auto& t = llama2();
  const std::string clef = "\xF0\x9D\x84\x9E";  // U+1D11E, not a piece of the Llama 2 vocabulary
  const auto ids = t.encode(clef, false, false);
  ASSERT_EQ(ids.size(), 5u);  // "▁" + four <0xNN> byte tokens
  EXPECT_EQ(t.token_piece(ids[1]), "<0xF0>");
  EXPECT_EQ(t.token_piece(ids[4]), "<0x9E>");
  StreamDecoder dec(t);
  EXPECT_EQ(dec.push(ids[0]), " ");
  EXPECT_EQ(dec.push(ids[1]), "");
  EXPECT_EQ(dec.push(ids[2]), "");
  EXPECT_EQ(dec.push(ids[3]), "");
  EXPECT_EQ(dec.push(ids[4]), clef);
  EXPECT_EQ(dec.flush(), "");
}

TEST(TokenizerStream, StripLeadingSpaceAndIncompleteEnd) {
  const auto& t = llama2();
  const auto ids = t.encode("Hello \xE2\x82\xAC", false, false);  // "Hello €"
  StreamDecoder dec(t, /*strip_leading_space=*/true);
  std::string text;
  for (int32_t id : ids) text += dec.push(id);
  text += dec.flush();
  EXPECT_EQ(text, "Hello \xE2\x82\xAC");

  // A stream that stops inside a character ends with U+FFFD, never with a broken byte.
  StreamDecoder cut(t);
  const auto clef = t.encode("\xF0\x9D\x84\x9E", false, false);
  std::string out;
  for (size_t i = 0; i + 1 < clef.size(); ++i) out += cut.push(clef[i]);
  out += cut.flush();
  EXPECT_EQ(out, " \xEF\xBF\xBD");
}

TEST(TokenizerStream, ByteLevelChunksAreWholeUtf8) {
  const auto& t = llama3();
  const std::string text = "Llamas 🦙🦙 and 𝄞 clefs, ſ, 𐍈 gothic, 鿕 rare han";
  const auto ids = t.encode(text, false, false);
  StreamDecoder dec(t);
  std::string joined;
  int held = 0;
  for (int32_t id : ids) {
    const std::string chunk = dec.push(id);
    EXPECT_EQ(utf8::sanitize(chunk), chunk) << "chunk is not valid UTF-8";
    if (chunk.empty()) ++held;
    joined += chunk;
  }
  joined += dec.flush();
  EXPECT_EQ(joined, text);
  EXPECT_GT(held, 0) << "expected at least one token that ends inside a character";
}

TEST(TokenizerRoundTrip, SpmDecodeGivesBackTheText) {
  const auto& t = llama2();
  for (const std::string s : {"Hello world", " leading space", "tabs\tand\nnewlines\n\n", "Führer € 𝄞 ∑", "   ",
                              "Добрый день", "日本語のテキスト"}) {
    const auto ids = t.encode(s, false, false);
    EXPECT_EQ(t.decode(ids), " " + s) << s;  // the dummy prefix comes back as one leading space
    StreamDecoder dec(t, true);
    std::string streamed;
    for (int32_t id : ids) streamed += dec.push(id);
    EXPECT_EQ(streamed + dec.flush(), s);
  }
}

TEST(TokenizerRoundTrip, ByteLevelDecodeGivesBackTheText) {
  const auto& t = llama3();
  for (const std::string s : {"Hello world", "  two spaces", "\n\n\ttabs", "Führer € 𝄞 ∑", "ied 4 ½ months", "日本語"}) {
    EXPECT_EQ(t.decode(t.encode(s, false, false)), s) << s;
  }
}

TEST(TokenizerErrors, EmptyVocabularyAndUnknownPreTokenizer) {
  Vocabulary v;
  EXPECT_THROW(Tokenizer::create(v), Error);
  v.kind = TokenizerKind::ByteLevelBPE;
  v.tokens = {"a", "b"};
  v.pre = "no-such-pre";
  try {
    Tokenizer::create(v);
    FAIL() << "unknown pre-tokenizer accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-pre"), std::string::npos);
  }
  v.pre = "gpt-2";
  v.bos_id = 7;
  EXPECT_THROW(Tokenizer::create(v), Error);
}

TEST(TokenizerSources, SameVocabularyFromDifferentFilesTokenizesAlike) {
  const auto l2c = Tokenizer::create(load_vocabulary(test::shared_model("tok512.bin").string()));
  const auto gguf = Tokenizer::create(load_vocabulary(test::shared_model("stories260K.gguf").string()));
  const auto spm = Tokenizer::create(load_vocabulary(test::shared_model("ggml-vocab-llama-spm.gguf").string()));
  const auto tiny = Tokenizer::create(load_vocabulary(test::shared_model("llama-2-tiny-random.gguf").string()));
  EXPECT_EQ(l2c->n_vocab(), 512u);
  for (const std::string s : {"Once upon a time, there was a little girl named Lily.", "  spaces\nand lines", "Führer 𝄞"}) {
    EXPECT_EQ(l2c->encode(s, true, true), gguf->encode(s, true, true)) << s;
    EXPECT_EQ(spm->encode(s, true, true), tiny->encode(s, true, true)) << s;
    EXPECT_EQ(l2c->decode(l2c->encode(s, false, false)), " " + s);
  }
  EXPECT_EQ(l2c->encode("Once", true, false).front(), 1);  // BOS, as llama2.c's run.c prepends
}
