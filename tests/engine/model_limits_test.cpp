// Issue 23, defects 3 and 9: a small hostile model file may not cost minutes or gigabytes, and
// weights or constants that decode to garbage are refused by name. Every count a file states is
// bounded (model_limits.h) before anything is allocated for it; refusals name the file, the
// field and the limit. The files come from tests/support/hostile_models.h (each at most 2 MB).
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <map>
#include <string>

#include "decode_test_models.h"
#include "engine/common/error.h"
#include "engine/format/convert.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/model_limits.h"
#include "engine/format/p64_reader.h"
#include "engine/format/p64_writer.h"
#include "engine/format/source_model.h"
#include "engine/p64_test_model.h"
#include "support/hostile_models.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

// The hostile files, written once for the whole test program.
const std::map<std::string, test::HostileModel>& hostile() {
  static const test::TempDir dir;
  static const std::map<std::string, test::HostileModel> all = [] {
    std::map<std::string, test::HostileModel> m;
    for (auto& h : test::write_hostile_models(dir.path())) m.emplace(h.name, h);
    return m;
  }();
  return all;
}

// ulimit -v in KiB: what the probe ran under. ASan reserves terabytes of address space
// for its shadow memory, so under it the runs go uncapped; what they print is the same.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kFourGiB = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr uint64_t kFourGiB = 0;
#else
constexpr uint64_t kFourGiB = 4'000'000;
#endif
#else
constexpr uint64_t kFourGiB = 4'000'000;
#endif

std::string generate_args(const test::HostileModel& h) {
  std::string a = "generate --model " + h.path + " --backend cpu --threads 1 --temp 0 --tokens 2 --prompt " + h.prompt;
  return h.tokenizer.empty() ? a : a + " --tokenizer " + h.tokenizer;
}

}  // namespace

TEST(ModelLimits, EveryHostileFileIsAtMostTwoMegabytes) {
  for (const auto& [name, h] : hostile()) {
    uint64_t bytes = 0;
    if (fs::is_directory(h.path))
      for (const auto& e : fs::directory_iterator(h.path)) bytes += fs::file_size(e.path());
    else
      bytes = fs::file_size(h.path);
    EXPECT_LE(bytes, 2u << 20) << name;
  }
}

// Convert reads every part of a model (hparams, vocabulary, each tensor), so it meets every
// refusal; the odd-but-fine files convert.
TEST(ModelLimits, ConvertRefusesEachHostileFileNamingFileFieldAndLimit) {
  test::TempDir out;
  for (const auto& [name, h] : hostile()) {
    ConvertOptions o;
    o.tokenizer_path = h.tokenizer;
    const std::string target = (out / (name + ".p64")).string();
    const std::string& source = h.path;  // clang 14 cannot capture a structured binding
    const std::string e = test::error_of([&] { convert_to_p64(source, target, o); });
    if (h.refusal.empty()) {
      EXPECT_EQ(e, "") << name;
      EXPECT_TRUE(fs::exists(target)) << name;
      continue;
    }
    EXPECT_NE(e.find(h.refusal), std::string::npos) << name << ": " << e;
    EXPECT_NE(e.find(h.path), std::string::npos) << name << " does not name its file: " << e;
    EXPECT_FALSE(fs::exists(target)) << name;
  }
}

