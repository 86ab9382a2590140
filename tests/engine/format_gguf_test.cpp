#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "engine/common/error.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "support/shared_files.h"

using namespace p64;

namespace {

// Builds GGUF bytes by hand so the reader is tested against the format, not against our writer.
struct GgufBytes {
  std::vector<uint8_t> b;
  template <class T>
  void put(T v) {
    size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  void kv_u32(const std::string& k, uint32_t v) { str(k); put<uint32_t>(4); put<uint32_t>(v); }
  void kv_str(const std::string& k, const std::string& v) { str(k); put<uint32_t>(8); str(v); }
  void header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    put<uint32_t>(0x46554747);
    put<uint32_t>(version);
    put<uint64_t>(n_tensors);
    put<uint64_t>(n_kv);
  }
  void pad(size_t align) {
    while (b.size() % align) b.push_back(0);
  }
};

std::string write_file(const test::TempDir& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  std::string p = (dir / name).string();
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return p;
}

// A small valid file: metadata of every scalar type, a nested array, one F32 tensor [4, 2].
std::vector<uint8_t> sample_gguf(uint32_t version, uint32_t tensor_type = 0, int64_t ne0 = 4) {
  GgufBytes g;
  g.header(version, 1, 5);
  g.kv_str("general.architecture", "llama");
  g.kv_u32("general.alignment", 64);
  g.str("test.f64");
  g.put<uint32_t>(12);
  g.put<double>(0.25);
  g.str("test.nested");  // array of 2 arrays of i16
  g.put<uint32_t>(9);
  g.put<uint32_t>(9);
  g.put<uint64_t>(2);
  for (int a = 0; a < 2; ++a) {
    g.put<uint32_t>(3);
    g.put<uint64_t>(3);
    for (int i = 0; i < 3; ++i) g.put<int16_t>(static_cast<int16_t>(a * 10 - i));
  }
  g.str("test.flag");
  g.put<uint32_t>(7);
  g.put<uint8_t>(1);
  g.str("w");
  g.put<uint32_t>(2);
  g.put<int64_t>(ne0);
  g.put<int64_t>(2);
  g.put<uint32_t>(tensor_type);
  g.put<uint64_t>(0);
  g.pad(64);
  for (int i = 0; i < 8; ++i) g.put<float>(static_cast<float>(i) * 0.5f);
  return g.b;
}

}  // namespace

TEST(FormatGguf, ReadsHandBuiltFileV2AndV3) {
  test::TempDir dir;
  for (uint32_t version : {2u, 3u}) {
    GgufFile f = GgufFile::open(write_file(dir, "v.gguf", sample_gguf(version)));
    EXPECT_EQ(f.version(), version);
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_DOUBLE_EQ(f.get_f32("test.f64"), 0.25f);
    EXPECT_TRUE(f.get_bool("test.flag"));
    const GgufValue& nested = f.get_array("test.nested");
    ASSERT_EQ(nested.size(), 2u);
    EXPECT_EQ(nested.elem_type, GgufType::ARRAY);
    EXPECT_EQ(nested.item(1).elem_type, GgufType::INT16);
    EXPECT_EQ(nested.item(1).item(2).as_int(), 8);
    EXPECT_FALSE(f.get_u32_opt("missing.key"));
    EXPECT_THROW(f.get_u32("general.architecture"), FormatError);  // wrong type is an error, not a default
    ASSERT_EQ(f.tensors().size(), 1u);
    const GgufTensorInfo& t = f.tensors()[0];
    EXPECT_EQ(t.ne[0], 4);
    EXPECT_EQ(t.ne[1], 2);
    EXPECT_EQ(t.bytes, 32u);
    EXPECT_EQ(f.data_offset() % 64, 0u);
    float last;
    std::memcpy(&last, t.data + 28, 4);
    EXPECT_FLOAT_EQ(last, 3.5f);
  }
}

