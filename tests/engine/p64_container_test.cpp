#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/common/error.h"
#include "engine/format/crc32c.h"
#include "engine/format/p64_reader.h"
#include "engine/format/p64_writer.h"
#include "p64_test_model.h"
#include "support/shared_files.h"

using namespace p64;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> read_all(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_all(const std::string& p, const std::vector<uint8_t>& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Recomputes a section's CRC and the header CRC after a deliberate edit, so the test reaches
// the checks behind the CRCs (dtype, shape) instead of stopping at the checksum.
void reseal(std::vector<uint8_t>& b, P64SectionKind kind) {
  for (uint32_t i = 0; i < kP64MaxSections; ++i) {
    uint8_t* e = b.data() + kP64SectionTableOffset + i * kP64SectionEntryBytes;
    uint32_t k;
    std::memcpy(&k, e, 4);
    if (k != static_cast<uint32_t>(kind)) continue;
    uint64_t off, size;
    std::memcpy(&off, e + 8, 8);
    std::memcpy(&size, e + 16, 8);
    uint32_t crc = crc32c(b.data() + off, size);
    std::memcpy(e + 24, &crc, 4);
  }
  uint32_t h = crc32c(b.data(), kP64HeaderCrcOffset);
  std::memcpy(b.data() + kP64HeaderCrcOffset, &h, 4);
}

std::string expect_refused(const std::string& path) {
  try {
    open_p64(path);
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(e.section()), std::string::npos);
    return e.section();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a FormatError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "accepted a damaged file";
  return "";
}

}  // namespace

TEST(P64Crc32c, KnownValueAndPathsAgree) {
  const char* s = "123456789";
  EXPECT_EQ(crc32c(s, 9), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(s, 9), 0xE3069283u);
  std::mt19937 rng(1);
  std::vector<uint8_t> buf(4099);
  for (auto& x : buf) x = static_cast<uint8_t>(rng());
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 1000u, 4099u}) EXPECT_EQ(crc32c(buf.data(), n), crc32c_portable(buf.data(), n)) << n;
  EXPECT_EQ(crc32c(buf.data() + 100, 3999, crc32c(buf.data(), 100)), crc32c(buf.data(), 4099));
}

TEST(P64Container, RoundTripKeepsEverything) {
  test::TempDir dir;
  test::TinyModel tiny = test::tiny_image();
  std::string path = (dir / "tiny.p64").string();
  P64WriteResult wr = write_p64(path, tiny.image);
  EXPECT_EQ(wr.certification_problem, "");
  EXPECT_EQ(fs::file_size(path), wr.file_size);

  auto model = open_p64(path);
  const HParams& hp = model->hparams();
  EXPECT_EQ(hp.n_embd, 32u);
  EXPECT_EQ(hp.n_head_kv, 2u);
  EXPECT_TRUE(hp.tied_output);
  EXPECT_EQ(model->vocab().tokens, tiny.image.vocab.tokens);
  EXPECT_EQ(model->vocab().scores, tiny.image.vocab.scores);
  EXPECT_EQ(model->vocab().chat_template, tiny.image.vocab.chat_template);
  EXPECT_EQ(model->vocab().bos_id, 1);
  ASSERT_EQ(model->tensors().size(), tiny.image.tensors.size());
  for (const auto& src : tiny.image.tensors) {
    const TensorView* t = model->find(src.name);
    ASSERT_NE(t, nullptr) << src.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % kP64DataAlignment, 0u);
    EXPECT_EQ(std::memcmp(t->data, src.data, t->bytes), 0) << src.name;
  }

  P64Contents c = inspect_p64(path);
  EXPECT_EQ(c.header.flags, p64_flags::kLayerMajor | p64_flags::kCertifiedDecodeProfile);
  EXPECT_EQ(c.tensors.front().name, "token_embd.weight");
  EXPECT_EQ(c.tensors[1].name, "blk.0.attn_norm.weight");
  EXPECT_EQ(c.tensors.back().name, "output_norm.weight");
  ASSERT_EQ(c.schedule.size(), hp.n_layer + 2);
  EXPECT_EQ(c.schedule[1].n_tensors, 9u);
  EXPECT_EQ(c.schedule[2].offset, c.schedule[1].offset + c.schedule[1].bytes + (kP64DataAlignment - c.tensors[9].bytes % kP64DataAlignment) % kP64DataAlignment);
  ASSERT_EQ(c.manifold.size(), hp.n_layer + 1);
  // Coordinate 0 of layer 1 is the RMS of blk.1.attn_q.weight; recompute it independently.
  const TensorView* q = model->find("blk.1.attn_q.weight");
  double s2 = 0;
  for (int64_t i = 0; i < q->elements(); ++i) {
    float x;
    std::memcpy(&x, q->data + i * 4, 4);
    s2 += double(x) * x;
  }
  EXPECT_NEAR(c.manifold[1].c[0], std::sqrt(s2 / q->elements()), 1e-6);
  EXPECT_NEAR(c.manifold[0].c[7], 1.0, 0.01);  // attn_norm mean
  EXPECT_GT(c.manifold[0].c[9], 2.0);          // Gaussian weights: kurtosis near 3
  EXPECT_LT(c.manifold[0].c[9], 4.0);
  EXPECT_EQ(c.manifold.back().id, kManifoldGlobalId);

  P64VerifyReport rep = verify_p64(path);
  EXPECT_TRUE(rep.ok) << (rep.problems.empty() ? "" : rep.problems[0]);
  EXPECT_EQ(rep.tensors_checked, tiny.image.tensors.size());
  EXPECT_TRUE(rep.manifold_recomputed);
}

