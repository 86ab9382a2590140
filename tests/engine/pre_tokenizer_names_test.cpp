// The pre-tokenizers named in GGUF files (tokenizer.ggml.pre) beyond Llama 3, Qwen2, SmolLM and
// GPT-2: each splits a text where its expressions say. The expected pieces are worked out by
// hand from the expressions (engine/model/pre_tokenizer.cpp says which runs in which order);
// each text holds something the neighbouring pre-tokenizers split otherwise, so a name
// resolved to the wrong expressions fails. The vocabularies with llama.cpp's test vectors
// (deepseek-coder, mpt, refact) are checked end to end in tokenizer_vectors_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/model/pre_tokenizer.h"
#include "engine/model/tokenizer.h"

namespace p64 {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(const std::string& name, const std::string& text) {
  const auto pre = PreTokenizer::for_name(name);
  Pieces out;
  for (std::string_view p : pre->split(text)) out.emplace_back(p);
  return out;
}

TEST(PreTokenizerNames, DeepseekCoderIsolatesLineBreaksCjkRunsAndSingleDigits) {
  // [\r\n] first; then letters with one leading space (CJK letters too), punctuation runs,
  // CJK runs out of the letter runs, and single digits.
  EXPECT_EQ(split("deepseek-coder", "Hello, world!\n123 你好abc"),
            (Pieces{"Hello", ",", " world", "!", "\n", "1", "2", "3", " ", "你好", "abc"}));
}

TEST(PreTokenizerNames, DeepseekV3GluesAMarkToTheAsciiWordAfterIt) {
  // Digits in threes first, then CJK runs; digits match none of the last expression's
  // branches and stay as cut ("123"); "." leads the ASCII word that follows it, but not a
  // word that starts with another letter, which Llama 3's expression would still glue it to.
  EXPECT_EQ(split("deepseek-v3", "Hello世界12345 x.y\n"), (Pieces{"Hello", "世界", "123", "45", " x", ".y", "\n"}));
  EXPECT_EQ(split("deepseek-v3", "x.é"), (Pieces{"x", ".", "é"}));
  EXPECT_EQ(split("llama-bpe", "x.é"), (Pieces{"x", ".é"}));
}

TEST(PreTokenizerNames, ChameleonIsolatesItsTokensSpaceRunsDigitsAndMarks) {
  // The sentinel is cut out whole first, then split like any text (llama.cpp matches special
  // tokens before pre-tokenizing); two spaces are a piece; every mark and digit stands alone.
  EXPECT_EQ(split("chameleon", "a  b<sentinel:12>IMGIMGABZ 7!"),
            (Pieces{"a", "  ", "b", "<", "sentinel", ":", "1", "2", ">", "IMGIMGABZ", " ", "7", "!"}));
}

TEST(PreTokenizerNames, FalconTakesTheBacktickAsPunctuationAndDigitsInThrees) {
  // '=' and '`' are in the first class; GPT-2's words keep "1234567" whole and the trailing
  // space apart; the last expression cuts three digits at a time.
  EXPECT_EQ(split("falcon", "x=1234567 `a`"), (Pieces{"x", "=", "123", "456", "7", " ", "`", "a", "`"}));
  // The default expressions leave the backtick with the letter and digits in one run first.
  EXPECT_NE(split("default", "x=1234567 `a`"), split("falcon", "x=1234567 `a`"));
}

TEST(PreTokenizerNames, PoroBloomAndGpt3FinnishCutAtWhitespaceAndMarksOnly) {
  // A word runs up to whitespace or one of . , ! ? ( ) | ...; a space before a mark belongs to
  // neither, so "! (" is the text between two words.
  for (const char* name : {"poro", "poro-chat", "bloom", "gpt3-finnish"})
    EXPECT_EQ(split(name, "Hei, maailma! (ok)"), (Pieces{"Hei", ",", " maailma", "! (", "ok", ")"})) << name;
  // Digits stay in the word; viking then splits them one by one.
  EXPECT_EQ(split("poro", "abc123 def"), (Pieces{"abc123", " def"}));
  EXPECT_EQ(split("viking", "abc123 def"), (Pieces{"abc", "1", "2", "3", " def"}));
}

TEST(PreTokenizerNames, ChatGlmKeepsUpperCaseContractionsAndDigitsInThrees) {
  EXPECT_EQ(split("chatglm-bpe", "I'M 12345 ok"), (Pieces{"I", "'M", " ", "123", "45", " ok"}));
  // GPT-2's expression knows only lower-case contractions and keeps digits together.
  EXPECT_EQ(split("gpt-2", "I'M 12345 ok"), (Pieces{"I", "'", "M", " 12345", " ok"}));
}

TEST(PreTokenizerNames, TekkenAndGpt4oSplitWordsAtCaseChanges) {
  // An upper-case run ends a word before the next capital; a capital run then lower case
  // is one word; Tekken splits digits one by one, GPT-4o in threes and keeps "'t" on its word.
  EXPECT_EQ(split("tekken", "HelloWorld ABCdef x9"), (Pieces{"Hello", "World", " ABCdef", " x", "9"}));
  EXPECT_EQ(split("tekken", "don't"), (Pieces{"don", "'t"}));
  EXPECT_EQ(split("gpt-4o", "don't STOP 12345"), (Pieces{"don't", " STOP", " ", "123", "45"}));
  EXPECT_EQ(split("llama-bpe", "HelloWorld"), (Pieces{"HelloWorld"}));
}

TEST(PreTokenizerNames, AliasesResolveToTheExpressionsLlamaCppGivesThem) {
  for (const char* name : {"phi-2", "roberta-bpe", "mpt", "olmo", "jais"}) EXPECT_EQ(PreTokenizer::canonical_name(name), "gpt-2") << name;
  for (const char* name : {"exaone", "minerva-7b", "refact", "command-r"})
    EXPECT_EQ(PreTokenizer::canonical_name(name), "smollm") << name;
  // DBRX and Smaug split as Llama 3 but merge every word; Llama 3 and Tekken take a word that
  // is a token whole.
  for (const char* name : {"dbrx", "smaug-bpe"}) {
    const auto pre = PreTokenizer::for_name(name);
    EXPECT_EQ(pre->name(), "dbrx");
    EXPECT_FALSE(pre->ignore_merges());
    EXPECT_EQ(split(name, "Hello world 12345"), split("llama-bpe", "Hello world 12345"));
  }
  EXPECT_TRUE(PreTokenizer::for_name("llama3")->ignore_merges());
  EXPECT_TRUE(PreTokenizer::for_name("tekken")->ignore_merges());
  EXPECT_FALSE(PreTokenizer::for_name("gpt-4o")->ignore_merges());
}

TEST(PreTokenizerNames, AnUnknownNameIsRefusedNamingItAndTheKnownOnes) {
  try {
    PreTokenizer::for_name("deepseek-llm");
    FAIL() << "deepseek-llm has no expressions here";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown pre-tokenizer \"deepseek-llm\""), std::string::npos) << what;
    EXPECT_NE(what.find("tekken"), std::string::npos) << what;
    EXPECT_NE(what.find("gpt3-finnish"), std::string::npos) << what;
  }
  // A model's tokenizer names the model's file too.
  Vocabulary v;
  v.kind = TokenizerKind::ByteLevelBPE;
  v.tokens = {"a", "b"};
  v.pre = "deepseek-llm";
  try {
    Tokenizer::create(v, "m.gguf");
    FAIL() << "deepseek-llm accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("m.gguf: unknown pre-tokenizer \"deepseek-llm\" (known: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace p64