TEST(FormatGguf, RefusesUnknownDtypeAndBadShapeNamingTheTensor) {
  test::TempDir dir;
  try {
    GgufFile::open(write_file(dir, "dt.gguf", sample_gguf(3, 77)));
    FAIL() << "unknown dtype accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.section(), "tensor info");
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
  try {  // Q8_0 rows must be a multiple of 32 elements
    GgufFile::open(write_file(dir, "sh.gguf", sample_gguf(3, 8, 4)));
    FAIL() << "bad row length accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.section(), "tensor info");
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
}

TEST(FormatGguf, RefusesEveryTruncationAndBadVersion) {
  test::TempDir dir;
  std::vector<uint8_t> good = sample_gguf(3);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<uint8_t> part(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    std::string p = write_file(dir, "t.gguf", part);
    try {
      GgufFile::open(p);
      ADD_FAILURE() << "truncated at " << cut << " accepted";
    } catch (const FormatError& e) {
      std::string s = e.section();
      EXPECT_TRUE(s == "header" || s == "metadata" || s == "tensor info" || s == "tensor data") << s;
    }
  }
  std::vector<uint8_t> v1 = good;
  v1[4] = 1;
  EXPECT_THROW(GgufFile::open(write_file(dir, "v1.gguf", v1)), FormatError);
  std::vector<uint8_t> huge = good;  // array count far beyond the file
  GgufBytes g;
  g.header(3, 0, 1);
  g.str("a");
  g.put<uint32_t>(9);
  g.put<uint32_t>(8);
  g.put<uint64_t>(uint64_t{1} << 60);
  EXPECT_THROW(GgufFile::open(write_file(dir, "huge.gguf", g.b)), FormatError);
}

TEST(FormatGguf, ReadsEverySharedGguf) {
  for (const char* name : {"stories260K.gguf", "llama-2-tiny-random.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"}) {
    SCOPED_TRACE(name);
    GgufFile f = GgufFile::open(test::shared_model(name).string());
    EXPECT_GE(f.version(), 2u);
    Vocabulary v = gguf_vocabulary(f);
    EXPECT_GT(v.size(), 0u);
    EXPECT_TRUE(v.scores.empty() || v.scores.size() == v.size());
    for (const auto& t : f.tensors()) EXPECT_NE(t.data, nullptr);
  }
}

TEST(FormatGguf, SharedModelsHaveTheirKnownShapes) {
  GgufFile s = GgufFile::open(test::shared_model("stories260K.gguf").string());
  HParams hp = gguf_hparams(s);
  EXPECT_EQ(hp.n_embd, 64u);
  EXPECT_EQ(hp.n_layer, 5u);
  EXPECT_EQ(hp.n_head, 8u);
  EXPECT_EQ(hp.n_head_kv, 4u);
  EXPECT_EQ(hp.n_ff, 172u);
  EXPECT_EQ(hp.n_vocab, 512u);
  EXPECT_EQ(hp.head_dim, 8u);
  EXPECT_EQ(s.tensors().size(), 48u);
  Vocabulary sv = gguf_vocabulary(s);
  EXPECT_EQ(sv.kind, TokenizerKind::SentencePiece);
  EXPECT_EQ(sv.size(), 512u);
  EXPECT_EQ(sv.bos_id, 1);
  EXPECT_EQ(sv.eos_id, 2);

  GgufFile r = GgufFile::open(test::shared_model("llama-2-tiny-random.gguf").string());
  Vocabulary rv = gguf_vocabulary(r);
  EXPECT_EQ(rv.size(), 32000u);
  EXPECT_EQ(rv.tokens[13], "<0x0A>");
  EXPECT_EQ(rv.type_of(13), TokenType::Byte);
  EXPECT_EQ(gguf_hparams(r).n_vocab, 32000u);

  GgufFile g = GgufFile::open(test::shared_model("ggml-vocab-gpt-2.gguf").string());
  Vocabulary gv = gguf_vocabulary(g);
  EXPECT_EQ(gv.kind, TokenizerKind::ByteLevelBPE);
  EXPECT_EQ(gv.size(), 50257u);
  EXPECT_EQ(gv.merges.size(), 50000u);
  EXPECT_FALSE(gv.add_space_prefix);
}