TEST(P64Container, EveryCorruptionIsRefusedNamingTheSection) {
  test::TempDir dir;
  test::TinyModel tiny = test::tiny_image();
  std::string good_path = (dir / "good.p64").string();
  write_p64(good_path, tiny.image);
  const std::vector<uint8_t> good = read_all(good_path);
  P64Contents c = inspect_p64(good_path);
  std::string bad = (dir / "bad.p64").string();

  // Header bytes: every field byte of the fixed part and the section table, then a stride
  // through the reserved tail and the CRC. (Each case writes a file, so sample, do not sweep.)
  std::vector<size_t> header_bytes;
  for (size_t i = 0; i < 64 + 5 * kP64SectionEntryBytes; ++i) header_bytes.push_back(i);
  for (size_t i = 64 + 5 * kP64SectionEntryBytes; i < kP64HeaderBytes; i += 13) header_bytes.push_back(i);
  for (size_t i = kP64HeaderCrcOffset; i < kP64HeaderBytes; ++i) header_bytes.push_back(i);
  for (size_t i : header_bytes) {
    auto b = good;
    b[i] ^= 0x5A;
    write_all(bad, b);
    EXPECT_EQ(expect_refused(bad), "header") << "byte " << i;
  }
  // Bytes spread over every section, first and last included.
  for (const auto& s : c.sections) {
    const std::string name(p64_section_name(s.kind));
    std::vector<uint64_t> at = {0, s.size - 1};
    for (uint64_t i = 1; i < 40; ++i) at.push_back(s.size * i / 40);
    for (uint64_t i : at) {
      auto b = good;
      b[s.offset + i] ^= 0x01;
      write_all(bad, b);
      EXPECT_EQ(expect_refused(bad), name) << name << " byte " << i;
    }
  }
  // Samples of every tensor's data: open refuses, verify names the tensor.
  std::mt19937 rng(3);
  for (const auto& t : c.tensors) {
    for (int k = 0; k < 2; ++k) {
      auto b = good;
      uint64_t at = t.offset + rng() % t.bytes;
      b[at] ^= 0x80;
      write_all(bad, b);
      EXPECT_EQ(expect_refused(bad), "tensor data") << t.name;
      P64VerifyReport rep = verify_p64(bad);
      EXPECT_FALSE(rep.ok);
      bool named = false;
      for (const auto& p : rep.problems) named |= p.find("'" + t.name + "'") != std::string::npos;
      EXPECT_TRUE(named) << t.name;
    }
  }
  // Padding between tensors is not read by decode, but verify catches a change there.
  {
    auto b = good;
    b[c.tensors[0].offset + c.tensors[0].bytes + 5] = 1;
    write_all(bad, b);
    EXPECT_FALSE(verify_p64(bad).ok);
  }
  // Truncations: at every section boundary and every 997 bytes.
  std::vector<uint64_t> cuts = {0, 3, 4, 100, 511, 512};
  for (const auto& s : c.sections) cuts.insert(cuts.end(), {s.offset, s.offset + 1, s.offset + s.size - 1, s.offset + s.size});
  for (uint64_t at = 0; at < good.size(); at += 997) cuts.push_back(at);
  cuts.push_back(good.size() - 1);
  for (uint64_t cut : cuts) {
    std::vector<uint8_t> b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    write_all(bad, b);
    std::string sec = expect_refused(bad);
    EXPECT_FALSE(sec.empty()) << cut;
  }
  // Appended bytes.
  auto longer = good;
  longer.push_back(0);
  write_all(bad, longer);
  EXPECT_EQ(expect_refused(bad), "header");
}

