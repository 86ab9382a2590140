// Every model file is checked before it is opened: open() on a FIFO waits for a writer forever,
// so a FIFO given as the model, or named model.safetensors, config.json or tokenizer.json in a
// Hugging Face folder, is refused by name; and a symbolic link may not lead out of the folder.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "decode_test_models.h"
#include "engine/common/error.h"
#include "engine/format/hf_import.h"
#include "engine/format/vocab_loader.h"
#include "fuzz/fuzz_samples.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// A loadable tiny Llama folder, with `fifo` (if any) made a FIFO instead of a file.
void make_hf_folder(const fs::path& model, const std::string& fifo = "") {
  fs::create_directories(model);
  const std::vector<std::pair<std::string, std::string>> files = {{"config.json", fuzz::tiny_llama_config()},
                                                                  {"tokenizer.json", fuzz::tiny_tokenizer_json()},
                                                                  {"model.safetensors", fuzz::tiny_llama_safetensors()}};
  for (const auto& [name, bytes] : files) {
    if (name == fifo) ASSERT_EQ(::mkfifo((model / name).c_str(), 0600), 0);
    else write(model / name, bytes);
  }
}

}  // namespace

TEST(ModelInputFiles, AFifoInTheFolderIsRefusedByNameWithoutWaiting) {
  for (const std::string name : {"model.safetensors", "config.json", "tokenizer.json"}) {
    test::TempDir dir;
    const fs::path model = dir / "model";
    make_hf_folder(model, name);
    const std::string fifo = (model / name).string(), out = (dir / "out.p64").string();
    for (const std::string& cmd : {"inspect " + model.string(), "convert -q " + model.string() + " " + out,
                                   "generate --model " + model.string() + " --backend cpu --temp 0 --tokens 2",
                                   "tokenize --model " + model.string() + " hello"}) {
      if (name != "tokenizer.json" && cmd.rfind("tokenize", 0) == 0) continue;  // tokenize reads only that file
      const test::CliRun r = test::run_p64(cmd, "", 10);
      EXPECT_NE(r.status, 124) << cmd << ": still waiting on the FIFO after 10 s";
      EXPECT_NE(r.status, 0) << cmd;
      EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find(fifo + ": is a FIFO, not a regular file"), std::string::npos) << cmd << "\n" << r.err;
    }
    EXPECT_TRUE(fs::is_fifo(fifo));
    EXPECT_EQ(test::names_in(dir.path()), std::vector<std::string>{"model"});  // no output
    EXPECT_EQ(test::names_in(model), (std::vector<std::string>{"config.json", "model.safetensors", "tokenizer.json"}));
  }
}

TEST(ModelInputFiles, ALinkOutOfTheFolderIsRefusedAndALinkInsideIsRead) {
  test::TempDir dir;
  const fs::path model = dir / "model";
  make_hf_folder(model);
  fs::create_directory(model / "blobs");
  fs::rename(model / "model.safetensors", model / "blobs" / "weights");
  fs::create_symlink("blobs/weights", model / "model.safetensors");  // the way a hub cache links its files
  EXPECT_NO_THROW(load_hf_directory(model.string()));

  write(dir / "outside.json", fuzz::tiny_tokenizer_json());
  fs::remove(model / "tokenizer.json");
  fs::create_symlink("../outside.json", model / "tokenizer.json");
  const std::string tok = (model / "tokenizer.json").string();
  for (const std::string& e : {test::error_of([&] { load_hf_directory(model.string()); }),
                               test::error_of([&] { load_vocabulary(model.string()); })}) {
    EXPECT_NE(e.find(tok + ": leads out of the model folder"), std::string::npos) << e;
  }
  // A tokenizer given by its own path (--tokenizer) may live anywhere.
  EXPECT_NO_THROW(load_hf_directory(model.string(), (dir / "outside.json").string()));

  // A link inside the folder to a FIFO is refused like the FIFO itself (through the CLI, with a
  // time limit: a build without the check would wait on the FIFO forever).
  fs::remove(model / "tokenizer.json");
  ASSERT_EQ(::mkfifo((model / "blobs" / "pipe").c_str(), 0600), 0);
  fs::create_symlink("blobs/pipe", model / "tokenizer.json");
  const test::CliRun r = test::run_p64("inspect " + model.string(), "", 10);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(tok + ": is a FIFO, not a regular file"), std::string::npos) << r.err;
}

TEST(ModelInputFiles, AFifoGivenAsTheModelOrTheTokenizerIsRefusedWithoutWaiting) {
  test::TempDir dir;
  const std::string fifo = (dir / "model.gguf").string(), out = (dir / "out.p64").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string checkpoint = test::shared_model("stories260K.bin").string();
  for (const std::string& cmd : {"inspect " + fifo, "convert -q " + fifo + " " + out, "generate --model " + fifo + " --tokens 2",
                                 "convert -q " + checkpoint + " " + out + " --tokenizer " + fifo,
                                 "generate --model " + checkpoint + " --tokenizer " + fifo + " --backend cpu --tokens 2"}) {
    const test::CliRun r = test::run_p64(cmd, "", 10);
    EXPECT_NE(r.status, 124) << cmd << ": still waiting on the FIFO after 10 s";
    EXPECT_NE(r.status, 0) << cmd;
    EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(fifo), std::string::npos) << cmd << "\n" << r.err;
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(test::names_in(dir.path()), std::vector<std::string>{"model.gguf"});
}
