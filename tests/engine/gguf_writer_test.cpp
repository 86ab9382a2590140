// GgufWriter: files written here are read back with the project's GgufFile reader.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/gguf_writer.h"
#include "engine/quant/quant.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

namespace fs = std::filesystem;

// A row's bytes are a function of (tensor tag, row, byte) so any misplaced chunk shows.
uint8_t pattern(int tag, int64_t row, uint64_t i) { return static_cast<uint8_t>(tag * 31 + row * 7 + i * 13); }

GgufFillFn pattern_fill(int tag, uint64_t row_bytes) {
  return [=](uint8_t* dst, int64_t first, int64_t n) {
    for (int64_t r = 0; r < n; ++r)
      for (uint64_t i = 0; i < row_bytes; ++i) dst[r * row_bytes + i] = pattern(tag, first + r, i);
  };
}

size_t files_in(const fs::path& dir) {
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

TEST(GgufWriter, EveryMetadataTypeReadsBack) {
  test::TempDir dir;
  GgufWriter w;
  w.add_u8("t.u8", 250);
  w.add_i8("t.i8", -120);
  w.add_u16("t.u16", 65000);
  w.add_i16("t.i16", -32000);
  w.add_u32("t.u32", 4000000000u);
  w.add_i32("t.i32", -2000000000);
  w.add_u64("t.u64", 1ull << 60);
  w.add_i64("t.i64", -(1ll << 60));
  w.add_f32("t.f32", 0.15625f);
  w.add_f64("t.f64", -1e300);
  w.add_bool("t.bool", true);
  w.add_string("t.str", "llama \xe2\x96\x81 \xc4\xa0");
  w.add_string_array("t.strs", {"a", "", "<0x0A>", "\xc4\xa0the"});
  w.add_f32_array("t.f32s", {1.0f, -2.5f});
  w.add_i32_array("t.i32s", {1, -2, 3});
  w.add_u32_array("t.u32s", {7});
  std::vector<GgufValue> inners;
  for (int i = 0; i < 2; ++i) {
    std::vector<GgufValue> items;
    for (int j = 0; j <= i; ++j) {
      GgufValue item;
      item.type = GgufType::INT16;
      item.scalar = static_cast<int64_t>(-10 * i - j);
      items.push_back(item);
    }
    inners.push_back(gguf_array(GgufType::INT16, items));
  }
  w.add_value("t.nested", gguf_array(GgufType::ARRAY, inners));
  EXPECT_THROW(w.add_u8("t.u8", 1), Error);  // duplicate key

  const auto path = (dir / "meta.gguf").string();
  w.write(path);
  EXPECT_EQ(fs::file_size(path), w.file_size());
  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.metadata().size(), 17u);
  EXPECT_EQ(f.find("t.u8")->type, GgufType::UINT8);
  EXPECT_EQ(f.find("t.u8")->as_uint(), 250u);
  EXPECT_EQ(f.find("t.i8")->as_int(), -120);
  EXPECT_EQ(f.find("t.i8")->type, GgufType::INT8);
  EXPECT_EQ(f.find("t.u16")->as_uint(), 65000u);
  EXPECT_EQ(f.find("t.i16")->as_int(), -32000);
  EXPECT_EQ(f.get_u32("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_i32("t.i32"), -2000000000);
  EXPECT_EQ(f.find("t.u64")->as_uint(), 1ull << 60);
  EXPECT_EQ(f.find("t.i64")->as_int(), -(1ll << 60));
  EXPECT_EQ(f.find("t.i64")->type, GgufType::INT64);
  EXPECT_EQ(f.get_f32("t.f32"), 0.15625f);
  EXPECT_EQ(f.find("t.f64")->as_double(), -1e300);
  EXPECT_EQ(f.find("t.f64")->type, GgufType::FLOAT64);
  EXPECT_TRUE(f.get_bool("t.bool"));
  EXPECT_EQ(f.get_string("t.str"), "llama \xe2\x96\x81 \xc4\xa0");
  EXPECT_EQ(*f.get_string_array("t.strs"), (std::vector<std::string>{"a", "", "<0x0A>", "\xc4\xa0the"}));
  EXPECT_EQ(*f.get_f32_array("t.f32s"), (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(*f.get_i32_array("t.i32s"), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(f.find("t.u32s")->elem_type, GgufType::UINT32);
  const GgufValue& n = f.get_array("t.nested");
  ASSERT_EQ(n.elem_type, GgufType::ARRAY);
  ASSERT_EQ(n.size(), 2u);
  ASSERT_EQ(n.item(1).size(), 2u);
  EXPECT_EQ(n.item(1).elem_type, GgufType::INT16);
  EXPECT_EQ(n.item(1).item(1).as_int(), -11);
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufWriter, TensorsLandAlignedWithTheirBytes) {
  test::TempDir dir;
  for (uint32_t alignment : {32u, 64u, 4096u}) {
    GgufWriter w(alignment);
    w.add_string("general.architecture", "llama");
    struct Decl {
      const char* name;
      DType type;
      std::vector<int64_t> ne;
    };
    const std::vector<Decl> decls = {{"a.f32", DType::F32, {5}},          {"b.f16", DType::F16, {3, 7}},
                                     {"c.q8", DType::Q8_0, {64, 9}},      {"d.q4k", DType::Q4_K, {256, 3, 2}},
                                     {"e.q6k", DType::Q6_K, {512, 33}},   {"f.q50", DType::Q5_0, {96, 5}}};
    for (size_t i = 0; i < decls.size(); ++i)
      w.add_tensor(decls[i].name, decls[i].type, decls[i].ne,
                   pattern_fill(static_cast<int>(i), dtype_row_bytes(decls[i].type, decls[i].ne[0])));
    const auto path = (dir / ("t" + std::to_string(alignment) + ".gguf")).string();
    GgufWriteOptions opt;
    opt.threads = 4;
    opt.chunk_bytes = 300;  // many chunks per tensor, several rows in flight at once
    w.write(path, opt);
    EXPECT_EQ(fs::file_size(path), w.file_size());
    EXPECT_EQ(w.file_size() % alignment, 0u);
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.data_offset(), w.data_offset());
    EXPECT_EQ(f.data_offset() % alignment, 0u);
    ASSERT_EQ(f.tensors().size(), decls.size());
    for (size_t i = 0; i < decls.size(); ++i) {
      const GgufTensorInfo& t = f.tensors()[i];
      EXPECT_EQ(t.name, decls[i].name);
      EXPECT_EQ(t.dtype, decls[i].type);
      ASSERT_EQ(t.n_dims, decls[i].ne.size());
      for (size_t d = 0; d < decls[i].ne.size(); ++d) EXPECT_EQ(t.ne[d], decls[i].ne[d]);
      EXPECT_EQ(t.offset % alignment, 0u);
      const uint64_t rb = dtype_row_bytes(t.dtype, static_cast<uint64_t>(t.ne[0]));
      ASSERT_EQ(t.bytes, rb * static_cast<uint64_t>(t.elements() / t.ne[0]));
      for (uint64_t b = 0; b < t.bytes; ++b)
        ASSERT_EQ(t.data[b], pattern(static_cast<int>(i), static_cast<int64_t>(b / rb), b % rb)) << t.name << " byte " << b;
    }
  }
}

TEST(GgufWriter, QuantizedTensorDecodesAfterReading) {
  test::TempDir dir;
  GgufWriter w;
  std::vector<float> src(256 * 4);
  for (size_t i = 0; i < src.size(); ++i) src[i] = 0.01f * static_cast<float>(static_cast<int>(i % 37) - 18);
  w.add_tensor("w", DType::Q8_0, {256, 4}, [&](uint8_t* dst, int64_t first, int64_t n) {
    quantize_row(DType::Q8_0, src.data() + first * 256, dst, n * 256);
  });
  const auto path = (dir / "q.gguf").string();
  w.write(path);
  const GgufFile f = GgufFile::open(path);
  std::vector<float> y(src.size());
  dequantize_row(DType::Q8_0, f.tensors()[0].data, y.data(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < src.size(); ++i) ASSERT_NEAR(y[i], src[i], 0.18f / 127 * 0.57f);
}

TEST(GgufWriter, CancelAndFailureLeaveNothingBehind) {
  test::TempDir dir;
  const auto path = (dir / "out.gguf").string();
  { std::ofstream(path) << "previous contents"; }
  auto make = [](bool throw_in_fill) {
    auto w = std::make_unique<GgufWriter>();
    w->add_u32("k", 1);
    w->add_tensor("big", DType::F32, {1024, 64}, [throw_in_fill](uint8_t* dst, int64_t first, int64_t n) {
      if (throw_in_fill && first >= 32) throw Error("fill failed on purpose");
      std::memset(dst, 0, static_cast<size_t>(n) * 4096);
    });
    return w;
  };
  GgufWriteOptions cancel;
  cancel.chunk_bytes = 4096;
  cancel.threads = 2;
  cancel.progress = [](double, std::string_view) { return false; };
  EXPECT_THROW(make(false)->write(path, cancel), Cancelled);
  GgufWriteOptions plain;
  plain.chunk_bytes = 4096;
  EXPECT_THROW(make(true)->write(path, plain), Error);
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  EXPECT_TRUE(s == "previous contents") << "the target was overwritten";
  EXPECT_EQ(files_in(dir.path()), 1u) << "a temporary file was left behind";
  EXPECT_THROW(make(false)->write((dir / "no-such-dir" / "x.gguf").string()), Error);
}

TEST(GgufWriter, RefusesBadDeclarations) {
  GgufWriter w;
  auto fill = [](uint8_t*, int64_t, int64_t) {};
  EXPECT_THROW(w.add_tensor("x", DType::Q4_K, {960, 2}, fill), Error);   // 960 is not a multiple of 256
  EXPECT_THROW(w.add_tensor("x", DType::Q8_0, {32, 0}, fill), Error);
  EXPECT_THROW(w.add_tensor("x", DType::Q4_K_SOA, {256}, fill), Error);  // SoA forms are P64-only
  EXPECT_THROW(w.add_tensor(std::string(64, 'n'), DType::F32, {4}, fill), Error);
  EXPECT_THROW(w.add_tensor("x", DType::F32, {1, 2, 3, 4, 5}, fill), Error);
  w.add_tensor("x", DType::F32, {4}, fill);
  EXPECT_THROW(w.add_tensor("x", DType::F32, {4}, fill), Error);
  EXPECT_THROW(GgufWriter(48), Error);
}

}  // namespace
}  // namespace p64