// What the issue saw: 10,000,000 layers ran past 60 s to 2.8 GB, 2^32-1 ended in a raw
// std::bad_alloc, 1,000,000 wrote a 97 MB file that verify rejected, vocab_size 2^26 cost
// inspect 35 s and 4.1 GB. Under the probe's memory cap each command now refuses by name.
TEST(ModelLimits, CommandsRefuseHugeCountsQuicklyUnderAMemoryCap) {
  test::TempDir out;
  auto model = [](const std::string& name) { return hostile().at(name); };
  const std::vector<std::pair<test::HostileModel, std::string>> runs = {
      {model("gguf-block-count-10000000"), "inspect " + model("gguf-block-count-10000000").path},
      {model("gguf-block-count-10000000"), "convert -q " + model("gguf-block-count-10000000").path + " " + (out / "a.p64").string()},
      {model("gguf-block-count-10000000"), generate_args(model("gguf-block-count-10000000"))},
      {model("gguf-block-count-4294967295"), "convert -q " + model("gguf-block-count-4294967295").path + " " + (out / "b.p64").string()},
      {model("gguf-block-count-1000000"), "convert -q " + model("gguf-block-count-1000000").path + " " + (out / "c.p64").string()},
      {model("hf-layers-10000000"), generate_args(model("hf-layers-10000000"))},
      {model("hf-vocab-67108864"), "inspect " + model("hf-vocab-67108864").path},
      {model("p64-n-layer-10000000"), "verify -q " + model("p64-n-layer-10000000").path},
  };
  for (const auto& [h, cmd] : runs) {
    const test::CliRun r = test::run_p64(cmd, "", 10, kFourGiB);
    EXPECT_NE(r.status, 124) << cmd << ": still running after 10 s";
    EXPECT_NE(r.status, 0) << cmd;
    EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << cmd << "\n" << r.err;
    const std::string& text = cmd.rfind("verify", 0) == 0 ? r.out : r.err;
    EXPECT_NE(text.find(h.refusal), std::string::npos) << cmd << "\n" << r.err << r.out;
    EXPECT_NE(text.find(h.path), std::string::npos) << cmd << "\n" << r.err << r.out;
  }
  EXPECT_EQ(test::names_in(out.path()), std::vector<std::string>{});
}

