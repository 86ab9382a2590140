// Text that comes inside model files is data: a chat template is searched for markers and
// never run (no output blow-up, no side effects), file names inside a model folder never
// lead outside it, and model files are mapped read-only.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/hf_import.h"
#include "engine/format/llama2c_reader.h"
#include "engine/format/p64_reader.h"
#include "engine/format/p64_writer.h"
#include "engine/format/safetensors.h"
#include "engine/model/chat_template.h"
#include "fuzz/fuzz_samples.h"
#include "p64_test_model.h"
#include "support/shared_files.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// The permissions of this process's mappings of `path` ("r--p", ...), from /proc/self/maps.
std::vector<std::string> mapping_permissions(const std::string& path) {
  const std::string canonical = fs::canonical(path).string();
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> perms;
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < canonical.size() || line.compare(line.size() - canonical.size(), canonical.size(), canonical) != 0) continue;
    std::istringstream in(line);
    std::string range, p;
    in >> range >> p;
    perms.push_back(p);
  }
  return perms;
}

void expect_read_only_mapping(const std::string& path) {
  const auto perms = mapping_permissions(path);
  ASSERT_FALSE(perms.empty()) << path << " is not mapped";
  for (const auto& p : perms) EXPECT_EQ(p.substr(0, 2), "r-") << path << " mapped " << p;
}

}  // namespace

TEST(ModelTextIsData, HostileTemplatesRenderTheFamilyFormatWithBoundedOutputAndNoEffects) {
  test::TempDir dir;
  const fs::path witness = dir / "witness";
  const std::string payload = "{{ cycler.__init__.__globals__.os.popen('touch " + witness.string() + "').read() }}" +
                              "{% for i in range(1000000000) %}{{ 'x' * 1000000000 }}{% endfor %}";
  const std::vector<std::string> markers = {"<|start_header_id|><|end_header_id|>", "<|im_start|>", "<start_of_turn>",
                                            "<|user|><|end|>", "<|user|>", "[INST]<<SYS>>", "[INST]", ""};
  const std::vector<ChatMessage> msgs = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}};
  size_t content = 0;
  for (const auto& m : msgs) content += m.content.size() + m.role.size();
  for (const auto& m : markers) {
    const ChatTemplate t = ChatTemplate::detect(m + payload);
    const std::string out = t.render(msgs, true);
    EXPECT_LT(out.size(), content + 64 * (msgs.size() + 2)) << t.family_name();
    EXPECT_EQ(out.find("popen"), std::string::npos) << t.family_name();
    EXPECT_EQ(out.find("xxxx"), std::string::npos) << t.family_name();
    EXPECT_LE(t.default_system().size(), m.size() + payload.size());
  }
  EXPECT_FALSE(fs::exists(witness));
}

TEST(ModelTextIsData, ShardNamesInAnIndexNeverLeaveTheModelFolder) {
  test::TempDir dir;
  const fs::path model = dir / "model";
  fs::create_directories(model);
  write(model / "config.json", fuzz::tiny_llama_config());
  write(model / "tokenizer.json", fuzz::tiny_tokenizer_json());
  write(model / "model.safetensors", fuzz::tiny_llama_safetensors());
  write(dir / "outside.safetensors", fuzz::tiny_llama_safetensors());
  EXPECT_NO_THROW(load_hf_directory(model.string()));
  for (const std::string& shard : std::vector<std::string>{"../outside.safetensors", (dir / "outside.safetensors").string(),
                                                           "sub/../../outside.safetensors", "..",
                                                           "model.safetensors/../../outside.safetensors"}) {
    write(model / "model.safetensors.index.json",
          // dump() quotes the name as JSON does: a Windows path's backslashes are escaped.
          R"({"weight_map":{"model.embed_tokens.weight":)" + nlohmann::json(shard).dump() +
              R"(,"model.norm.weight":"model.safetensors"}})");
    try {
      load_hf_directory(model.string());
      ADD_FAILURE() << "shard '" << shard << "' was accepted";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("leaves the folder"), std::string::npos) << e.what();
    }
  }
}

TEST(ModelTextIsData, ModelFilesAreMappedReadOnly) {
  test::TempDir dir;
  {
    const GgufFile f = GgufFile::open(test::shared_model("stories260K.gguf").string());
    expect_read_only_mapping(f.path());
  }
  {
    const Llama2cCheckpoint c = read_llama2c(test::shared_model("stories260K.bin").string());
    expect_read_only_mapping(c.map->path());
  }
  {
    write(dir / "model.safetensors", fuzz::tiny_llama_safetensors());
    const SafetensorsFile f = SafetensorsFile::open((dir / "model.safetensors").string());
    expect_read_only_mapping(f.path());
  }
  {
    test::TinyModel tiny = test::tiny_image();
    const std::string path = (dir / "tiny.p64").string();
    write_p64(path, tiny.image);
    auto model = open_p64(path);
    expect_read_only_mapping(path);
  }
}
