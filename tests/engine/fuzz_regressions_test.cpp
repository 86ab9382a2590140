// Inputs the fuzz targets (tests/fuzz) found that escaped the readers as something other
// than a p64::Error naming the file. Each case is the crashing input, or its essence,
// built here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/common/error.h"
#include "engine/format/hf_import.h"
#include "engine/format/hf_tokenizer_json.h"
#include "fuzz/fuzz_samples.h"
#include "support/shared_files.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// The call must throw a FormatError whose message names `file`.
template <class F>
void expect_format_error_naming(const std::string& file, F&& f) {
  try {
    f();
    ADD_FAILURE() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a FormatError: " << e.what();
  }
}

}  // namespace

// fuzz_hf_config: a config.json that is a number (or an array, or has a wrong-typed field)
// escaped as nlohmann's type_error 306/302.
TEST(FuzzRegressions, HfConfigOfTheWrongShapeIsAFormatError) {
  test::TempDir dir;
  write(dir / "model.safetensors", fuzz::tiny_llama_safetensors());
  write(dir / "tokenizer.json", fuzz::tiny_tokenizer_json());
  const std::string config = (dir / "config.json").string();
  for (const std::string& text : {std::string("7777\0>7777", 10), std::string("[1, 2]"), std::string("\"llama\""),
                                 std::string(R"({"model_type": 5})"), std::string(R"({"model_type": "llama", "_name_or_path": 3})"),
                                 std::string(R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,)"
                                             R"("intermediate_size":16,"vocab_size":13,"tie_word_embeddings":"yes"})"),
                                 std::string(R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,)"
                                             R"("intermediate_size":16,"vocab_size":13,"rope_scaling":{"type":1}})"),
                                 // Found by review beside the fuzzing: a float-to-int cast out of range (UB).
                                 std::string(R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,)"
                                             R"("intermediate_size":16,"vocab_size":13,"rope_scaling":{"rope_type":"llama3",)"
                                             R"("original_max_position_embeddings":-1e30}})")}) {
    write(config, text);
    expect_format_error_naming("config.json", [&] { load_hf_directory(dir.path().string()); });
  }
}

// fuzz_hf_tokenizer_json: "40e0000444" is a number no C++ type holds (out_of_range 406, not
// a parse_error), and wrong-typed fields deep in the file (type_error).
TEST(FuzzRegressions, TokenizerJsonWithHugeNumbersOrWrongTypesIsAFormatError) {
  test::TempDir dir;
  const std::string path = (dir / "tokenizer.json").string();
  for (const std::string& text : {std::string("40e0000444{4+4p&hhh"), std::string(R"({"model":{"type":5,"vocab":{}}})"),
                                 std::string(R"({"model":{"type":"BPE","vocab":{"a":0},"byte_fallback":"no"}})"),
                                 std::string(R"({"model":{"vocab":{"a":0}},"added_tokens":[{"id":"1","content":"b"}]})"),
                                 std::string(R"({"model":{"vocab":{"a":0}},"added_tokens":[{"id":1,"content":2}]})"),
                                 std::string(R"({"model":{"vocab":{"a":0}},"pre_tokenizer":{"type":7}})"),
                                 // An hour's run found these: an integer literal too large for int64 parses as a
                                 // float, and converting it to the id was a float-to-int cast out of range (UB).
                                 std::string(R"({"model":{"vocab":{"a":0}},"added_tokens":[{"id":7777777777777777777777712,"content":"b"}]})"),
                                 std::string(R"({"model":{"vocab":{"a":0}},"added_tokens":[{"id":1.5,"content":"b"}]})"),
                                 // fuzz_vocab_loader's slow unit (10 s under ASan): 11 tokens, ids up to 7888888.
                                 std::string(R"({"model":{"vocab":{"h":0,"e":1,"ll":7888888}}})")}) {
    write(path, text);
    expect_format_error_naming("tokenizer.json", [&] { read_hf_tokenizer_json(path); });
  }
}