// A layer count within the limit still has to be backed by the layers' tensors: 4,000 claimed
// with one present used to convert to a file that verify and every load then refused.
TEST(ModelLimits, ConvertRefusesLayersTheFileDoesNotHold) {
  const test::HostileModel& h = hostile().at("gguf-block-count-4000-of-1");
  test::TempDir out;
  const test::CliRun r = test::run_p64("convert -q " + h.path + " " + (out / "x.p64").string(), "", 10, kFourGiB);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("p64: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(h.path + ": llama.block_count 4000 but the file holds no tensor of layer 1"), std::string::npos) << r.err;
  EXPECT_EQ(test::names_in(out.path()), std::vector<std::string>{});
}

// A u8 array as long as the file used to cost a 72-byte value object per element (64 MB of file,
// 4.7 GB of memory); now the elements stay in the file's encoding, one byte each.
TEST(ModelLimits, GgufArraysCostTheirEncodedSizeAndStillDecode) {
  const GgufFile f = GgufFile::open(hostile().at("gguf-u8-array-1900000").path);
  const GgufValue& bytes = f.get_array("hostile.bytes");
  EXPECT_EQ(bytes.size(), 1'900'000u);
  EXPECT_EQ(bytes.encoded.size(), 1'900'000u);
  EXPECT_EQ(bytes.item(1'899'999).as_uint(), 7u);
  EXPECT_EQ(bytes.summary(2), "[u8 x 1900000] {7, 7, ...}");
  const GgufFile g = GgufFile::open(hostile().at("gguf-nested-array-160000").path);
  EXPECT_EQ(g.get_array("hostile.arrays").size(), 160'000u);
  EXPECT_EQ(g.get_array("hostile.arrays").item(159'999).elem_type, GgufType::UINT8);
  EXPECT_EQ(g.get_array("hostile.arrays").encoded.size(), 160'000u * 12);

  // The same files are read whole within the probe's memory cap, and the model behind them runs.
  for (const std::string name : {"gguf-u8-array-1900000", "gguf-string-array-240000", "gguf-nested-array-160000"}) {
    const test::CliRun r = test::run_p64("inspect --all-metadata " + hostile().at(name).path, "", 10, kFourGiB);
    EXPECT_EQ(r.status, 0) << name << "\n" << r.err;
  }
  const test::CliRun r = test::run_p64(generate_args(hostile().at("gguf-u8-array-1900000")), "", 10, kFourGiB);
  EXPECT_EQ(r.status, 0) << r.err;
}

// NaN or infinite weights decoded to "▅▅▅▅"; now each is refused naming the tensor: on
// conversion (every weight, quant block scales included), at load (norms) and by verify.
TEST(ModelLimits, NanWeightsAreRefusedNamingTheTensor) {
  for (const std::string name : {"gguf-nan-norm", "gguf-inf-embedding", "gguf-nan-q8-scale", "hf-nan-norm", "llama2c-nan-norm"}) {
    const test::HostileModel& h = hostile().at(name);
    const test::CliRun r = test::run_p64(generate_args(h), "", 10, kFourGiB);
    EXPECT_EQ(r.status, 1) << name;
    EXPECT_NE(r.err.find(h.path + ": " + h.refusal), std::string::npos) << name << "\n" << r.err;
  }
  // A .p64 whose CRCs were made to match its NaN: load and verify both name the tensor.
  const test::HostileModel& p = hostile().at("p64-nan-norm");
  const test::CliRun gen = test::run_p64("generate --model " + p.path + " --backend cpu --threads 1 --tokens 2 --prompt t3", "", 10);
  EXPECT_EQ(gen.status, 1);
  EXPECT_NE(gen.err.find(p.refusal), std::string::npos) << gen.err;
  const P64VerifyReport v = verify_p64(p.path);
  EXPECT_FALSE(v.ok);
  bool named = false;
  for (const auto& problem : v.problems) named |= problem.find(p.refusal) != std::string::npos;
  EXPECT_TRUE(named) << testing::PrintToString(v.problems);
}

TEST(ModelLimits, WriterRefusesNanWeightsAndLeavesNoFile) {
  test::TinyModel tiny = test::tiny_image();
  (*tiny.storage.back())[5] = std::numeric_limits<float>::quiet_NaN();  // token_embd.weight, added last
  tiny.image.source = "in-memory.gguf";
  test::TempDir out;
  const std::string e = test::error_of([&] { write_p64((out / "x.p64").string(), tiny.image); });
  EXPECT_EQ(e, "in-memory.gguf: tensor 'token_embd.weight' holds NaN or infinite values; a model with them decodes to garbage");
  EXPECT_EQ(test::names_in(out.path()), std::vector<std::string>{});
}

// RoPE and norm constants a decode divides by or raises to a power: NaN, negative, infinite,
// absurd, or a Llama 3 ramp that divides by zero. Refused when the hyperparameters are read,
// which every command does first (inspect included).
TEST(ModelLimits, BadRopeAndNormConstantsAreRefusedNamingTheKey) {
  for (const std::string name : {"gguf-rope-base-nan", "gguf-rope-base-negative", "gguf-rms-eps-inf", "gguf-rope-scaling-factor-1e30",
                                 "gguf-rope-freqs-zero", "hf-rope-theta-negative", "hf-rope-theta-1e39",
                                 "hf-rope-llama3-low-equals-high", "hf-head-dim-2147483648-llama3"}) {
    const test::HostileModel& h = hostile().at(name);
    const std::string e = test::error_of([&] { load_source_model(h.path); });
    EXPECT_NE(e.find(h.path), std::string::npos) << name << ": " << e;
    EXPECT_NE(e.find(h.refusal), std::string::npos) << name << ": " << e;
  }
  const test::CliRun r = test::run_p64("inspect " + hostile().at("gguf-rope-base-nan").path, "", 10, kFourGiB);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("p64: error: " + hostile().at("gguf-rope-base-nan").path + ": llama.rope.freq_base nan is not in [1, 1e+12]"),
            std::string::npos) << r.err;
}

TEST(ModelLimits, LimitsAreAboveEveryPublishedLlama) {
  // Llama 3.1 405B: 126 layers, width 16384, FFN 53248, 128 heads of 128, 128256 tokens, 131072
  // positions; Gemma: 256000 tokens. A limit below these would refuse a real model.
  EXPECT_GE(model_limit(ModelQuantity::Layers), 126u);
  EXPECT_GE(model_limit(ModelQuantity::Embedding), 16384u);
  EXPECT_GE(model_limit(ModelQuantity::FeedForward), 53248u);
  EXPECT_GE(model_limit(ModelQuantity::Heads), 128u);
  EXPECT_GE(model_limit(ModelQuantity::HeadDim), 256u);
  EXPECT_GE(model_limit(ModelQuantity::Vocab), 256000u);
  EXPECT_GE(model_limit(ModelQuantity::Context), 131072u);
  EXPECT_EQ(count_fits_problem("tensor count", 1000, 32, 32000), "");
  EXPECT_EQ(count_fits_problem("tensor count", 1000, 32, 31999),
            "tensor count 1000: that many entries of at least 32 bytes cannot fit in the 31999 bytes left");
}