TEST(P64Container, UnknownDtypeAndWrongShapeNameTheTensor) {
  test::TempDir dir;
  test::TinyModel tiny = test::tiny_image();
  std::string path = (dir / "m.p64").string();
  write_p64(path, tiny.image);
  P64Contents c = inspect_p64(path);
  const P64TensorEntry& q = c.tensors[2];
  ASSERT_EQ(q.name, "blk.0.attn_q.weight");
  auto b = read_all(path);
  uint32_t bogus = 99;
  std::memcpy(b.data() + q.entry_offset + 4 + q.name.size(), &bogus, 4);
  reseal(b, P64SectionKind::TensorDirectory);
  std::string bad = (dir / "bad.p64").string();
  write_all(bad, b);
  try {
    open_p64(bad);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.section(), "tensor directory");
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q.weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dtype"), std::string::npos) << e.what();
  }

  // A consistent file whose attn_k has the wrong number of rows for the hparams.
  test::TinyModel wrong = test::tiny_image();
  for (auto& t : wrong.image.tensors)
    if (t.name == "blk.1.attn_k.weight") t.ne[1] = 8;  // kv_dim is 16
  std::string wpath = (dir / "wrong.p64").string();
  P64WriteResult wr = write_p64(wpath, wrong.image);
  EXPECT_NE(wr.certification_problem.find("blk.1.attn_k.weight"), std::string::npos) << wr.certification_problem;
  try {
    open_p64(wpath);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.section(), "tensor directory");
    EXPECT_NE(std::string(e.what()).find("blk.1.attn_k.weight"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(verify_p64(wpath).ok);
}

TEST(P64Container, CancelledOrFailedWriteLeavesNothing) {
  test::TempDir dir;
  test::TinyModel tiny = test::tiny_image();
  std::string path = (dir / "c.p64").string();
  int calls = 0;
  EXPECT_THROW(write_p64(path, tiny.image, [&](double, std::string_view) { return ++calls < 5; }), Cancelled);
  EXPECT_TRUE(fs::is_empty(dir.path()));
  // A producer that throws midway: the old file at the path stays as it was.
  write_all(path, {1, 2, 3});
  tiny.image.tensors[3].data = nullptr;
  tiny.image.tensors[3].produce = [](uint8_t*, uint64_t) { throw Error("source failed"); };
  EXPECT_THROW(write_p64(path, tiny.image), Error);
  EXPECT_EQ(read_all(path), (std::vector<uint8_t>{1, 2, 3}));
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir.path())) n += e.is_regular_file();
  EXPECT_EQ(n, 1u);
}
